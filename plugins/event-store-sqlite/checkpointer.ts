// Checkpoints the event database's write-ahead log off the event loop. With SQLite's automatic
// checkpoint, the commit that fills the log past 1,000 pages copies them all into the database
// file (and fsyncs both) before it returns: every few hundred events at 1,000 a second, a stall of
// several milliseconds for every event queued behind it. Here the server's connection never
// checkpoints (`wal_autocheckpoint = 0`) and a worker thread does it on its own connection
// (checkpoint-worker.ts). The log is reused from its start once a checkpoint has copied all of it,
// so it stays about as large as what is written between two checkpoints.

import { once } from 'node:events';
import { Worker } from 'node:worker_threads';

export interface CheckpointerSettings {
  file: string;
  intervalMs: number;
}

export type CheckpointerMessage = { type: 'checkpointed'; frames: number; walFrames: number } | { type: 'error'; message: string };

/** How often the log is checkpointed. */
export const CHECKPOINT_INTERVAL_MS = 500;

export class Checkpointer {
  private readonly worker: Worker;
  private exited = false;

  /** `onMessage`: each checkpoint that copied something, and each failure (tried again at the next tick). */
  constructor(file: string, onMessage: (m: CheckpointerMessage) => void, intervalMs = CHECKPOINT_INTERVAL_MS) {
    const settings: CheckpointerSettings = { file, intervalMs };
    this.worker = new Worker(new URL('./checkpoint-worker.js', import.meta.url), { workerData: settings });
    this.worker.unref(); // a server on its way out does not wait for it
    this.worker.on('message', onMessage);
    this.worker.on('error', (err) => onMessage({ type: 'error', message: err.message }));
    this.worker.on('exit', () => (this.exited = true));
  }

  /** Stops checkpointing; resolves once the thread closed its connection and exited. */
  async stop(): Promise<void> {
    if (this.exited) return;
    const exit = once(this.worker, 'exit');
    this.worker.postMessage('stop');
    await exit;
  }
}
