// The local runtime. A solo agent's worker is a process leading its own process group, so
// stopping it also stops the engine and any tool processes it started; a helper process starts
// them (spawner.ts), so that a fork never blocks the server's event loop. A squad's workers run
// inside one pod supervisor process (pod-main.ts), which leads the squad's process group.
// Workspaces are directories under <dataDir>/workspaces/<namespace>/<name>. Every worker runs in
// the tool sandbox (sandbox.ts) when one is configured. Workers dial back over the control
// channel (../channel/hub.ts), which this runtime owns: it issues each worker's token, and the
// server's HTTP route reaches the channel only through `channel`. With a warm pool
// (warm-pool.ts), a new solo agent takes over a worker started ahead of it: its workspace is then
// a link to the slot's directory, and every later worker of the agent runs in the link's target.

import { type ChildProcess, spawn } from 'node:child_process';
import { lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { type ObjectRef, refKey } from '../../api/meta.js';
import { componentLogger, type Logger } from '../../observability/logger.js';
import { ChannelRuntime } from '../channel/channel-runtime.js';
import type { ChannelLimits } from '../channel/limits.js';
import type { AgentRuntime, ModelCredentialIssuer, WorkerSpec, WorkerStatus } from '../runtime.js';
import type { PodCommand, PodReport } from './pod-protocol.js';
import { noteStarted, signalGroup } from './process-group.js';
import { NO_SANDBOX, type Sandbox } from './sandbox.js';
import { type RemoteProcess, Spawner } from './spawner.js';
import { slotSettings } from '../warm-pool.js';
import { type Slot, WarmPool } from './warm-pool.js';

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
  /** The control channel's limits, where they differ from the defaults (a stand-in worker that outpaces any engine). */
  channelLimits?: Partial<ChannelLimits>;
  /** Where workers dial the control channel; known once the server listens. */
  channelUrl: () => string;
  /**
   * The server's worker socket (Unix): sandboxed workers get a network namespace of their own and
   * reach the server only through it (the control channel, the model proxy, the egress proxy).
   */
  workerSocket?: string;
  /**
   * How much nicer than the server workers run (0 to 19; default WORKER_NICENESS), so the API
   * keeps the CPU it needs while agents start and work (docs/decisions.md "Worker priority").
   */
  niceness?: number;
  /**
   * Workers kept started ahead of any agent for new solo agents to claim (0, the default: none).
   * Needs a model credential issuer that can `rebind`. docs/performance.md "Warm pool".
   */
  warmPool?: number;
  /** The warm pool's figures, as they change (Prometheus). */
  warmPoolMetrics?: { ready(n: number): void; claim(result: 'hit' | 'miss'): void };
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
  /** What each worker was handed over IPC (diagnostics: `issuedSecrets`); replaced by its next worker. */
  private readonly issued = new Map<string, Record<string, string>>();
  private readonly pods = new Map<string, Pod>();
  private readonly spawner = new Spawner();
  private readonly pool?: WarmPool;

  constructor(private readonly opts: LocalRuntimeOptions) {
    super(opts.logger, opts.channelLimits);
    const size = Math.max(0, Math.trunc(opts.warmPool ?? 0));
    if (size > 0 && opts.model.rebind) {
      this.pool = new WarmPool({
        size,
        dir: this.poolDir,
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
    this.pool?.start(this.claimedSlotDirs());
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
    // A new solo agent (no workspace yet) takes a warm-pool slot; a waking one, whose workspace
    // holds its session, and squad members start cold (docs/decisions.md "Warm pool").
    if (this.pool && !spec.group && !exists(this.workspace(spec.ref))) {
      const slot = this.pool.take();
      this.opts.warmPoolMetrics?.claim(slot ? 'hit' : 'miss');
      if (slot && this.claim(spec, slot)) return;
    }
    const workspace = this.workspaceDir(spec.ref);
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
      const groupDir = this.linkPeers(spec.group, spec.ref.namespace, spec.peers ?? []);
      env.AGENTPLANE_SQUAD_DIR = groupDir;
      // Peers are those known now: a member added later is visible to the others once they restart.
      const peers = (spec.peers ?? []).map((name) => this.workspace({ namespace: spec.ref.namespace, name }));
      const argv = sandbox.wrap([process.execPath, workerMain], { workspace, peers, groupDir, ...(socket ? { socket } : {}) });
      const pod = this.pods.get(spec.group) ?? this.startPod(spec.group, spec.ref.namespace);
      const member: Member = { kind: 'member', ref: spec.ref, group: spec.group };
      pod.members.set(key, member);
      this.workers.set(key, member);
      send(pod, { op: 'start', member: key, argv, env, secrets, cwd: workspace });
      this.opts.logger.info({ ...log, group: spec.group }, 'worker started in group');
      return;
    }
    const argv = niced(sandbox.wrap([process.execPath, workerMain], { workspace, ...(socket ? { socket } : {}) }), this.niceness());
    const child = this.spawner.spawn(argv, { cwd: workspace, env, secrets }, this.logLines(log));
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
        this.opts.logger.info({ namespace: spec.ref.namespace, name: spec.ref.name, slot: slot.ref.name, pid: slot.child.pid }, 'worker claimed from the warm pool');
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
    const child = this.spawner.spawn(argv, { cwd: dir, env, secrets }, this.logLines({ slot: ref.name }));
    return { child, credential };
  }

  private async stopSlot(slot: Slot): Promise<void> {
    this.hub.revoke(slot.ref);
    this.opts.model.revoke(slot.ref);
    this.issued.delete(refKey(slot.ref));
    await slot.child.started;
    await killGroup(slot.child, this.opts.stopGraceMs ?? 5000);
    if (!this.sandboxed) killByEnvironment(`ANTHROPIC_API_KEY=${slot.credential}`);
  }

  /**
   * The directory a cold-started worker of the agent runs in: its workspace, or where its
   * workspace links to when it claimed a warm-pool slot once (its engine's session files are
   * keyed by that path, so a later engine finds them only there).
   */
  private workspaceDir(ref: ObjectRef): string {
    const path = this.workspace(ref);
    const target = this.slotDirOf(path);
    if (target) return target;
    if (isLink(path)) rmSync(path, { force: true }); // a link to a slot directory that is gone
    mkdirSync(path, { recursive: true, mode: 0o700 });
    this.sandbox.prepare(path);
    return path;
  }

  /** The warm-pool directory `workspace` links to, if it is such a link. */
  private slotDirOf(workspace: string): string | undefined {
    if (!isLink(workspace)) return undefined;
    try {
      const target = realpathSync(workspace);
      return target.startsWith(realpathSync(this.poolDir) + sep) ? target : undefined;
    } catch {
      return undefined;
    }
  }

  /** Slot directories agents claimed: their workspaces' link targets. */
  private claimedSlotDirs(): Set<string> {
    const out = new Set<string>();
    const root = join(this.opts.dataDir, 'workspaces');
    for (const ns of safeReaddir(root)) {
      for (const name of safeReaddir(join(root, ns))) {
        const dir = this.slotDirOf(join(root, ns, name));
        if (dir) out.add(join(this.poolDir, dir.slice(dir.lastIndexOf(sep) + 1)));
      }
    }
    return out;
  }

  private get poolDir(): string {
    return join(this.opts.dataDir, 'pool');
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
      await killGroup(w.child, this.opts.stopGraceMs ?? 5000);
    } else {
      const pod = this.pods.get(w.group);
      if (pod) await this.stopMember(pod, w.group, key);
    }
    this.opts.logger.info({ namespace: ref.namespace, name: ref.name }, 'worker stopped');
  }

  async remove(ref: ObjectRef): Promise<void> {
    await this.stop(ref);
    const workspace = this.workspace(ref);
    const slotDir = this.slotDirOf(workspace);
    rmSync(workspace, { recursive: true, force: true });
    if (slotDir) rmSync(slotDir, { recursive: true, force: true });
  }

  async close(): Promise<void> {
    await this.pool?.close();
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
    noteStarted(child);
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
    this.sandbox.prepare(dir);
    const existing = new Set(readdirSync(dir));
    for (const name of existing) if (!peers.includes(name)) rmSync(join(dir, name), { force: true });
    for (const name of peers) {
      if (existing.has(name)) continue;
      const target = this.workspace({ namespace, name });
      mkdirSync(target, { recursive: true, mode: 0o700 });
      this.sandbox.prepare(target);
      symlinkSync(target, join(dir, name));
    }
    return dir;
  }

  private groupDir(group: string): string {
    return join(this.opts.dataDir, 'groups', group.replace(/[^a-z0-9-]+/g, '_'));
  }

  /**
   * A worker's environment; a warm-pool slot's (no `spec`) names no agent. No secret: its control
   * token and model credential go over the IPC channel (`secrets`), so they are in no process
   * environment a tool could read. A sandboxed worker reaches the server over its socket only.
   */
  private workerEnv(spec: WorkerSpec | undefined, workspace: string): Record<string, string> {
    const socket = this.workerSocket;
    const base = socket ? 'http://agentplane' : this.opts.channelUrl();
    return {
      PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
      ...(process.env.AGENTPLANE_LOG_LEVEL ? { AGENTPLANE_LOG_LEVEL: process.env.AGENTPLANE_LOG_LEVEL } : {}),
      AGENTPLANE_SERVER_URL: base,
      ...(socket ? { AGENTPLANE_SERVER_SOCKET: socket } : {}),
      AGENTPLANE_SECRETS: 'ipc',
      ...(spec ? { AGENTPLANE_NAMESPACE: spec.ref.namespace, AGENTPLANE_AGENT_NAME: spec.ref.name } : {}),
      AGENTPLANE_WORKSPACE: workspace,
      // The model proxy; the model key stays in the server.
      ANTHROPIC_BASE_URL: socket ? `${base}${new URL(this.opts.model.baseUrl()).pathname}` : this.opts.model.baseUrl(),
      ...(spec?.wakeIdle ? { AGENTPLANE_WAKE_IDLE: 'true' } : {}),
    };
  }

  /** The server's worker socket, when workers are sandboxed with a network of their own. */
  private get workerSocket(): string | undefined {
    return this.sandboxed ? this.opts.workerSocket : undefined;
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

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

function isLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

function safeReaddir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
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
  return new Promise((resolve) => {
    const timer = setTimeout(() => signalGroup(child, 'SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      // The group may hold tool processes that outlived the worker.
      signalGroup(child, 'SIGKILL');
      resolve();
    });
    signalGroup(child, 'SIGTERM');
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

/** What a worker gets over its IPC channel (cmd/agentplane-worker reads it before anything else). */
function workerSecrets(token: string, modelCredential: string): Record<string, string> {
  return { AGENTPLANE_AGENT_TOKEN: token, ANTHROPIC_API_KEY: modelCredential };
}
