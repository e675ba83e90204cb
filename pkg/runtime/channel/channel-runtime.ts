// What every runtime whose workers dial the server shares: the control channel's hub, and the
// AgentRuntime verbs that only talk to a connected worker (dispatch, cancel, steer, compact) or report
// what workers say (watch). A runtime adds how workers are started, stopped and found.

import type { ObjectRef } from '../../api/meta.js';
import type { ApprovalHandover } from '../../api/worker-protocol.js';
import { componentLogger, type Logger } from '../../observability/logger.js';
import type { RuntimeEvent, TaskSpec } from '../runtime.js';
import { type WorkerChannel, WorkerHub } from './hub.js';
import type { ChannelLimits } from './limits.js';

export abstract class ChannelRuntime {
  protected readonly hub: WorkerHub;
  private readonly watchers = new Set<(ev: RuntimeEvent) => void>();

  constructor(
    private readonly runtimeLogger: Logger,
    channelLimits: Partial<ChannelLimits> = {},
  ) {
    this.hub = new WorkerHub(componentLogger(runtimeLogger, 'hub'), channelLimits);
    this.hub.on('connected', (ref, runningTask) => this.publish({ type: 'ready', ref, ...(runningTask !== undefined ? { runningTask } : {}) }));
    this.hub.on('disconnected', (ref) => this.publish({ type: 'disconnected', ref }));
    this.hub.on('event', (ref, uid, taskId, event) => this.publish({ type: 'event', ref, uid, taskId, event }));
  }

  /** The control channel's server side, for the HTTP route workers dial. */
  get channel(): WorkerChannel {
    return this.hub;
  }

  async dispatch(ref: ObjectRef, task: TaskSpec): Promise<boolean> {
    return this.hub.send(ref, { type: 'task', ...task });
  }

  async cancel(ref: ObjectRef, taskId: number, reason: string): Promise<boolean> {
    return this.hub.runningTask(ref) === taskId && this.hub.send(ref, { type: 'cancel', taskId, reason });
  }

  steer(ref: ObjectRef, taskId: number, content: string, timeoutMs: number): Promise<boolean | undefined> {
    return this.hub.steer(ref, taskId, content, timeoutMs);
  }

  compact(ref: ObjectRef, taskId: number, instructions: string | undefined, timeoutMs: number): Promise<boolean | undefined> {
    return this.hub.compact(ref, taskId, instructions, timeoutMs);
  }

  approve(ref: ObjectRef, taskId: number, decision: ApprovalHandover, timeoutMs: number): Promise<boolean | undefined> {
    return this.hub.approve(ref, taskId, decision, timeoutMs);
  }

  watch(fn: (ev: RuntimeEvent) => void): () => void {
    this.watchers.add(fn);
    return () => void this.watchers.delete(fn);
  }

  /** A worker ended by itself: logged with why, and reported. */
  protected exited(ref: ObjectRef, code: number | null, signal: string | null, why?: string): void {
    this.runtimeLogger.warn({ namespace: ref.namespace, name: ref.name, code, signal, ...(why ? { why } : {}) }, 'worker exited');
    this.publish({ type: 'exited', ref, code, signal });
  }

  protected publish(ev: RuntimeEvent): void {
    for (const fn of [...this.watchers]) {
      try {
        fn(ev);
      } catch (err) {
        this.runtimeLogger.error({ err }, 'runtime watcher failed');
      }
    }
  }
}
