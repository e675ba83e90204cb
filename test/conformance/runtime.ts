// Reusable conformance suite: every AgentRuntime must pass these cases (local processes,
// Kubernetes pods, the in-memory test runtime).
//
//   runtimeConformance('LocalRuntime', async () => ({ runtime, workspaceExists, ... }));
//
// The suite drives the runtime only through the AgentRuntime interface; what it cannot see
// through it (does a workspace or a group still exist, how to make a worker crash, which
// instructions make a task end or keep running) the fixture answers, so a runtime that keeps
// workspaces in volumes and groups in pods provides the same few functions.

import { expect } from 'chai';

import type { ObjectRef } from '../../pkg/api/meta.js';
import type { AgentRuntime, RuntimeEvent, TaskSpec, WorkerSpec } from '../../pkg/runtime/runtime.js';

/** A task without its id: the suite numbers tasks itself. */
export type TaskInstructions = Omit<TaskSpec, 'taskId'>;

export interface RuntimeFixture {
  runtime: AgentRuntime;
  /** Whether the agent's persistent workspace (directory, volume) exists. */
  workspaceExists(ref: ObjectRef): Promise<boolean>;
  /** Whether the group (a squad's pod) is up. */
  groupExists(group: string): Promise<boolean>;
  /** Makes the agent's running worker end by itself, abruptly (a kill, a container crash). */
  crash(ref: ObjectRef): Promise<void>;
  /** A task that completes on its own, soon. */
  quickTask(): TaskInstructions;
  /** A task that keeps running until it is cancelled (well beyond the suite's waits). */
  longTask(): TaskInstructions;
  /** Ends everything the fixture started. */
  close(): Promise<void>;
}

export interface RuntimeConformanceOptions {
  /** How long to wait for a worker to become ready or a task to end; default 60 s. */
  waitMs?: number;
  /** How long to watch for an event that must not come; default 500 ms. */
  quietMs?: number;
}

const NS = 'conformance';
const ref = (name: string): ObjectRef => ({ namespace: NS, name });
const same = (a: ObjectRef, b: ObjectRef): boolean => a.namespace === b.namespace && a.name === b.name;
const TERMINAL = ['task_completed', 'task_cancelled', 'error'];

type EventOf<T extends RuntimeEvent['type']> = Extract<RuntimeEvent, { type: T }>;

/** Everything the runtime reported, with waits for what is to come. */
class Recorder {
  readonly events: RuntimeEvent[] = [];
  private readonly waiters = new Set<() => void>();
  readonly unsubscribe: () => void;

  constructor(
    runtime: AgentRuntime,
    private readonly waitMs: number,
  ) {
    this.unsubscribe = runtime.watch((ev) => {
      this.events.push(ev);
      for (const w of [...this.waiters]) w();
    });
  }

  /** The first event of `type` for `r` at index `from` or later that satisfies `pred`. */
  async next<T extends RuntimeEvent['type']>(type: T, r: ObjectRef, opts: { from?: number; pred?: (ev: EventOf<T>) => boolean } = {}): Promise<EventOf<T>> {
    const find = (): EventOf<T> | undefined =>
      this.events.slice(opts.from ?? 0).find((ev): ev is EventOf<T> => ev.type === type && same(ev.ref, r) && (opts.pred?.(ev as EventOf<T>) ?? true));
    const found = find();
    if (found) return found;
    return new Promise((resolve, reject) => {
      const check = (): void => {
        const ev = find();
        if (!ev) return;
        cleanup();
        resolve(ev);
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`no ${type} event for ${r.name} within ${this.waitMs} ms; got: ${this.describe()}`));
      }, this.waitMs);
      const cleanup = (): void => {
        clearTimeout(timer);
        this.waiters.delete(check);
      };
      this.waiters.add(check);
    });
  }

  of<T extends RuntimeEvent['type']>(type: T, r: ObjectRef, from = 0): EventOf<T>[] {
    return this.events.slice(from).filter((ev): ev is EventOf<T> => ev.type === type && same(ev.ref, r));
  }

  /** The task events of `r`'s task `taskId`, in order. */
  taskEvents(r: ObjectRef, taskId: number): EventOf<'event'>[] {
    return this.of('event', r).filter((ev) => ev.taskId === taskId);
  }

  describe(): string {
    return this.events.map((ev) => `${ev.ref.name}:${ev.type === 'event' ? `${ev.taskId}/${ev.event.type}` : ev.type}`).join(', ');
  }
}

