// SQLite-backed EventStore (embedded mode). One table keyed by (uid, seq); seq is assigned
// atomically inside a better-sqlite3 transaction. A second table keeps, per (namespace, name),
// the highest seq ever assigned, and outlives deleteStream: a re-created agent's stream continues
// above it, so a seq never repeats for a name (a cursor from the old agent stays meaningful).
// With `maxEventsPerStream`, an append also deletes the stream's events more than that many seqs
// below the new one (the oldest), in the same transaction: a stream keeps at most that many.
//
// Group commit: appends made in the same turn of the event loop (the events every worker socket
// delivered in one read) are written in one transaction at the next setImmediate, or as soon as
// MAX_BATCH of them wait, in call order, and each append's promise resolves only once that
// transaction has committed. A commit is one WAL write, not one per event, and nothing is
// reported stored before it is. Every other call
// first writes the appends queued before it, so the store still behaves as if each call ran
// alone, in call order.

import Database from 'better-sqlite3';

import type { AgentEvent, EventDraft, EventType } from '../../pkg/api/event.js';
import type { EventStore, ListOptions, StreamRef } from '../../pkg/plugin/types.js';
import { Checkpointer, type CheckpointerMessage } from './checkpointer.js';
import { makeDatabasePrivate } from '../../pkg/plugin/private-file.js';

interface EventRow {
  seq: number;
  namespace: string;
  name: string;
  task: number;
  type: string;
  ts: string;
  payload: string;
}

const toEvent = (row: EventRow): AgentEvent => ({
  seq: row.seq,
  agentName: row.name,
  namespace: row.namespace,
  task: row.task,
  type: row.type as EventType,
  timestamp: row.ts,
  payload: JSON.parse(row.payload) as AgentEvent['payload'],
});

const COLUMNS = 'seq, namespace, name, task, type, ts, payload';
const INSERT_COLUMNS = ['uid', 'seq', 'namespace', 'name', 'task', 'type', 'ts', 'payload'];
/** One row's placeholders in an INSERT. */
const ROW = `(${INSERT_COLUMNS.map(() => '?').join(', ')})`;
/** Rows per multi-row INSERT: a statement call costs about as much as storing a row. */
const ROWS_PER_INSERT = 16;

/**
 * A batch is committed as soon as it holds this many appends, without waiting for the turn to
 * end: one read of a worker socket can carry thousands of events (libuv reads up to 2 MB per
 * turn), and holding them all until one big commit stalls their fan-out behind it. Committed
 * early, their promises settle at the end of the read that brought them, so storing and sending
 * overlap with reading the next data. Large enough that a commit is still shared by hundreds.
 */
export const MAX_BATCH = 256;

interface QueuedAppend {
  stream: StreamRef;
  draft: EventDraft;
  resolve: (ev: AgentEvent) => void;
  reject: (err: unknown) => void;
}

export class SqliteEventStore implements EventStore {
  private readonly db: Database.Database;
  private readonly nextSeqStmt: Database.Statement<[string, string, string], { next: number }>;
  private readonly markStmt: Database.Statement<[string, string, number]>;
  private readonly insertStmt: Database.Statement<unknown[]>;
  /** INSERT of ROWS_PER_INSERT rows at once: one statement call per 16 events, not per event. */
  private readonly insertManyStmt: Database.Statement<unknown[]>;
  private readonly listStmt: Database.Statement<[string, number], EventRow>;
  private readonly listBeforeStmt: Database.Statement<[string, number, number], EventRow>;
  private readonly sinceStmt: Database.Statement<[string, number], EventRow>;
  private readonly sinceMaxStmt: Database.Statement<[string, number, number], EventRow>;
  private readonly taskStartStmt: Database.Statement<[string, number], { first: number | null }>;
  private readonly lastSeqStmt: Database.Statement<[string], { last: number }>;
  private readonly deleteStmt: Database.Statement<[string]>;
  private readonly trimStmt: Database.Statement<[string, number]>;
  private readonly batchTx: (batch: readonly Pick<QueuedAppend, 'stream' | 'draft'>[]) => AgentEvent[];
  /** Appends waiting for the next group commit, in call order. */
  private queue: QueuedAppend[] = [];
  private flushTimer: NodeJS.Immediate | undefined;
  private closed = false;
  private readonly checkpointer?: Checkpointer;

  private readonly maxEventsPerStream: number | undefined;

