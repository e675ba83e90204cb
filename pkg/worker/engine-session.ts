// One long-lived engine session (the Claude Agent SDK in streaming-input mode): a single engine
// process whose input stays open between tasks, so each task is one more user message in the same
// conversation and reaches the model without starting a process, loading the SDK or replaying the
// session from disk. The session ends only when closed, when its settings change (the caller
// opens another that resumes it), or when the engine dies.

import { query, type Options, type Query, type SDKMessage, type SDKUserMessage } from '@anthropic-ai/claude-agent-sdk';
import type { TaskInput } from './task-input.js';

/**
 * The session's input: the inputs of its tasks, one after the other. A task's input ends when the
 * task does; the feed then waits for the next task's instead of ending, which keeps the engine up.
 */
export class SessionFeed implements AsyncIterable<SDKUserMessage> {
  /** The next task's input, not yet taken; the one being fed. */
  private current?: TaskInput;
  private feeding?: TaskInput;
  private wake?: () => void;
  private ended = false;

  /** Feeds the next task's messages into the session. */
  attach(input: TaskInput): void {
    this.current = input;
    this.wake?.();
  }

  /** Ends the input: the engine finishes what it has and exits. */
  end(): void {
    this.ended = true;
    this.current?.close();
    this.feeding?.close();
    this.wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<SDKUserMessage> {
    while (!this.ended) {
      const input = this.current;
      if (!input) {
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = undefined;
        continue;
      }
      this.current = undefined;
      this.feeding = input;
      for await (const msg of input) {
        if (this.ended) return;
        yield msg;
      }
      this.feeding = undefined;
    }
  }
}

/**
 * The SDK calls process.report.getReport() at every engine start, to tell musl from glibc, and a
 * report resolves the name of every open socket's addresses: a reverse DNS lookup of the
 * control channel's peer. Where the resolver does not answer (a pod whose DNS is unreachable,
 * egress-filtered DNS) each engine start waited for the resolver's timeout, 10 s in the test
 * cluster. The worker needs no report's network section: call this once at its start. (The
 * option is Node 22.13+ and not in the Node 20 typings this project builds against.)
 */
export function excludeNetworkFromReports(): void {
  (process.report as NodeJS.ProcessReport & { excludeNetwork: boolean }).excludeNetwork = true;
}

export class EngineSession {
  /** The engine's session id, once it has said it (resumed by the next session after a change). */
  sessionId?: string;
  readonly feed = new SessionFeed();
  private readonly q: Query;
  private readonly messages: AsyncIterator<SDKMessage>;
  private readonly abort = new AbortController();
  private dead = false;
  /** The engine's running total at its last result. */
  private costReported = 0;

  /**
   * @param key the settings the engine process was started with (see `Engine`); another key
   *   needs another session
   */
  constructor(
    readonly key: string,
    options: Omit<Options, 'abortController'>,
  ) {
    this.sessionId = options.resume;
    this.q = query({ prompt: this.feed, options: { ...options, abortController: this.abort } });
    this.messages = this.q[Symbol.asyncIterator]();
  }

  /** Resolves once the engine process answered the SDK's initialize request (up, waiting for input). */
  async initialized(): Promise<void> {
    await this.q.initializationResult();
  }

  get alive(): boolean {
    return !this.dead;
  }

  /** The engine's next message; done when the engine ended. A throw or an end kills the session. */
  async next(): Promise<IteratorResult<SDKMessage>> {
    try {
      const r = await this.messages.next();
      if (r.done) this.dead = true;
      else if ('session_id' in r.value && typeof r.value.session_id === 'string') this.sessionId = r.value.session_id;
      return r;
    } catch (err) {
      this.close();
      throw err;
    }
  }

  /**
   * What a result's `total_cost_usd` adds: the engine reports the session's running total, and a
   * warm session runs many tasks, so each task's cost is the difference.
   */
  costOf(result: { total_cost_usd: number }): number {
    const total = Number.isFinite(result.total_cost_usd) ? result.total_cost_usd : this.costReported;
    const added = Math.max(0, total - this.costReported);
    this.costReported = Math.max(this.costReported, total);
    return added;
  }

  /** Stops the running turn; the engine answers with the turn's result and keeps the session. */
  async interrupt(): Promise<void> {
    await this.q.interrupt();
  }

  /** Ends the engine process now. Idempotent. */
  close(): void {
    if (this.dead) return;
    this.dead = true;
    this.feed.end();
    this.abort.abort();
    this.q.close();
  }
}
