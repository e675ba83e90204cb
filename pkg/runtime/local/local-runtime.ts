// The local runtime. A solo agent's worker is a process leading its own process group, so
// stopping it also stops the engine and any tool processes it started; a helper process starts
// them (spawner.ts), so that a fork never blocks the server's event loop. A squad's workers run
// under one group supervisor process (group-main.ts, kept by squad-groups.ts), which leads the
// squad's process group. Workspaces are directories under <dataDir>/workspaces/<namespace>/<name>
// (workspaces.ts). A worker's environment is worker-env.ts's. Every worker runs in
// the tool sandbox (sandbox.ts) when one is configured. Workers dial back over the control
// channel (../channel/hub.ts), which this runtime owns: it issues each worker's token, and the
// server's HTTP route reaches the channel only through `channel`. With a warm pool
// (warm-pool.ts), a new solo agent takes over a worker started ahead of it: its workspace is then
// a link to the slot's directory, and every later worker of the agent runs in the link's target.

import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type ObjectRef, refKey } from '../../api/meta.js';
import { componentLogger } from '../../observability/logger.js';
import { ChannelRuntime } from '../channel/channel-runtime.js';
import type { AgentRuntime, WorkerSpec, WorkerStatus } from '../runtime.js';
import type { LocalRuntimeOptions } from './local-options.js';
import { signalGroup } from './process-group.js';
import { killByEnvironment, killGroup } from './process-kill.js';
import { NO_SANDBOX, type Sandbox } from './sandbox.js';
import { type RemoteProcess, Spawner } from './spawner.js';
import { LocalCheckpoints } from './checkpoints.js';
import { type Member, SquadGroups } from './squad-groups.js';
import { slotSettings } from '../warm-pool.js';
import { type Slot, WarmPool } from './warm-pool.js';
import { clampNiceness, niced, WORKER_NICENESS, workerEnv, workerSecrets } from './worker-env.js';
import { forwardLogs, workerLogLines } from './worker-logs.js';
import { exists, Workspaces } from './workspaces.js';
import { ATTR_WARM } from '../../observability/trace-attributes.js';
import { annotateSpan } from '../../observability/tracing.js';

export type { LocalRuntimeOptions };
export { WORKER_NICENESS };

interface Solo {
  kind: 'solo';
  ref: ObjectRef;
  /** Started by the spawner (spawner.ts), not by the server itself. */
  child: RemoteProcess;
}

export class LocalRuntime extends ChannelRuntime implements AgentRuntime {
  readonly name = 'local';
  private readonly workers = new Map<string, Solo | Member>();
  /** What each worker was handed over IPC (diagnostics: `issuedSecrets`); replaced by its next worker. */
  private readonly issued = new Map<string, Record<string, string>>();
  private readonly spawner = new Spawner();
  private readonly pool?: WarmPool;
  private readonly dirs: Workspaces;
  private readonly squads: SquadGroups;
  readonly checkpoints: LocalCheckpoints;

  constructor(private readonly opts: LocalRuntimeOptions) {
    super(opts.logger, opts.channelLimits);
    this.dirs = new Workspaces(opts.dataDir, () => this.sandbox);
    this.checkpoints = new LocalCheckpoints(join(opts.dataDir, 'checkpoints'), this.dirs, (dir) => this.sandbox.prepare(dir));
    this.squads = new SquadGroups({
      logger: opts.logger,
      stopGraceMs: this.stopGraceMs,
      niceness: this.niceness(),
      forwardLogs: (child, fields) => forwardLogs(child, this.opts, fields),
      groupDir: (group) => this.dirs.groupDir(group),
      ended: (key, m, code, signal) => {
        if (this.workers.get(key) === m) this.workers.delete(key);
        this.exited(m.ref, code, signal);
      },
    });
    const size = Math.max(0, Math.trunc(opts.warmPool ?? 0));
    if (size > 0 && opts.model.rebind) {
      this.pool = new WarmPool({
        size,
        dir: this.dirs.poolDir,
        logger: componentLogger(opts.logger, 'warm-pool'),
        start: (ref, uid, dir) => this.startSlot(ref, uid, dir),
        stop: (slot) => this.stopSlot(slot),
        ...(opts.warmPoolMetrics ? { onReady: (n: number) => opts.warmPoolMetrics!.ready(n) } : {}),
      });
      this.hub.on('slotReady', (ref) => this.pool!.ready(ref));
    } else if (size > 0) opts.logger.warn('--warm-pool: this model credential issuer cannot re-bind credentials; no pool');
  }

  /**
   * Fills the warm pool (once workers can dial the server), after removing the directories of
   * slots an earlier run left unclaimed.
   */
  startPool(): void {
    this.pool?.start(this.dirs.claimedSlotDirs());
  }

  /** The warm pool's slots' process ids, started or ready (tests). */
  poolPids(): number[] {
    return this.pool?.pids() ?? [];
  }

  /** The warm pool's ready slots. */
  get poolReady(): number {
    return this.pool?.readyCount ?? 0;
  }

