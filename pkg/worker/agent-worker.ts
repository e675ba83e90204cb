// The worker side of the control channel: dial the server, say hello, run tasks one at a time
// in the agent's warm engine session, stream their events back, pass follow-ups (steer) into the
// running task, and interrupt the turn on cancel. Reconnects with backoff; events produced
// while disconnected are queued and flushed on reconnect, so none are lost.

import WebSocket from 'ws';
import type { EventDraft } from '../api/event.js';
import { capEventSize } from '../api/event-size.js';
import { randomUUID } from 'node:crypto';
import {
  MAX_EVENT_BYTES,
  type AnswerMessage,
  type ApprovalMessage,
  type AssignMessage,
  CONTROL_PATH,
  type PrestartSettings,
  type CallMessage,
  type ServerMessage,
  type SteerMessage,
  type CompactMessage,
  type TaskMessage,
  type WorkerMessage,
} from '../api/worker-protocol.js';
import type { Logger } from '../observability/logger.js';
import { Engine, type EngineEnv, WORKER_STOPPING } from './engine.js';
import { serverConnection } from './launch.js';
import { TaskInput } from './task-input.js';
import { TaskTrace } from './task-trace.js';

export interface WorkerOptions {
  serverUrl: string;
  /** The server's worker socket, in a sandbox whose network is its own (serverUrl's host is then unused). */
  socketPath?: string;
  token: string;
  engine: EngineEnv;
  logger: Logger;
  /** Give up when the server has been unreachable this long (ms). */
  giveUpAfterMs?: number;
  /** Started idle in a rebuilt squad group (AGENTPLANE_WAKE_IDLE): run nothing until told. */
  wakeIdle?: boolean;
  /**
   * A warm-pool slot (AGENTPLANE_PRESTART): start the engine with these settings now, before any
   * agent is assigned, so the first task skips the engine start-up.
   */
  prestart?: PrestartSettings;
}

/** How long an agentplane tool call waits for the server's answer (the server waits at most 15 s for a follow-up's hand-over). */
const CALL_TIMEOUT_MS = 60_000;

export class AgentWorker {
  private ws?: WebSocket;
  private running?: { taskId: number; abort: AbortController; done: Promise<void>; input: TaskInput };
  /** A task that arrived while the previous one was still settling (an interrupted turn ending). */
  private next?: { task: TaskMessage; input: TaskInput };
  private readonly outbox: WorkerMessage[] = [];
  private stopped = false;
  private lastConnected = Date.now();
  /** Whether a control channel was open before: the next hello says it resumes. */
  private everConnected = false;
  private readonly engine: Engine;
  /** The worker's log; names the agent once a slot is assigned one. */
  private log: Logger;
  /** agentplane tool calls relayed to the server, waiting for its answer, by id. */
  private readonly calls = new Map<string, (a: { isError: boolean; text: string }) => void>();

  constructor(private readonly opts: WorkerOptions) {
    this.log = opts.logger;
    this.engine = new Engine(opts.engine, opts.logger, (tool, input) => this.call(tool, input));
  }

  /**
   * A tool of the in-process agentplane MCP server (agentplane-tools.ts), relayed to the server,
   * which acts for this worker's agent. A call whose answer was lost with a connection ends as an
   * error after CALL_TIMEOUT_MS; the model reads it and may try again.
   */
  private call(tool: CallMessage['tool'], input: Record<string, unknown>): Promise<{ isError: boolean; text: string }> {
    const id = randomUUID();
    return new Promise((resolve) => {
      const timer = setTimeout(() => answer({ isError: true, text: 'agentplane did not answer in time; try again' }), CALL_TIMEOUT_MS);
      timer.unref();
      const answer = (a: { isError: boolean; text: string }): void => {
        clearTimeout(timer);
        this.calls.delete(id);
        resolve(a);
      };
      this.calls.set(id, answer);
      this.send({ type: 'call', id, tool, input });
    });
  }

  private onAnswer(msg: AnswerMessage): void {
    this.calls.get(msg.id)?.({ isError: msg.isError, text: msg.text });
  }

  start(): void {
    // A warm-pool slot dials only once its engine is up: its hello says it is claimable.
    if (this.opts.prestart) return void this.engine.prestart(this.opts.prestart).then(() => this.connect());
    // Tasks only ever come over the control channel, so an idle wake has nothing to re-run;
    // saying so in the log makes a rebuilt group easy to read.
    if (this.opts.wakeIdle) this.log.info('woken idle: waiting for a task');
    this.connect();
  }

  /** True while the control channel is open (a pod's readiness). */
  get connected(): boolean {
    return this.ws?.readyState === WebSocket.OPEN;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.running?.abort.abort(WORKER_STOPPING);
    await this.running?.done;
    this.engine.close();
    this.ws?.close();
  }

