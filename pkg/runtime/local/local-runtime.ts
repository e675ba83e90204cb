// The local runtime: each agent's worker is a child process in its own process group, so
// stopping it also stops the engine and any tool processes it started. Workspaces are
// directories under <dataDir>/workspaces/<namespace>/<name>.

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { type ObjectRef, refKey } from '../../api/meta.js';
import type { Logger } from '../../observability/logger.js';
import type { AgentRuntime, WorkerExit, WorkerSpec } from '../runtime.js';

export interface LocalRuntimeOptions {
  dataDir: string;
  logger: Logger;
  /** The model endpoint and credential handed to workers (never to clients). */
  modelEnv: { apiKey?: string; baseUrl?: string };
  /** Grace period between SIGTERM and SIGKILL. */
  stopGraceMs?: number;
  /** Where workers' JSON log lines go; default the service's stdout. */
  logSink?: (line: string) => void;
}

const WORKER_MAIN = fileURLToPath(new URL('../../../cmd/agentplane-worker/main.js', import.meta.url));

export class LocalRuntime implements AgentRuntime {
  readonly name = 'local';
  private readonly procs = new Map<string, ChildProcess>();
  private readonly exitHandlers: ((e: WorkerExit) => void)[] = [];

  constructor(private readonly opts: LocalRuntimeOptions) {}

  workspace(ref: ObjectRef): string {
    return join(this.opts.dataDir, 'workspaces', ref.namespace, ref.name);
  }

  isRunning(ref: ObjectRef): boolean {
    return this.procs.has(refKey(ref));
  }

  async ensure(spec: WorkerSpec): Promise<void> {
    const key = refKey(spec.ref);
    if (this.procs.has(key)) return;
    const workspace = this.workspace(spec.ref);
    mkdirSync(workspace, { recursive: true, mode: 0o700 });
    const child = spawn(process.execPath, [WORKER_MAIN], {
      cwd: workspace,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      env: {
        PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
        ...(process.env.AGENTPLANE_LOG_LEVEL ? { AGENTPLANE_LOG_LEVEL: process.env.AGENTPLANE_LOG_LEVEL } : {}),
        AGENTPLANE_SERVER_URL: spec.serverUrl,
        AGENTPLANE_AGENT_TOKEN: spec.token,
        AGENTPLANE_NAMESPACE: spec.ref.namespace,
        AGENTPLANE_AGENT_NAME: spec.ref.name,
        AGENTPLANE_WORKSPACE: workspace,
        ...(this.opts.modelEnv.apiKey ? { ANTHROPIC_API_KEY: this.opts.modelEnv.apiKey } : {}),
        ...(this.opts.modelEnv.baseUrl ? { ANTHROPIC_BASE_URL: this.opts.modelEnv.baseUrl } : {}),
      },
    });
    this.procs.set(key, child);
    this.forwardLogs(child, spec.ref);
    child.on('exit', (code, signal) => {
      if (this.procs.get(key) !== child) return; // stopped on purpose
      this.procs.delete(key);
      this.opts.logger.warn({ namespace: spec.ref.namespace, name: spec.ref.name, code, signal }, 'worker exited');
      for (const fn of this.exitHandlers) fn({ ref: spec.ref, code, signal });
    });
    this.opts.logger.info({ namespace: spec.ref.namespace, name: spec.ref.name, pid: child.pid }, 'worker started');
  }

  async stop(ref: ObjectRef): Promise<void> {
    const key = refKey(ref);
    const child = this.procs.get(key);
    if (!child) return;
    this.procs.delete(key);
    await killGroup(child, this.opts.stopGraceMs ?? 5000);
    this.opts.logger.info({ namespace: ref.namespace, name: ref.name }, 'worker stopped');
  }

  async remove(ref: ObjectRef): Promise<void> {
    await this.stop(ref);
    rmSync(this.workspace(ref), { recursive: true, force: true });
  }

  onExit(fn: (e: WorkerExit) => void): void {
    this.exitHandlers.push(fn);
  }

  async close(): Promise<void> {
    await Promise.all([...this.procs.values()].map((c) => killGroup(c, this.opts.stopGraceMs ?? 5000)));
    this.procs.clear();
  }

  private forwardLogs(child: ChildProcess, ref: ObjectRef): void {
    // Worker lines are already JSON with namespace/name; stderr lines are wrapped so they are too.
    const sink = this.opts.logSink ?? ((l: string) => process.stdout.write(`${l}\n`));
    if (child.stdout) createInterface({ input: child.stdout }).on('line', sink);
    if (child.stderr) {
      const log = this.opts.logger.child({ namespace: ref.namespace, name: ref.name, stream: 'stderr' });
      createInterface({ input: child.stderr }).on('line', (l) => log.warn(l));
    }
  }
}

function killGroup(child: ChildProcess, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || !child.pid) return Promise.resolve();
  const pid = child.pid;
  return new Promise((resolve) => {
    const timer = setTimeout(() => signalGroup(pid, 'SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      // The group may hold tool processes that outlived the worker.
      signalGroup(pid, 'SIGKILL');
      resolve();
    });
    signalGroup(pid, 'SIGTERM');
  });
}

function signalGroup(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pid, sig);
  } catch {
    // already gone
  }
}