  // Diagnostics of this runtime's processes and directories (tests, benches); not part of
  // AgentRuntime, which says nothing about processes.

  private get sandbox(): Sandbox {
    return this.opts.sandbox ?? NO_SANDBOX;
  }

  /** The control token and model credential last handed to the agent's worker (tests look for them). */
  issuedSecrets(ref: ObjectRef): Readonly<Record<string, string>> | undefined {
    return this.issued.get(refKey(ref));
  }

  /** True when workers run inside the tool sandbox. */
  get sandboxed(): boolean {
    return this.opts.sandbox?.kind === 'bwrap';
  }

  /** The agent's workspace directory. */
  workspace(ref: ObjectRef): string {
    return this.dirs.workspace(ref);
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

  /** Groups that are up (have a supervisor process). */
  groups(): string[] {
    return this.squads.names();
  }

  /** The worker's process id (for a squad member, once its group's supervisor reported it). */
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
    // A new solo agent (no workspace yet) takes a warm-pool slot; a waking one, whose workspace
    // holds its session, and squad members start cold (docs/decisions.md "Warm pool").
    if (this.pool && !spec.group && !exists(this.workspace(spec.ref))) {
      const slot = this.pool.take();
      this.opts.warmPoolMetrics?.claim(slot ? 'hit' : 'miss');
      annotateSpan({ [ATTR_WARM]: slot !== undefined });
      if (slot && this.claim(spec, slot)) return;
    }
    const workspace = this.dirs.workspaceDir(spec.ref);
    // A fresh credential for this worker, bound to the agent's uid. An earlier worker's token and
    // connection (one that exited and whose socket is not closed yet) stop working now.
    this.hub.revoke(spec.ref);
    const token = this.hub.issueToken(spec.ref, spec.uid);
    const modelCredential = this.opts.model.issue(spec.ref, spec.uid);
    const env = this.workerEnv(spec, workspace);
    const secrets = workerSecrets(token, modelCredential);
    this.issued.set(key, secrets);
    const socket = this.workerSocket;
    const workerMain = this.opts.workerMain;
    const log = { namespace: spec.ref.namespace, name: spec.ref.name };
    const sandbox = this.sandbox;
    if (spec.group) {
      const groupDir = this.dirs.linkPeers(spec.group, spec.ref.namespace, spec.peers ?? []);
      env.AGENTPLANE_SQUAD_DIR = groupDir;
      // Peers are those known now: a member added later is visible to the others once they restart.
      const peers = (spec.peers ?? []).map((name) => this.workspace({ namespace: spec.ref.namespace, name }));
      const argv = sandbox.wrap([process.execPath, workerMain], { workspace, peers, groupDir, ...(socket ? { socket } : {}) });
      const member: Member = { kind: 'member', ref: spec.ref, group: spec.group };
      this.workers.set(key, member);
      this.squads.start(key, member, spec.ref.namespace, { argv, env, secrets, cwd: workspace });
      this.opts.logger.info({ ...log, group: spec.group }, 'worker started in group');
      return;
    }
    const argv = niced(sandbox.wrap([process.execPath, workerMain], { workspace, ...(socket ? { socket } : {}) }), this.niceness());
    const child = this.spawner.spawn(argv, { cwd: workspace, env, secrets, niceness: this.niceness() }, workerLogLines(this.opts, log));
    const solo: Solo = { kind: 'solo', ref: spec.ref, child };
    this.workers.set(key, solo);
    this.watchSolo(solo, modelCredential);
    this.opts.logger.info(log, 'worker started');
  }

  /**
   * Makes a warm-pool slot the agent's worker: the agent's workspace becomes a link to the
   * slot's directory (where the slot's engine keeps the session it started), the slot's model
   * credential and control connection are re-bound to the agent, and the worker is told. False
   * (the slot stopped) when the slot's connection went meanwhile.
   */
  private claim(spec: WorkerSpec, slot: Slot): boolean {
    const key = refKey(spec.ref);
    const link = this.workspace(spec.ref);
    mkdirSync(dirname(link), { recursive: true, mode: 0o700 });
    symlinkSync(slot.dir, link);
    // The credential first: once the hub reports the agent connected, a task may reach the model.
    if (this.opts.model.rebind?.(slot.ref, spec.ref, spec.uid)) {
      const solo: Solo = { kind: 'solo', ref: spec.ref, child: slot.child };
      this.workers.set(key, solo);
      this.issued.set(key, this.issued.get(refKey(slot.ref)) ?? {});
      this.watchSolo(solo, slot.credential);
      if (this.hub.assign(slot.ref, spec.ref, spec.uid)) {
        this.opts.logger.info(
          { namespace: spec.ref.namespace, name: spec.ref.name, slot: slot.ref.name, pid: slot.child.pid },
          'worker claimed from the warm pool',
        );
        return true;
      }
      this.workers.delete(key);
      this.opts.model.revoke(spec.ref);
    }
    rmSync(link, { force: true });
    this.opts.logger.warn({ slot: slot.ref.name }, 'warm pool: the slot was lost while claimed; starting cold');
    void this.stopSlot(slot).then(() => rmSync(slot.dir, { recursive: true, force: true }));
    return false;
  }

