// The local runtime. A solo agent's worker is a process leading its own process group, so
// stopping it also stops the engine and any tool processes it started; a helper process starts
// them (spawner.ts), so that a fork never blocks the server's event loop. A squad's workers run
// inside one pod supervisor process (pod-main.ts), which leads the squad's process group.
// Workspaces are directories under <dataDir>/workspaces/<namespace>/<name>. Every worker runs in
// the tool sandbox (sandbox.ts) when one is configured. Workers dial back over the control
// channel (../channel/hub.ts), which this runtime owns: it issues each worker's token, and the
// server's HTTP route reaches the channel only through `channel`.

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { type ObjectRef, refKey } from '../../api/meta.js';
import type { Logger } from '../../observability/logger.js';
import { ChannelRuntime } from '../channel/channel-runtime.js';
import type { AgentRuntime, ModelCredentialIssuer, WorkerSpec, WorkerStatus } from '../runtime.js';
import type { PodCommand, PodReport } from './pod-protocol.js';
import { NO_SANDBOX, type Sandbox } from './sandbox.js';
import { type RemoteProcess, Spawner } from './spawner.js';

export interface LocalRuntimeOptions {
  dataDir: string;
  logger: Logger;
  /**
   * The model proxy's endpoint and per-agent credentials: a worker gets only these, never the
   * model key (which stays in the server's proxy).
   */
  model: ModelCredentialIssuer;
  /** Grace period between SIGTERM and SIGKILL. */
  stopGraceMs?: number;
  /** Where workers' JSON log lines go; default the service's stdout. */
  logSink?: (line: string) => void;
  /** Confines each worker and its tools; default none. */
  sandbox?: Sandbox;
  /** Absolute path of the worker's entry script (cmd/agentplane-worker/main.js), run with node. */
  workerMain: string;
  /** Where workers dial the control channel; known once the server listens. */
  channelUrl: () => string;
  /**
   * How much nicer than the server workers run (0 to 19; default WORKER_NICENESS), so the API
   * keeps the CPU it needs while agents start and work (docs/decisions.md "Worker priority").
   */
  niceness?: number;
}

/** Workers (and squads' pod supervisors) run at this niceness above the server's. */
export const WORKER_NICENESS = 10;

/**
 * The command run through nice(1), so the exec'ed process and everything it starts (bubblewrap,
 * the worker, the tools) inherit the niceness from the first instruction: setting it after
 * spawn would race with the sandbox forking the worker.
 */
const niced = (argv: string[], n: number): string[] => (n > 0 ? ['nice', '-n', String(n), ...argv] : argv);

const POD_MAIN = fileURLToPath(new URL('./pod-main.js', import.meta.url));

interface Solo {
  kind: 'solo';
  ref: ObjectRef;
  /** Started by the spawner (spawner.ts), not by the server itself. */
  child: RemoteProcess;
}

interface Member {
  kind: 'member';
  ref: ObjectRef;
  group: string;
  pid?: number;
}

interface Pod {
  child: ChildProcess;
  members: Map<string, Member>;
  /** Resolvers waiting for a member's requested stop. */
  stopping: Map<string, () => void>;
}

export class LocalRuntime extends ChannelRuntime implements AgentRuntime {
  readonly name = 'local';
  private readonly workers = new Map<string, Solo | Member>();
  private readonly pods = new Map<string, Pod>();
  private readonly spawner = new Spawner();

  constructor(private readonly opts: LocalRuntimeOptions) {
    super(opts.logger);
  }

  // Diagnostics of this runtime's processes and directories (tests, benches); not part of
  // AgentRuntime, which says nothing about processes.

  /** True when workers run inside the tool sandbox. */
  get sandboxed(): boolean {
    return this.opts.sandbox?.kind === 'bwrap';
  }

  /** The agent's workspace directory. */
  workspace(ref: ObjectRef): string {
    return join(this.opts.dataDir, 'workspaces', ref.namespace, ref.name);
  }

  /** True while the agent has a worker process (connected or not). */
  isRunning(ref: ObjectRef): boolean {
    return this.workers.has(refKey(ref));
  }

  /** Where the worker runs: its group, null when solo, undefined when not running. */
  placement(ref: ObjectRef): string | null | undefined {
    const w = this.workers.get(refKey(ref));
    return w ? (w.kind === 'member' ? w.group : null) : undefined;
  }

  /** Groups that are up (have a pod process). */
  groups(): string[] {
    return [...this.pods.keys()];
  }

  /** The worker's process id (for a squad member, once its pod reported it). */
  pid(ref: ObjectRef): number | undefined {
    const w = this.workers.get(refKey(ref));
    return w?.kind === 'solo' ? w.child.pid : w?.pid;
  }

  async status(ref: ObjectRef): Promise<WorkerStatus> {
    const placement = this.placement(ref);
    if (placement === undefined) return { phase: 'Absent', group: null };
    const pid = this.pid(ref);
    const runningTask = this.hub.runningTask(ref);
    return {
      phase: this.hub.isConnected(ref) ? 'Ready' : 'Starting',
      group: placement,
      ...(runningTask !== undefined ? { runningTask } : {}),
      ...(pid !== undefined ? { incarnation: String(pid) } : {}),
    };
  }

