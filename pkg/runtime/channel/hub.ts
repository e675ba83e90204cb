// The server side of the worker control channel, shared by the runtimes whose workers dial the
// server (local processes, pods). It issues per-agent tokens, accepts a worker's authenticated
// connection, forwards task/cancel/steer messages and hands the worker's events on. Only its
// runtime uses it; the HTTP route sees the narrow `WorkerChannel`, upgrades the request and
// calls `attach`.

import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type WebSocket from 'ws';
import { type EventDraft, isTerminal } from '../../api/event.js';
import { type ObjectRef, refKey } from '../../api/meta.js';
import type { ApprovalHandover, ApprovalMessage, CallMessage, CompactMessage, ServerMessage, SteerMessage, WorkerMessage } from '../../api/worker-protocol.js';
import { WorkerCloseCode } from '../../api/worker-protocol.js';
import type { Logger } from '../../observability/logger.js';
import { type ChannelLimits, DEFAULT_CHANNEL_LIMITS, MessageRate, TaskBudget } from './limits.js';
import { checkWorkerMessage } from './worker-input.js';
import { taskTraces } from '../../observability/task-traces.js';

/** What a worker's token entitles it to: speaking for one agent incarnation. */
export interface Grant {
  ref: ObjectRef;
  uid: string;
  token: string;
  /** A warm-pool slot's grant: no agent yet, so its connection is not reported as one. */
  slot?: boolean;
  /**
   * The newest task handed to this incarnation's worker (or, when this server handed none, the
   * one its worker said it runs on connecting): events of a later task are out of order.
   */
  lastTask?: number;
}

/** What the HTTP route needs: check a worker's bearer token, then hand over its socket. */
export interface WorkerChannel {
  /** The grant a bearer token belongs to; undefined for an unknown, revoked or missing token. */
  authenticate(token: string | undefined): Grant | undefined;
  /** Takes over the authenticated worker's WebSocket. */
  attach(ws: WebSocket, grant: Grant): void;
  /** Reports workers that reconnect (metrics). */
  on(event: 'resumed', fn: (ref: ObjectRef) => void): unknown;
  /** Serves the workers' tool calls (`call`); without a handler each is answered as not served. */
  serveCalls(handler: CallHandler): void;
}

/** Who calls: the agent incarnation the worker's token speaks for (never what the worker claims). */
export interface Caller {
  ref: ObjectRef;
  uid: string;
}

/** Answers a worker's tool call: the text the model reads, and whether it is an error. */
export type CallHandler = (caller: Caller, call: Pick<CallMessage, 'tool' | 'input'>) => Promise<{ isError: boolean; text: string }>;

/** Tool calls one connection may have in flight; more are answered at once with an error. */
export const MAX_CALLS_IN_FLIGHT = 4;

interface Conn {
  ws: WebSocket;
  grant: Grant;
  runningTaskId?: number;
  /** Steers awaiting the worker's answer, by id. */
  steers: Map<string, (accepted: boolean | undefined) => void>;
  /** The worker said hello on this connection (its first message, once). */
  greeted: boolean;
  /** Tool calls being answered. */
  calls: number;
  /** The server closed it for a breach: whatever was already read after is ignored. */
  refused: boolean;
  rate: MessageRate;
}

export interface HubEvents {
  connected: [ref: ObjectRef, runningTaskId: number | undefined];
  disconnected: [ref: ObjectRef];
  /** A worker that had a control channel before (to this replica or another) connected again. */
  resumed: [ref: ObjectRef];
  /** A warm-pool slot's worker said hello: it can be assigned to an agent. */
  slotReady: [slot: ObjectRef];
  event: [ref: ObjectRef, uid: string, taskId: number, event: EventDraft];
}

export class WorkerHub extends EventEmitter<HubEvents> implements WorkerChannel {
  private readonly grants = new Map<string, Grant>();
  private readonly conns = new Map<string, Conn>();
  /** What each agent's current task has stored so far, across its worker's connections. */
  private readonly budgets = new Map<string, TaskBudget>();
  /** Each agent's message bucket, shared by its connections: reconnecting does not refill it. */
  private readonly rates = new Map<string, MessageRate>();
  private readonly limits: ChannelLimits;
  private callHandler?: CallHandler;

  constructor(
    private readonly logger: Logger,
    limits: Partial<ChannelLimits> = {},
  ) {
    super();
    this.limits = { ...DEFAULT_CHANNEL_LIMITS, ...limits };
  }