export function runtimeConformance(name: string, factory: () => Promise<RuntimeFixture>, opts: RuntimeConformanceOptions = {}): void {
  const waitMs = opts.waitMs ?? 60_000;
  const quietMs = opts.quietMs ?? 500;

  describe(`AgentRuntime conformance: ${name}`, function () {
    this.timeout(waitMs * 3);

    let f: RuntimeFixture;
    let rt: AgentRuntime;
    let rec: Recorder;

    beforeEach(async () => {
      f = await factory();
      rt = f.runtime;
      rec = new Recorder(rt, waitMs);
    });

    afterEach(async () => {
      rec.unsubscribe();
      await f.close();
    });

    const eventually = async (what: string, cond: () => Promise<boolean>): Promise<void> => {
      const deadline = Date.now() + waitMs;
      while (!(await cond())) {
        if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    };
    const quiet = (): Promise<void> => new Promise((r) => setTimeout(r, quietMs));

    /** Starts the worker and waits for its `ready`; returns its incarnation. */
    async function started(spec: WorkerSpec): Promise<string> {
      const from = rec.events.length;
      await rt.ensure(spec);
      await rec.next('ready', spec.ref, { from });
      const st = await rt.status(spec.ref);
      expect(st.phase, `${spec.ref.name} is Ready after its ready event`).to.equal('Ready');
      expect(st.incarnation, `${spec.ref.name} has an incarnation`).to.be.a('string').and.not.equal('');
      return st.incarnation!;
    }

    it('ensure starts a worker: Starting or Ready at once, then a ready event and Ready, solo', async () => {
      const solo = ref('solo');
      expect(await rt.status(solo)).to.deep.include({ phase: 'Absent', group: null });
      await rt.ensure({ ref: solo, uid: 'uid-solo' });
      const early = await rt.status(solo);
      expect(['Starting', 'Ready']).to.include(early.phase);
      const ready = await rec.next('ready', solo);
      expect(ready.runningTask, 'a fresh worker runs no task').to.equal(undefined);
      const st = await rt.status(solo);
      expect(st).to.deep.include({ phase: 'Ready', group: null });
      expect(st.runningTask).to.equal(undefined);
      expect(st.incarnation).to.be.a('string').and.not.equal('');
      expect(await f.workspaceExists(solo), 'ensure creates the workspace').to.equal(true);
    });

    it('without a ready worker, dispatch and cancel answer false and steer undefined', async () => {
      const none = ref('nobody');
      expect(await rt.dispatch(none, { taskId: 1, ...f.quickTask() })).to.equal(false);
      expect(await rt.cancel(none, 1, 'no one to ask')).to.equal(false);
      expect(await rt.steer(none, 1, 'hello?', 200)).to.equal(undefined);
      await quiet();
      expect(rec.of('event', none), 'nothing ran').to.deep.equal([]);
    });

    it('ensure and stop are idempotent; a stop is not an exit', async () => {
      const r = ref('twice');
      await Promise.all([rt.ensure({ ref: r, uid: 'uid-twice' }), rt.ensure({ ref: r, uid: 'uid-twice' })]);
      await rec.next('ready', r);
      const first = (await rt.status(r)).incarnation;
      await rt.ensure({ ref: r, uid: 'uid-twice' });
      await quiet();
      const again = await rt.status(r);
      expect(again.phase).to.equal('Ready');
      expect(again.incarnation, 'ensure on a running worker leaves it alone').to.equal(first);

      await rt.stop(r);
      await rt.stop(r);
      expect(await rt.status(r)).to.deep.include({ phase: 'Absent', group: null });
      await rt.stop(ref('never-started'));
      await rt.remove(ref('never-started'));
      await quiet();
      expect(rec.of('exited', r), 'a stopped worker is not reported as exited').to.deep.equal([]);
      expect(await f.workspaceExists(r), 'stop keeps the workspace').to.equal(true);
    });

    it('a dispatched task reports task_started … task_completed with the agent’s uid and the task id', async () => {
      const r = ref('quick');
      await started({ ref: r, uid: 'uid-quick-1' });
      expect(await rt.dispatch(r, { taskId: 7, ...f.quickTask() })).to.equal(true);
      const done = await rec.next('event', r, { pred: (ev) => ev.taskId === 7 && TERMINAL.includes(ev.event.type) });
      expect(done.event.type, rec.describe()).to.equal('task_completed');
      const evs = rec.taskEvents(r, 7);
      expect(evs[0].event.type).to.equal('task_started');
      expect(
        evs.filter((ev) => TERMINAL.includes(ev.event.type)),
        'one end',
      ).to.have.length(1);
      expect(evs.at(-1)!.event.type, 'nothing after the end').to.equal('task_completed');
      expect(new Set(evs.map((ev) => ev.uid))).to.deep.equal(new Set(['uid-quick-1']));
      expect(
        rec.of('event', r).filter((ev) => ev.taskId !== 7),
        'no events of other tasks',
      ).to.deep.equal([]);
      await eventually('the finished task is no longer running', async () => (await rt.status(r)).runningTask === undefined);
      expect((await rt.status(r)).phase).to.equal('Ready');
    });

    it('cancel ends a long task with task_cancelled; the worker stays Ready and takes the next task', async () => {
      const r = ref('long');
      const incarnation = await started({ ref: r, uid: 'uid-long' });
      expect(await rt.dispatch(r, { taskId: 3, ...f.longTask() })).to.equal(true);
      await rec.next('event', r, { pred: (ev) => ev.taskId === 3 && ev.event.type === 'task_started' });
      expect((await rt.status(r)).runningTask).to.equal(3);
      expect(await rt.cancel(r, 99, 'not that one'), 'cancel of a task the worker does not run').to.equal(false);
      expect(await rt.cancel(r, 3, 'enough')).to.equal(true);
      const end = await rec.next('event', r, { pred: (ev) => ev.taskId === 3 && TERMINAL.includes(ev.event.type) });
      expect(end.event).to.deep.include({ type: 'task_cancelled' });
      expect(end.event.payload).to.deep.equal({ reason: 'enough' });
      await eventually('the cancelled task is no longer running', async () => (await rt.status(r)).runningTask === undefined);
      const st = await rt.status(r);
      expect(st.phase).to.equal('Ready');
      expect(st.incarnation, 'cancel does not restart the worker').to.equal(incarnation);

      expect(await rt.dispatch(r, { taskId: 4, ...f.quickTask() })).to.equal(true);
      const next = await rec.next('event', r, { pred: (ev) => ev.taskId === 4 && TERMINAL.includes(ev.event.type) });
      expect(next.event.type).to.equal('task_completed');
      expect(rec.of('exited', r)).to.deep.equal([]);
    });

    it('a worker that crashes is reported exited; ensure then starts a new one', async () => {
      const r = ref('fragile');
      const before = await started({ ref: r, uid: 'uid-fragile' });
      await f.crash(r);
      const exited = await rec.next('exited', r);
      expect(exited.code !== null || exited.signal !== null, 'an exit code or a signal').to.equal(true);
      await eventually('the crashed worker is Absent', async () => (await rt.status(r)).phase === 'Absent');
      const after = await started({ ref: r, uid: 'uid-fragile' });
      expect(after, 'a new incarnation').to.not.equal(before);
      expect(await f.workspaceExists(r), 'the workspace survives the crash').to.equal(true);
    });

    it('a group gains and loses a member without restarting the other', async () => {
      const [a, b] = [ref('alpha'), ref('bravo')];
      const group = 'conformance-crew';
      const incA = await started({ ref: a, uid: 'uid-alpha', group, peers: ['alpha'] });
      expect(await rt.status(a)).to.deep.include({ group });
      expect(await f.groupExists(group)).to.equal(true);

      await started({ ref: b, uid: 'uid-bravo', group, peers: ['alpha', 'bravo'] });
      expect(await rt.status(b)).to.deep.include({ phase: 'Ready', group });
      expect(await rt.status(a), 'alpha untouched by bravo joining').to.deep.include({ phase: 'Ready', group, incarnation: incA });

      await rt.stop(b);
      expect(await rt.status(b)).to.deep.include({ phase: 'Absent', group: null });
      await quiet();
      expect(await rt.status(a), 'alpha untouched by bravo leaving').to.deep.include({ phase: 'Ready', group, incarnation: incA });
      expect(await f.groupExists(group), 'the group stays while a member runs').to.equal(true);
      expect(rec.of('exited', a).concat(rec.of('exited', b))).to.deep.equal([]);
      expect(rec.of('disconnected', a), 'alpha kept its connection').to.deep.equal([]);
    });

    it('when every member is stopped the group is gone and the workspaces are kept', async () => {
      const [a, b] = [ref('alpha'), ref('bravo')];
      const group = 'conformance-sleepers';
      await started({ ref: a, uid: 'uid-alpha', group, peers: ['alpha', 'bravo'] });
      await started({ ref: b, uid: 'uid-bravo', group, peers: ['alpha', 'bravo'] });
      await rt.stop(a);
      expect(await f.groupExists(group), 'one member still runs').to.equal(true);
      await rt.stop(b);
      for (const r of [a, b]) expect(await rt.status(r)).to.deep.include({ phase: 'Absent', group: null });
      expect(await f.groupExists(group), 'the group went with its last member').to.equal(false);
      for (const r of [a, b]) expect(await f.workspaceExists(r), `${r.name}'s workspace is kept`).to.equal(true);

      // Waking one member brings the group back.
      await started({ ref: b, uid: 'uid-bravo', group, peers: ['alpha', 'bravo'] });
      expect(await rt.status(b)).to.deep.include({ group });
      expect(await f.groupExists(group)).to.equal(true);
    });

    it('remove stops the worker and deletes the workspace; it is idempotent', async () => {
      const [r, asleep] = [ref('doomed'), ref('sleeper')];
      await started({ ref: r, uid: 'uid-doomed' });
      await started({ ref: asleep, uid: 'uid-sleeper' });
      await rt.stop(asleep);
      expect(await f.workspaceExists(r)).to.equal(true);
      expect(await f.workspaceExists(asleep)).to.equal(true);

      await rt.remove(r);
      expect(await rt.status(r)).to.deep.include({ phase: 'Absent', group: null });
      expect(await f.workspaceExists(r), 'removed with its worker').to.equal(false);
      await rt.remove(asleep);
      expect(await f.workspaceExists(asleep), 'removed while stopped').to.equal(false);
      await rt.remove(r);
      await quiet();
      expect(rec.of('exited', r).concat(rec.of('exited', asleep)), 'removal is not an exit').to.deep.equal([]);
    });
  });
}
