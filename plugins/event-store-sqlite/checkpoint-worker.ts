// Runs in a worker thread (checkpointer.ts): copies the event database's write-ahead log into the
// database file on a connection of its own, every `intervalMs`, so that the server's event loop,
// which commits the events, never waits for a checkpoint (several milliseconds, with its fsyncs).
// PASSIVE: it never blocks the writer, and copies only what no reader still needs.

import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

import type { CheckpointerMessage, CheckpointerSettings } from './checkpointer.js';

const { file, intervalMs } = workerData as CheckpointerSettings;
const port = parentPort!;
const post = (m: CheckpointerMessage): void => port.postMessage(m);

const db = new Database(file);

const timer = setInterval(() => {
  try {
    const [r] = db.pragma('wal_checkpoint(PASSIVE)') as { busy: number; log: number; checkpointed: number }[];
    if (r && r.checkpointed > 0) post({ type: 'checkpointed', frames: r.checkpointed, walFrames: r.log });
  } catch (err) {
    // A full disk or a locked file: tried again at the next tick.
    post({ type: 'error', message: err instanceof Error ? err.message : String(err) });
  }
}, intervalMs);

port.on('message', (m: unknown) => {
  if (m !== 'stop') return;
  clearInterval(timer);
  db.close();
  port.close(); // nothing keeps the thread alive: it exits
});