  /**
   * `maxEventsPerStream`: events kept per stream (the newest); unbounded when absent.
   * `onCheckpoint`: told of each background checkpoint and each failure of one (checkpointer.ts).
   */
  constructor(filePath: string, opts: { maxEventsPerStream?: number; onCheckpoint?: (m: CheckpointerMessage) => void } = {}) {
    const max = opts.maxEventsPerStream;
    if (max !== undefined && !(Number.isInteger(max) && max >= 1)) throw new Error(`maxEventsPerStream must be a positive integer, got ${max}`);
    this.maxEventsPerStream = max;
    makeDatabasePrivate(filePath);
    this.db = new Database(filePath);
    // WAL is not available for in-memory databases (SQLite reports "memory"); harmless there.
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('busy_timeout = 5000');
    if (this.db.pragma('journal_mode', { simple: true }) === 'wal') {
      // Commits never checkpoint: a worker thread does, off the event loop (checkpointer.ts).
      this.db.pragma('wal_autocheckpoint = 0');
      this.checkpointer = new Checkpointer(filePath, opts.onCheckpoint ?? (() => undefined));
    }
    createSchema(this.db);

    this.nextSeqStmt = this.db.prepare(
      `SELECT MAX(
         COALESCE((SELECT last_seq FROM seq_marks WHERE namespace = ? AND name = ?), 0),
         COALESCE((SELECT MAX(seq) FROM events WHERE uid = ?), 0)
       ) + 1 AS next`,
    );
    this.markStmt = this.db.prepare(
      `INSERT INTO seq_marks (namespace, name, last_seq) VALUES (?, ?, ?)
       ON CONFLICT (namespace, name) DO UPDATE SET last_seq = MAX(last_seq, excluded.last_seq)`,
    );
    const insert = `INSERT INTO events (${INSERT_COLUMNS.join(', ')}) VALUES`;
    this.insertStmt = this.db.prepare(`${insert} ${ROW}`);
    this.insertManyStmt = this.db.prepare(`${insert} ${Array(ROWS_PER_INSERT).fill(ROW).join(', ')}`);
    this.listStmt = this.db.prepare(`SELECT ${COLUMNS} FROM events WHERE uid = ? ORDER BY seq DESC LIMIT ?`);
    this.listBeforeStmt = this.db.prepare(`SELECT ${COLUMNS} FROM events WHERE uid = ? AND seq < ? ORDER BY seq DESC LIMIT ?`);
    this.sinceStmt = this.db.prepare(`SELECT ${COLUMNS} FROM events WHERE uid = ? AND seq > ? ORDER BY seq ASC`);
    this.sinceMaxStmt = this.db.prepare(`SELECT ${COLUMNS} FROM events WHERE uid = ? AND seq > ? ORDER BY seq ASC LIMIT ?`);
    this.taskStartStmt = this.db.prepare('SELECT MIN(seq) AS first FROM events WHERE uid = ? AND task = ?');
    this.lastSeqStmt = this.db.prepare('SELECT COALESCE(MAX(seq), 0) AS last FROM events WHERE uid = ?');
    this.deleteStmt = this.db.prepare('DELETE FROM events WHERE uid = ?');
    this.trimStmt = this.db.prepare('DELETE FROM events WHERE uid = ? AND seq <= ?');

    // One batch, one transaction. The next seq of a name is read once per batch and counted on
    // from there; its mark and a stream's trim are written once per batch, with its last seq.
    this.batchTx = this.db.transaction((batch: readonly Pick<QueuedAppend, 'stream' | 'draft'>[]): AgentEvent[] => {
      const lastByName = new Map<string, { stream: StreamRef; seq: number }>();
      const lastByUid = new Map<string, number>();
      const rows: unknown[] = [];
      const events = batch.map(({ stream, draft }): AgentEvent => {
        const nameKey = `${stream.namespace}/${stream.name}`;
        let mark = lastByName.get(nameKey);
        if (!mark) lastByName.set(nameKey, (mark = { stream, seq: this.nextSeqStmt.get(stream.namespace, stream.name, stream.uid)!.next - 1 }));
        const seq = ++mark.seq;
        lastByUid.set(stream.uid, seq);
        const timestamp = draft.timestamp ?? new Date().toISOString();
        // The service sets the task; a draft without one is stored as task 0 (no task).
        const task = draft.task ?? 0;
        rows.push(stream.uid, seq, stream.namespace, stream.name, task, draft.type, timestamp, JSON.stringify(draft.payload));
        return { seq, agentName: stream.name, namespace: stream.namespace, task, type: draft.type, timestamp, payload: draft.payload };
      });
      const one = INSERT_COLUMNS.length;
      const many = one * ROWS_PER_INSERT;
      let at = 0;
      for (; at + many <= rows.length; at += many) this.insertManyStmt.run(rows.slice(at, at + many));
      for (; at < rows.length; at += one) this.insertStmt.run(rows.slice(at, at + one));
      for (const { stream, seq } of lastByName.values()) this.markStmt.run(stream.namespace, stream.name, seq);
      // Seqs of one stream are distinct, so this leaves at most `max` events (exactly the newest
      // `max` when its seqs are consecutive, as they are unless two streams of a name interleave).
      const max = this.maxEventsPerStream;
      if (max !== undefined) for (const [uid, seq] of lastByUid) if (seq > max) this.trimStmt.run(uid, seq - max);
      return events;
    });
  }