  /**
   * A fresh token for the agent's next worker; earlier tokens stop working. With `slot`, a token
   * for a warm-pool slot (`ref` names the slot, not an agent) until `assign` hands it to an agent.
   */
  issueToken(ref: ObjectRef, uid: string, opts: { slot?: boolean } = {}): string {
    const token = randomBytes(32).toString('base64url');
    this.grants.set(refKey(ref), { ref, uid, token, ...(opts.slot ? { slot: true } : {}) });
    return token;
  }

  /**
   * Makes the connected slot `slot` the worker of the agent incarnation `uid`: its token and
   * connection now speak for the agent (the agent's earlier ones are revoked), the worker is told
   * (`assign`), and the agent is reported connected. False when the slot is not connected.
   */
  assign(slot: ObjectRef, ref: ObjectRef, uid: string): boolean {
    const slotKey = refKey(slot);
    const g = this.grants.get(slotKey);
    const conn = this.conns.get(slotKey);
    if (!g?.slot || conn?.grant !== g || conn.ws.readyState !== 1) return false;
    this.grants.delete(slotKey);
    this.conns.delete(slotKey);
    this.rates.delete(slotKey);
    this.revoke(ref);
    const grant: Grant = { ref: { namespace: ref.namespace, name: ref.name }, uid, token: g.token };
    this.grants.set(refKey(ref), grant);
    conn.grant = grant;
    this.conns.set(refKey(ref), conn);
    this.rates.set(refKey(ref), conn.rate);
    conn.ws.send(JSON.stringify({ type: 'assign', namespace: ref.namespace, name: ref.name, uid } satisfies ServerMessage));
    this.emit('connected', grant.ref, undefined);
    return true;
  }

  /**
   * Accepts `token` for the agent incarnation `uid` (a token the runtime stored with the worker,
   * such as a pod's Secret, read back after the server restarted). Replaces an earlier grant.
   */
  adopt(ref: ObjectRef, uid: string, token: string): void {
    const cur = this.grants.get(refKey(ref));
    if (cur?.uid === uid && cur.token === token) return;
    this.grants.set(refKey(ref), { ref: { namespace: ref.namespace, name: ref.name }, uid, token });
  }

  /** True while the agent has a grant (issued or adopted, not revoked). */
  hasGrant(ref: ObjectRef): boolean {
    return this.grants.has(refKey(ref));
  }

  /** Revokes the agent's token and closes its connection. */
  revoke(ref: ObjectRef): void {
    const key = refKey(ref);
    this.grants.delete(key);
    this.budgets.delete(key);
    this.rates.delete(key);
    this.conns.get(key)?.ws.close(4401, 'revoked');
    this.conns.delete(key);
  }

  /** The grant a bearer token belongs to, compared in constant time. */
  authenticate(token: string | undefined): Grant | undefined {
    if (!token) return undefined;
    const given = Buffer.from(token);
    for (const g of this.grants.values()) {
      const want = Buffer.from(g.token);
      if (want.length === given.length && timingSafeEqual(want, given)) return g;
    }
    return undefined;
  }

  attach(ws: WebSocket, grant: Grant): void {
    this.conns.get(refKey(grant.ref))?.ws.close(4409, 'replaced by a newer connection');
    const key = refKey(grant.ref);
    let rate = this.rates.get(key);
    if (!rate) this.rates.set(key, (rate = new MessageRate(this.limits)));
    const conn: Conn = { ws, grant, steers: new Map(), greeted: false, calls: 0, refused: false, rate };
    this.conns.set(refKey(grant.ref), conn);
    // Read through `conn.grant`: a slot's connection changes hands on `assign`.
    const log = (): Logger => this.logger.child({ namespace: conn.grant.ref.namespace, name: conn.grant.ref.name });
    ws.on('message', (data, isBinary) => {
      if (conn.refused) return;
      // Whatever a worker sends, a throw here would leave the listener and end the process: it
      // ends this connection instead.
      try {
        this.onMessage(conn, data, isBinary, log);
      } catch (err) {
        try {
          this.refuse(conn, log, WorkerCloseCode.internal, 'the server failed to handle a message', { err: String(err) });
        } catch {
          ws.terminate();
        }
      }
    });
    // ws's own refusals (a message over maxPayload: 1009, a broken frame) arrive here.
    ws.on('error', (err: Error & { code?: string }) => log().warn({ err: err.message, code: err.code }, 'worker channel error'));
    ws.on('close', () => {
      for (const answer of [...conn.steers.values()]) answer(undefined);
      const key = refKey(conn.grant.ref);
      if (this.conns.get(key) !== conn) return;
      this.conns.delete(key);
      if (conn.grant.slot) return;
      log().info('worker disconnected');
      this.emit('disconnected', conn.grant.ref);
    });
  }