  async ensure(spec: WorkerSpec): Promise<void> {
    const key = refKey(spec.ref);
    if (this.workers.has(key)) return;
    const workspace = this.workspace(spec.ref);
    mkdirSync(workspace, { recursive: true, mode: 0o700 });
    // A fresh credential for this worker, bound to the agent's uid. An earlier worker's token and
    // connection (one that exited and whose socket is not closed yet) stop working now.
    this.hub.revoke(spec.ref);
    const token = this.hub.issueToken(spec.ref, spec.uid);
    const modelCredential = this.opts.model.issue(spec.ref, spec.uid);
    const env = this.workerEnv(spec, workspace, token, modelCredential);
    const workerMain = this.opts.workerMain;
    const log = { namespace: spec.ref.namespace, name: spec.ref.name };
    const sandbox = this.opts.sandbox ?? NO_SANDBOX;
    if (spec.group) {
      const groupDir = this.linkPeers(spec.group, spec.ref.namespace, spec.peers ?? []);
      env.AGENTPLANE_SQUAD_DIR = groupDir;
      // Peers are those known now: a member added later is visible to the others once they restart.
      const peers = (spec.peers ?? []).map((name) => this.workspace({ namespace: spec.ref.namespace, name }));
      const argv = sandbox.wrap([process.execPath, workerMain], { workspace, peers, groupDir });
      const pod = this.pods.get(spec.group) ?? this.startPod(spec.group, spec.ref.namespace);
      const member: Member = { kind: 'member', ref: spec.ref, group: spec.group };
      pod.members.set(key, member);
      this.workers.set(key, member);
      send(pod, { op: 'start', member: key, argv, env, cwd: workspace });
      this.opts.logger.info({ ...log, group: spec.group }, 'worker started in group');
      return;
    }
    const argv = niced(sandbox.wrap([process.execPath, workerMain], { workspace }), this.niceness());
    const child = this.spawner.spawn(argv, { cwd: workspace, env }, this.logLines(log));
    const solo: Solo = { kind: 'solo', ref: spec.ref, child };
    this.workers.set(key, solo);
    child.on('exit', (code: number | null, signal: NodeJS.Signals | null) => {
      if (this.workers.get(key) !== solo) return; // stopped on purpose
      // A worker that dies takes its tools with it (in the sandbox its PID namespace already has).
      if (child.pid) signalGroup(child.pid, 'SIGKILL');
      // Unsandboxed, the engine runs each Bash tool in a session of its own, out of the group's
      // reach: find them by the credential this incarnation alone had in its environment.
      if (!this.sandboxed) killByEnvironment(`ANTHROPIC_API_KEY=${modelCredential}`);
      this.workers.delete(key);
      this.exited(spec.ref, code, signal);
    });
    this.opts.logger.info(log, 'worker started');
  }

  async stop(ref: ObjectRef): Promise<void> {
    const key = refKey(ref);
    // The credentials go first: the worker's connection closes and cannot come back, and its
    // engine can no longer reach the model.
    this.hub.revoke(ref);
    this.opts.model.revoke(ref);
    const w = this.workers.get(key);
    if (!w) return;
    this.workers.delete(key);
    if (w.kind === 'solo') {
      await w.child.started;
      await killGroup(w.child, this.opts.stopGraceMs ?? 5000);
    } else {
      const pod = this.pods.get(w.group);
      if (pod) await this.stopMember(pod, w.group, key);
    }
    this.opts.logger.info({ namespace: ref.namespace, name: ref.name }, 'worker stopped');
  }

  async remove(ref: ObjectRef): Promise<void> {
    await this.stop(ref);
    rmSync(this.workspace(ref), { recursive: true, force: true });
  }

  async close(): Promise<void> {
    const grace = this.opts.stopGraceMs ?? 5000;
    const solos = [...this.workers.values()].filter((w): w is Solo => w.kind === 'solo');
    this.workers.clear();
    const pods = [...this.pods.values()];
    this.pods.clear();
    await Promise.all([...solos.map(async (s) => (await s.child.started, killGroup(s.child, grace))), ...pods.map((p) => killGroup(p.child, grace))]);
    this.spawner.close();
    this.hub.closeAll();
  }

  private niceness(): number {
    return Math.min(19, Math.max(0, Math.trunc(this.opts.niceness ?? WORKER_NICENESS)));
  }