  private watchSolo(solo: Solo, modelCredential: string): void {
    const key = refKey(solo.ref);
    const { child } = solo;
    child.on('exit', (code: number | null, signal: NodeJS.Signals | null) => {
      if (this.workers.get(key) !== solo) return; // stopped on purpose
      // A worker that dies takes its tools with it (in the sandbox its PID namespace already has).
      signalGroup(child, 'SIGKILL');
      // Unsandboxed, the engine runs each Bash tool in a session of its own, out of the group's
      // reach: find them by the credential this incarnation alone had in its environment.
      if (!this.sandboxed) killByEnvironment(`ANTHROPIC_API_KEY=${modelCredential}`);
      this.workers.delete(key);
      this.exited(solo.ref, code, signal);
    });
  }

  /** A warm-pool slot's worker: like an agent's, with a slot token and the default engine settings. */
  private startSlot(ref: ObjectRef, uid: string, dir: string): { child: RemoteProcess; credential: string } {
    this.sandbox.prepare(dir);
    const token = this.hub.issueToken(ref, uid, { slot: true });
    const credential = this.opts.model.issue(ref, uid);
    const env = { ...this.workerEnv(undefined, dir), AGENTPLANE_PRESTART: JSON.stringify(slotSettings()) };
    const socket = this.workerSocket;
    const argv = niced(this.sandbox.wrap([process.execPath, this.opts.workerMain], { workspace: dir, ...(socket ? { socket } : {}) }), this.niceness());
    const secrets = workerSecrets(token, credential);
    this.issued.set(refKey(ref), secrets);
    const child = this.spawner.spawn(argv, { cwd: dir, env, secrets, niceness: this.niceness() }, workerLogLines(this.opts, { slot: ref.name }));
    return { child, credential };
  }

  private async stopSlot(slot: Slot): Promise<void> {
    this.hub.revoke(slot.ref);
    this.opts.model.revoke(slot.ref);
    this.issued.delete(refKey(slot.ref));
    await slot.child.started;
    await killGroup(slot.child, this.stopGraceMs);
    if (!this.sandboxed) killByEnvironment(`ANTHROPIC_API_KEY=${slot.credential}`);
  }

  async stop(ref: ObjectRef): Promise<void> {
    const key = refKey(ref);
    // The credentials go first: the worker's connection closes and cannot come back, and its
    // engine can no longer reach the model.
    this.hub.revoke(ref);
    this.opts.model.revoke(ref);
    this.issued.delete(key);
    const w = this.workers.get(key);
    if (!w) return;
    this.workers.delete(key);
    if (w.kind === 'solo') {
      await w.child.started;
      await killGroup(w.child, this.stopGraceMs);
    } else {
      await this.squads.stop(w, key);
    }
    this.opts.logger.info({ namespace: ref.namespace, name: ref.name }, 'worker stopped');
  }

  async remove(ref: ObjectRef): Promise<void> {
    await this.stop(ref);
    const workspace = this.workspace(ref);
    const slotDir = this.dirs.slotDirOf(workspace);
    removeTree(workspace);
    if (slotDir) removeTree(slotDir);
  }

  async close(): Promise<void> {
    await this.pool?.close();
    const grace = this.stopGraceMs;
    const solos = [...this.workers.values()].filter((w): w is Solo => w.kind === 'solo');
    this.workers.clear();
    await Promise.all([...solos.map(async (s) => (await s.child.started, killGroup(s.child, grace))), this.squads.close()]);
    this.spawner.close();
    this.hub.closeAll();
  }

  private niceness(): number {
    return clampNiceness(this.opts.niceness);
  }

  private get stopGraceMs(): number {
    return this.opts.stopGraceMs ?? 5000;
  }

  /** A worker's environment (worker-env.ts); a warm-pool slot's (no `spec`) names no agent. */
  private workerEnv(spec: WorkerSpec | undefined, workspace: string): Record<string, string> {
    return workerEnv(spec, workspace, { socket: this.workerSocket, channelUrl: this.opts.channelUrl, modelBaseUrl: this.opts.model.baseUrl() });
  }

  /** The server's worker socket, when workers are sandboxed with a network of their own. */
  private get workerSocket(): string | undefined {
    return this.sandboxed ? this.opts.workerSocket : undefined;
  }
}

/**
 * Removes a tree in which a directory may be read-only (an agent's .agentplane copies, or a
 * tool's chmod): a server that is the workspace's owner, not root, could not remove its entries.
 */
function removeTree(path: string): void {
  try {
    rmSync(path, { recursive: true, force: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EACCES') throw err;
    spawnSync('chmod', ['-R', 'u+rwx', path]);
    rmSync(path, { recursive: true, force: true });
  }
}