  /** Queued for the next group commit; resolves once the event is committed. */
  append(stream: StreamRef, draft: EventDraft): Promise<AgentEvent> {
    if (this.closed) return Promise.reject(new Error('the event store is closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ stream, draft, resolve, reject });
      if (this.queue.length >= MAX_BATCH) this.flush();
      else this.flushTimer ??= setImmediate(() => this.flush());
    });
  }

  /** Commits every queued append in one transaction and settles their promises in order. */
  private flush(): void {
    if (this.flushTimer) clearImmediate(this.flushTimer);
    this.flushTimer = undefined;
    const batch = this.queue;
    if (batch.length === 0) return;
    this.queue = [];
    let events: AgentEvent[];
    try {
      events = this.batchTx(batch);
    } catch (err) {
      if (batch.length === 1) return batch[0].reject(err);
      // The whole transaction rolled back: commit each on its own, so one bad append (say, a
      // payload that does not serialize) fails alone and the others keep their call order.
      for (const a of batch) {
        try {
          a.resolve(this.batchTx([a])[0]);
        } catch (e) {
          a.reject(e);
        }
      }
      return;
    }
    batch.forEach((a, i) => a.resolve(events[i]));
  }

  async list(stream: StreamRef, opts: ListOptions): Promise<AgentEvent[]> {
    this.flush();
    const limit = Math.max(0, Math.floor(opts.limit));
    if (limit === 0) return [];
    const rows = opts.before === undefined ? this.listStmt.all(stream.uid, limit) : this.listBeforeStmt.all(stream.uid, opts.before, limit);
    return rows.reverse().map(toEvent);
  }

  async since(stream: StreamRef, after: number, max?: number): Promise<AgentEvent[]> {
    this.flush();
    const rows = max === undefined ? this.sinceStmt.all(stream.uid, after) : this.sinceMaxStmt.all(stream.uid, after, Math.max(0, Math.floor(max)));
    return rows.map(toEvent);
  }

  async taskStart(stream: StreamRef, task: number): Promise<number | undefined> {
    this.flush();
    return this.taskStartStmt.get(stream.uid, task)?.first ?? undefined;
  }

  async lastSeq(stream: StreamRef): Promise<number> {
    this.flush();
    return this.lastSeqStmt.get(stream.uid)!.last;
  }

  async deleteStream(stream: StreamRef): Promise<void> {
    this.flush();
    this.deleteStmt.run(stream.uid);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.flush();
    this.closed = true;
    await this.checkpointer?.stop();
    this.db.close(); // the last connection: SQLite checkpoints what is left and removes the log
  }

  /** Whether the underlying database connection is still open. */
  get isOpen(): boolean {
    return this.db.open;
  }
}

/**
 * Makes the tables (events, and seq_marks: the high-water mark of seqs per name), bringing a
 * database written by an earlier version up to date.
 */
function createSchema(db: Database.Database): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS events (
      uid TEXT NOT NULL,
      seq INTEGER NOT NULL,
      namespace TEXT NOT NULL,
      name TEXT NOT NULL,
      task INTEGER NOT NULL DEFAULT 0,
      type TEXT NOT NULL,
      ts TEXT NOT NULL,
      payload TEXT NOT NULL,
      PRIMARY KEY (uid, seq)
    ) WITHOUT ROWID
  `);
  // Databases written before events carried a task number lack the column.
  const columns = db.prepare<[], { name: string }>('PRAGMA table_info(events)').all();
  if (!columns.some((c) => c.name === 'task')) {
    db.exec('ALTER TABLE events ADD COLUMN task INTEGER NOT NULL DEFAULT 0');
  }
  db.exec('CREATE INDEX IF NOT EXISTS events_task ON events (uid, task, seq)');
  // The high-water mark per name. A database written before it existed seeds it from the events
  // it holds (streams deleted before then are forgotten).
  const hadMarks = db.prepare<[], { n: number }>("SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'seq_marks'").get()!.n;
  db.exec(`
    CREATE TABLE IF NOT EXISTS seq_marks (
      namespace TEXT NOT NULL,
      name TEXT NOT NULL,
      last_seq INTEGER NOT NULL,
      PRIMARY KEY (namespace, name)
    ) WITHOUT ROWID
  `);
  if (!hadMarks) {
    db.exec('INSERT OR IGNORE INTO seq_marks SELECT namespace, name, MAX(seq) FROM events GROUP BY namespace, name');
  }
}