  private startPod(group: string, namespace: string): Pod {
    const [cmd, ...args] = niced([process.execPath, POD_MAIN], this.niceness());
    const child = spawn(cmd!, args, {
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      env: { PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin' },
    });
    const pod: Pod = { child, members: new Map(), stopping: new Map() };
    this.pods.set(group, pod);
    this.forwardLogs(child, { namespace, group });
    child.on('message', (r: PodReport) => this.onPodReport(pod, r));
    child.on('exit', (code, signal) => {
      if (this.pods.get(group) !== pod) return; // stopped on purpose
      this.pods.delete(group);
      for (const [key, m] of pod.members) {
        if (this.workers.get(key) === m) this.workers.delete(key);
        this.exited(m.ref, code, signal);
      }
    });
    this.opts.logger.info({ namespace, group, pid: child.pid }, 'group started');
    return pod;
  }

  private onPodReport(pod: Pod, r: PodReport): void {
    const m = pod.members.get(r.member);
    if (r.op === 'started') {
      if (m) m.pid = r.pid;
      return;
    }
    const done = pod.stopping.get(r.member);
    if (done) return done();
    if (!m) return;
    pod.members.delete(r.member);
    if (this.workers.get(r.member) === m) this.workers.delete(r.member);
    this.exited(m.ref, r.code, r.signal);
  }

  private async stopMember(pod: Pod, group: string, key: string): Promise<void> {
    pod.members.delete(key);
    const stopped = new Promise<void>((resolve) => pod.stopping.set(key, resolve));
    send(pod, { op: 'stop', member: key });
    const grace = (this.opts.stopGraceMs ?? 5000) + 1000;
    await Promise.race([stopped, new Promise((r) => setTimeout(r, grace).unref())]);
    pod.stopping.delete(key);
    if (pod.members.size === 0 && this.pods.get(group) === pod) {
      this.pods.delete(group);
      await killGroup(pod.child, this.opts.stopGraceMs ?? 5000);
      rmSync(this.groupDir(group), { recursive: true, force: true });
      this.opts.logger.info({ group }, 'group removed');
    }
  }

  /**
   * Members of a group read each other's workspaces through one shared directory of links,
   * <dataDir>/groups/<group>/<member> -> that member's workspace (as a pod mounts its members'
   * volumes). Links are only links: removing them never touches a workspace.
   */
  private linkPeers(group: string, namespace: string, peers: string[]): string {
    const dir = this.groupDir(group);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const existing = new Set(readdirSync(dir));
    for (const name of existing) if (!peers.includes(name)) rmSync(join(dir, name), { force: true });
    for (const name of peers) {
      if (existing.has(name)) continue;
      const target = this.workspace({ namespace, name });
      mkdirSync(target, { recursive: true, mode: 0o700 });
      symlinkSync(target, join(dir, name));
    }
    return dir;
  }

  private groupDir(group: string): string {
    return join(this.opts.dataDir, 'groups', group.replace(/[^a-z0-9-]+/g, '_'));
  }

  private workerEnv(spec: WorkerSpec, workspace: string, token: string, modelCredential: string): Record<string, string> {
    return {
      PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
      ...(process.env.AGENTPLANE_LOG_LEVEL ? { AGENTPLANE_LOG_LEVEL: process.env.AGENTPLANE_LOG_LEVEL } : {}),
      AGENTPLANE_SERVER_URL: this.opts.channelUrl(),
      AGENTPLANE_AGENT_TOKEN: token,
      AGENTPLANE_NAMESPACE: spec.ref.namespace,
      AGENTPLANE_AGENT_NAME: spec.ref.name,
      AGENTPLANE_WORKSPACE: workspace,
      // The model proxy and this agent's credential for it; the model key stays in the server.
      ANTHROPIC_BASE_URL: this.opts.model.baseUrl(),
      ANTHROPIC_API_KEY: modelCredential,
      ...(spec.wakeIdle ? { AGENTPLANE_WAKE_IDLE: 'true' } : {}),
    };
  }

  /** Where a solo worker's output lines go (relayed by the spawner). */
  private logLines(fields: Record<string, string>): { stdout(l: string): void; stderr(l: string): void } {
    const sink = this.opts.logSink ?? ((l: string) => process.stdout.write(`${l}\n`));
    const log = this.opts.logger.child({ ...fields, stream: 'stderr' });
    return { stdout: sink, stderr: (l) => log.warn(l) };
  }

  private forwardLogs(child: ChildProcess, fields: Record<string, string>): void {
    // Worker lines are already JSON with namespace/name; stderr lines are wrapped so they are too.
    const sink = this.opts.logSink ?? ((l: string) => process.stdout.write(`${l}\n`));
    lines(child.stdout, sink);
    const log = this.opts.logger.child({ ...fields, stream: 'stderr' });
    lines(child.stderr, (l) => log.warn(l));
  }
}

function lines(stream: Readable | null, fn: (line: string) => void): void {
  if (stream) createInterface({ input: stream }).on('line', fn);
}

function send(pod: Pod, cmd: PodCommand): void {
  if (pod.child.connected) pod.child.send(cmd);
}

/** A worker or pod process, whether this process or the spawner started it. */
type Proc = Pick<ChildProcess, 'pid' | 'exitCode' | 'signalCode'> & { once(event: 'exit', fn: () => void): unknown };

function killGroup(child: Proc, graceMs: number): Promise<void> {
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

/** SIGKILLs every process whose environment holds `entry` (NAME=value), as /proc shows them. */
function killByEnvironment(entry: string): void {
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d) || Number(d) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${d}/environ`, 'utf8').split('\0').includes(entry)) process.kill(Number(d), 'SIGKILL');
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
}

function signalGroup(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pid, sig);
  } catch {
    // already gone
  }
}