  private connect(): void {
    if (this.stopped) return;
    const url = new URL(CONTROL_PATH, this.opts.serverUrl).toString().replace(/^http/, 'ws');
    const ws = new WebSocket(url, { headers: { authorization: `Bearer ${this.opts.token}` }, ...serverConnection(this.opts.socketPath) });
    this.ws = ws;
    ws.on('open', () => {
      this.lastConnected = Date.now();
      this.log.info('control channel connected');
      const runningTaskId = this.next?.task.taskId ?? this.running?.taskId;
      ws.send(JSON.stringify({ type: 'hello', runningTaskId, ...(this.everConnected ? { resumed: true } : {}) } satisfies WorkerMessage));
      this.everConnected = true;
      this.flush();
    });
    // binaryType is ws's default, 'nodebuffer': every message arrives as one Buffer.
    ws.on('message', (data) => this.onMessage((data as Buffer).toString()));
    ws.on('error', (err) => this.log.warn({ err: err.message }, 'control channel error'));
    ws.on('close', (code) => {
      if (this.ws === ws) this.ws = undefined;
      if (this.stopped) return;
      if (code === 4401 || code === 4404) {
        // Revoked: the agent was stopped, put to sleep or deleted; this worker has no future. A
        // clean exit, so a pod's OnFailure policy leaves the container ended, not restarted.
        this.log.info({ code }, 'server revoked this worker; exiting');
        void this.stop().then(() => process.exit(0));
        return;
      }
      const giveUp = this.opts.giveUpAfterMs ?? 60_000;
      if (Date.now() - this.lastConnected > giveUp) {
        this.log.error('server unreachable; exiting');
        void this.stop().then(() => process.exit(1));
        return;
      }
      setTimeout(() => this.connect(), 250).unref();
    });
  }

  private onMessage(raw: string): void {
    let msg: ServerMessage;
    try {
      msg = JSON.parse(raw) as ServerMessage;
    } catch {
      this.log.warn('ignoring malformed control message');
      return;
    }
    if (msg.type === 'assign') this.onAssign(msg);
    else if (msg.type === 'task') this.onTask(msg);
    else if (msg.type === 'cancel') this.onCancel(msg.taskId, msg.reason);
    else if (msg.type === 'steer') this.onSteer(msg);
    else if (msg.type === 'compact') this.onCompact(msg);
    else if (msg.type === 'approval') this.onApproval(msg);
    else if (msg.type === 'answer') this.onAnswer(msg);
  }

  /** A decision on a tool call the running task held for approval; answered as a steer is. */
  private onApproval(msg: ApprovalMessage): void {
    const mine = this.running?.taskId === msg.taskId;
    const accepted = mine && this.engine.approvals.decide(msg.id, { decision: msg.decision, ...(msg.reason ? { reason: msg.reason } : {}) });
    this.send({ type: 'steered', id: msg.req, accepted });
  }

  /** This warm-pool slot now works for an agent: its log says which from here on. */
  private onAssign(msg: AssignMessage): void {
    this.log = this.opts.logger.child({ namespace: msg.namespace, name: msg.name });
    this.log.info('warm-pool slot assigned to this agent');
  }

  /** A follow-up for a task: taken while the task runs (or waits to); refused once it has ended. */
  private onSteer(msg: SteerMessage): void {
    const target = this.running?.taskId === msg.taskId ? this.running : this.next?.task.taskId === msg.taskId ? this.next : undefined;
    const accepted = target?.input.push(msg.content) ?? false;
    this.send({ type: 'steered', id: msg.id, accepted });
  }

  /** A compaction of a task's session: taken while the task runs (or waits to), as a follow-up is. */
  private onCompact(msg: CompactMessage): void {
    const target = this.running?.taskId === msg.taskId ? this.running : this.next?.task.taskId === msg.taskId ? this.next : undefined;
    this.send({ type: 'steered', id: msg.id, accepted: target?.input.compact(msg.instructions) ?? false });
  }

  private onCancel(taskId: number, reason: string): void {
    if (this.running?.taskId === taskId) this.running.abort.abort(reason);
    else if (this.next?.task.taskId === taskId) {
      this.next = undefined;
      this.send({ type: 'event', taskId, event: { type: 'task_cancelled', payload: { reason }, timestamp: new Date().toISOString() } });
    }
  }

  private onTask(task: TaskMessage, input = new TaskInput(task.instructions)): void {
    if (this.running?.taskId === task.taskId || this.next?.task.taskId === task.taskId) return; // resent after a reconnect
    if (this.running) {
      // A task is still settling (an interrupted turn ending); run this one right after.
      this.next = { task, input };
      return;
    }
    const abort = new AbortController();
    const bound = this.log.bindings() as { namespace?: string; name?: string };
    const spans = new TaskTrace(task, bound.namespace ?? '', bound.name ?? '');
    // The first event (task_started) tells the server the task span, so its model proxy parents the task's model requests on it.
    let traceparent = spans.traceparent;
    // Cut to the size the server stores (it would cut it too), so no event passes the channel's message limit.
    const emit = (event: EventDraft): void => {
      spans.observe(event);
      const msg: WorkerMessage = {
        type: 'event',
        taskId: task.taskId,
        event: { ...capEventSize(event, MAX_EVENT_BYTES), timestamp: new Date().toISOString() },
      };
      this.send(traceparent ? { ...msg, traceparent } : msg);
      traceparent = undefined;
    };
    const log = this.log.child({ taskId: task.taskId });
    const done = spans
      .with(() => {
        log.info('task started');
        return this.engine.run(task, emit, abort.signal, input).then((o) => log.info({ outcome: o.kind }, 'task ended'));
      })
      .catch((err: unknown) => log.error({ err: String(err) }, 'task crashed'))
      .finally(() => {
        spans.end('crashed');
        if (this.running?.taskId === task.taskId) this.running = undefined;
        const next = this.next;
        this.next = undefined;
        if (next && !this.stopped) this.onTask(next.task, next.input);
      });
    this.running = { taskId: task.taskId, abort, done, input };
  }

  private send(msg: WorkerMessage): void {
    this.outbox.push(msg);
    this.flush();
  }

  private flush(): void {
    const ws = this.ws;
    if (!ws || ws.readyState !== WebSocket.OPEN) return;
    while (this.outbox.length) ws.send(JSON.stringify(this.outbox.shift()));
  }
}
