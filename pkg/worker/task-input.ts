// The engine's input for one task in streaming-input mode: the task's prompt, then follow-ups
// sent while it runs (steering). It is fed into the agent's warm session (SessionFeed). The engine echoes each user message it takes into the
// conversation (--replay-user-messages), which is how the task knows whether a follow-up is
// still waiting for a turn of its own when a result arrives.

import { randomUUID } from 'node:crypto';
import type { SDKUserMessage } from '@anthropic-ai/claude-agent-sdk';

export class TaskInput implements AsyncIterable<SDKUserMessage> {
  private readonly queue: SDKUserMessage[] = [];
  /** Follow-ups pushed and not yet echoed by the engine. */
  private readonly unseen = new Set<string>();
  /** Follow-ups pushed before the task started reporting (see `onFollowUp`). */
  private early: string[] | undefined = [];
  private report?: (content: string) => void;
  private wake?: () => void;
  private closed = false;

  constructor(prompt: string) {
    this.enqueue(prompt);
  }

  /** Adds a follow-up; false once the task has ended, so the caller can start a new one instead. */
  push(content: string): boolean {
    if (this.closed) return false;
    this.unseen.add(this.enqueue(content));
    if (this.report) this.report(content);
    else this.early?.push(content);
    return true;
  }

  /**
   * Asks the engine to compact the session (its `/compact` command), after the turn in progress.
   * Held like a follow-up (the task ends only once the engine took it) but reported by the
   * engine's compaction, not as a user message. False once the task has ended.
   */
  compact(instructions?: string): boolean {
    if (this.closed) return false;
    this.unseen.add(this.enqueue(instructions ? `/compact ${instructions}` : '/compact'));
    return true;
  }

  /** Reports each follow-up (as a `user_message` event); ones pushed before this are reported now. */
  onFollowUp(report: (content: string) => void): void {
    this.report = report;
    this.early?.forEach(report);
    this.early = undefined;
  }

  /** The engine echoed a user message: it is in the conversation now. */
  seen(uuid: string | undefined): void {
    if (uuid) this.unseen.delete(uuid);
  }

  /** Whether a follow-up still waits to be taken in; the engine then runs another turn for it. */
  get pending(): boolean {
    return this.unseen.size > 0;
  }

  /** Drops what the engine has not taken yet (the task was cancelled). */
  discard(): void {
    this.queue.length = 0;
    this.unseen.clear();
  }

  /** Ends the task's input: later follow-ups are refused (the session's feed moves on). */
  close(): void {
    this.closed = true;
    this.wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<SDKUserMessage> {
    for (;;) {
      const next = this.queue.shift();
      if (next) {
        yield next;
        continue;
      }
      if (this.closed) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
  }

  private enqueue(content: string): string {
    const uuid = randomUUID();
    this.queue.push({ type: 'user', uuid, message: { role: 'user', content }, parent_tool_use_id: null });
    this.wake?.();
    return uuid;
  }
}