  private onMessage(conn: Conn, data: WebSocket.RawData, isBinary: boolean, log: () => Logger): void {
    if (!conn.rate.take()) {
      return this.refuse(conn, log, WorkerCloseCode.flooding, 'too many messages', {
        perSecond: this.limits.messagesPerSecond,
        burst: this.limits.messageBurst,
      });
    }
    const checked = checkWorkerMessage(conn, data, isBinary, this.limits);
    if ('error' in checked) return this.refuse(conn, log, checked.code, checked.error);
    const msg: WorkerMessage = checked.message;
    const { ref, slot } = conn.grant;
    if (msg.type === 'hello') {
      conn.greeted = true;
      conn.runningTaskId = msg.runningTaskId;
      if (conn.grant.lastTask === undefined && msg.runningTaskId !== undefined) conn.grant.lastTask = msg.runningTaskId;
      if (slot) return void this.emit('slotReady', ref);
      if (msg.resumed) this.emit('resumed', ref);
      this.emit('connected', ref, msg.runningTaskId);
      // A task ended for its budget while another connection spoke for this worker: this one
      // still runs it, and is told to stop too.
      const budget = this.budgets.get(refKey(ref));
      if (budget?.over && budget.uid === conn.grant.uid && budget.taskId === msg.runningTaskId) {
        this.send(ref, { type: 'cancel', taskId: budget.taskId, reason: budget.exceededMessage() });
      }
    } else if (msg.type === 'event') {
      if (msg.traceparent) taskTraces.set(conn.grant.ref, msg.taskId, msg.traceparent);
      if (isTerminal(msg.event.type)) taskTraces.end(conn.grant.ref, msg.taskId);
      if (isTerminal(msg.event.type) && msg.taskId === conn.runningTaskId) conn.runningTaskId = undefined;
      this.account(conn, msg.taskId, msg.event, log);
    } else if (msg.type === 'call') {
      this.answerCall(conn, msg, log);
    } else {
      conn.steers.get(msg.id)?.(msg.accepted);
    }
  }

  serveCalls(handler: CallHandler): void {
    this.callHandler = handler;
  }

  /** Answers a tool call on the connection it came on, for the agent its token speaks for. */
  private answerCall(conn: Conn, msg: CallMessage, log: () => Logger): void {
    const answer = (a: { isError: boolean; text: string }): void => {
      if (conn.ws.readyState === 1) conn.ws.send(JSON.stringify({ type: 'answer', id: msg.id, ...a } satisfies ServerMessage));
    };
    if (!this.callHandler) return answer({ isError: true, text: 'this server serves no agentplane tools' });
    if (conn.calls >= MAX_CALLS_IN_FLIGHT) return answer({ isError: true, text: `at most ${MAX_CALLS_IN_FLIGHT} agentplane tool calls at once; try again` });
    conn.calls++;
    const caller: Caller = { ref: { ...conn.grant.ref }, uid: conn.grant.uid };
    void this.callHandler(caller, { tool: msg.tool, input: msg.input })
      .catch((err: unknown) => {
        log().error({ err: String(err), tool: msg.tool }, 'an agentplane tool call failed');
        return { isError: true, text: 'the server failed to handle the call' };
      })
      .then(answer)
      .finally(() => conn.calls--);
  }

  /**
   * Hands an event on within its task's budget. The event that would pass the budget ends the
   * task instead (`error{reason: TooManyEvents}`, as if the worker had reported it), the worker
   * is told to stop it, and later events of that task are dropped.
   */
  private account(conn: Conn, taskId: number, event: EventDraft, log: () => Logger): void {
    const { ref, uid } = conn.grant;
    const key = refKey(ref);
    let budget = this.budgets.get(key);
    if (!budget || budget.uid !== uid || budget.taskId !== taskId) {
      // An earlier task's straggler (its worker still settling it) neither resets the current
      // task's count nor matters: the agent controller drops events of a task that is not current.
      if (budget && budget.uid === uid && taskId < budget.taskId) return;
      budget = new TaskBudget(uid, taskId, this.limits);
      this.budgets.set(key, budget);
    }
    const verdict = budget.add(event);
    if (verdict === 'drop') return;
    if (verdict === 'too big') {
      return this.refuse(conn, log, WorkerCloseCode.invalid, `an event over ${this.limits.maxEventBytes} bytes that no cut of its strings brings under`);
    }
    if (verdict === 'exceeded') {
      const message = budget.exceededMessage();
      log().warn({ task: taskId, events: budget.events, bytes: budget.bytes }, 'task ended: its worker sent more events than a task may store');
      this.emit('event', ref, uid, taskId, { type: 'error', payload: { message, reason: 'TooManyEvents' }, timestamp: new Date().toISOString() });
      this.send(ref, { type: 'cancel', taskId, reason: message });
      return;
    }
    this.emit('event', ref, uid, taskId, verdict);
  }

  /** Closes the connection for a breach: logged with why, and nothing more is read from it. */
  private refuse(conn: Conn, log: () => Logger, code: number, why: string, extra: Record<string, unknown> = {}): void {
    conn.refused = true;
    log().warn({ code, why, ...extra }, 'closing a worker channel: the worker broke the protocol');
    // A close frame's reason holds at most 123 bytes.
    conn.ws.close(code, Buffer.from(why).subarray(0, 120).toString());
  }

  isConnected(ref: ObjectRef): boolean {
    return this.conns.has(refKey(ref));
  }

  /** The task the connected worker is running, if any. */
  runningTask(ref: ObjectRef): number | undefined {
    return this.conns.get(refKey(ref))?.runningTaskId;
  }

  /** Sends to a connected worker; false when it is not connected. */
  send(ref: ObjectRef, msg: ServerMessage): boolean {
    const conn = this.conns.get(refKey(ref));
    if (!conn || conn.ws.readyState !== 1) return false;
    if (msg.type === 'task') {
      conn.runningTaskId = msg.taskId;
      conn.grant.lastTask = Math.max(conn.grant.lastTask ?? 0, msg.taskId);
    }
    conn.ws.send(JSON.stringify(msg));
    return true;
  }

  /**
   * Sends a follow-up into the worker's task `taskId`. Resolves true when the task took it, false
   * when the task had already ended, undefined when the worker is not connected or did not
   * answer within `timeoutMs`.
   */
  steer(ref: ObjectRef, taskId: number, content: string, timeoutMs: number): Promise<boolean | undefined> {
    return this.ask(ref, (id) => ({ type: 'steer', id, taskId, content }), timeoutMs);
  }

  /** Asks the worker to compact its task's session; answered as a steer is (`steered`). */
  compact(ref: ObjectRef, taskId: number, instructions: string | undefined, timeoutMs: number): Promise<boolean | undefined> {
    return this.ask(ref, (id) => ({ type: 'compact', id, taskId, ...(instructions ? { instructions } : {}) }), timeoutMs);
  }

  /** Hands the worker a decision on one of its task's approvals; answered as a steer is (`steered`). */
  approve(ref: ObjectRef, taskId: number, d: ApprovalHandover, timeoutMs: number): Promise<boolean | undefined> {
    return this.ask(ref, (req) => ({ type: 'approval', req, taskId, ...d }), timeoutMs);
  }

  /** Sends a message the worker answers with `steered`; resolves with its answer (undefined: none in time). */
  private ask(ref: ObjectRef, message: (id: string) => SteerMessage | CompactMessage | ApprovalMessage, timeoutMs: number): Promise<boolean | undefined> {
    const conn = this.conns.get(refKey(ref));
    const id = randomUUID();
    if (!conn || !this.send(ref, message(id))) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const timer = setTimeout(() => answer(undefined), timeoutMs);
      const answer = (accepted: boolean | undefined): void => {
        clearTimeout(timer);
        conn.steers.delete(id);
        resolve(accepted);
      };
      conn.steers.set(id, answer);
    });
  }

  /** Connected agents' workers (warm-pool slots are no agent's). */
  get connectedCount(): number {
    let n = 0;
    for (const c of this.conns.values()) if (!c.grant.slot) n++;
    return n;
  }

  closeAll(): void {
    for (const c of this.conns.values()) c.ws.close(1001, 'server shutting down');
    this.conns.clear();
  }
}
