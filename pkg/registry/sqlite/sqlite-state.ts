// SQLite implementation of the generic store: one WAL database, one table of objects keyed by
// kind/namespace/name, a single resourceVersion counter for all kinds (like etcd's revision).

import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import Database from 'better-sqlite3';
import { alreadyExists, conflict, expired, notFound } from '../../api/errors.js';
import { asStorageError } from '../../api/storage-errors.js';
import { makeDatabasePrivate } from '../../plugin/private-file.js';
import { fromJson } from '../copy.js';
import type { ListFilter, ListResult, Store, StoredObject, WatchEvent, WatchOptions } from '../store.js';

/** Changes kept in memory per kind for watches that start from a resourceVersion. */
const WATCH_WINDOW = 1000;

/** A change as stored: watchers each get their own object parsed from `body`. */
interface Change {
  rv: number;
  type: WatchEvent<StoredObject>['type'];
  body: string;
}

interface Row {
  body: string;
}

/** What an update checks its preconditions against, without parsing the stored object. */
interface Version {
  rv: number;
  uid: string | null;
}

export class SqliteState {
  private readonly db: Database.Database;
  private readonly bus = new EventEmitter();
  /** Recent changes per kind, oldest first; `floor` is the newest rv that fell out of a window. */
  private readonly history = new Map<string, { changes: Change[]; floor: number }>();

  constructor(path: string) {
    makeDatabasePrivate(path);
    this.db = new Database(path);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('busy_timeout = 5000');
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS objects (
        kind TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL,
        rv INTEGER NOT NULL, body TEXT NOT NULL,
        PRIMARY KEY (kind, namespace, name)) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS revision (id INTEGER PRIMARY KEY CHECK (id = 1), rv INTEGER NOT NULL);
      INSERT OR IGNORE INTO revision (id, rv) VALUES (1, 0);
    `);
    this.bus.setMaxListeners(0);
  }

  store<T extends StoredObject>(kind: string): Store<T> {
    let h = this.history.get(kind);
    if (!h) {
      // Nothing before start-up is in memory: a watch from an older version must re-list.
      const rv = (this.db.prepare('SELECT rv FROM revision WHERE id = 1').get() as { rv: number }).rv;
      this.history.set(kind, (h = { changes: [], floor: rv }));
    }
    return new SqliteStore<T>(this.db, this.bus, kind, h);
  }

  close(): void {
    this.db.close();
  }
}

/** Runs `fn`, reporting a full disk, a read-only file or an I/O error as the API's 503. */
function guard<R>(fn: () => R): R {
  try {
    return fn();
  } catch (err) {
    throw asStorageError(err) ?? err;
  }
}

class SqliteStore<T extends StoredObject> implements Store<T> {
  private readonly sel: Database.Statement<[string, string, string], Row>;
  private readonly version: Database.Statement<[string, string, string], Version>;
  private readonly listAll: Database.Statement<[string], Row>;
  private readonly listNs: Database.Statement<[string, string], Row>;
  private readonly ins: Database.Statement<[string, string, string, number, string]>;
  private readonly upd: Database.Statement<[number, string, string, string, string]>;
  private readonly del: Database.Statement<[string, string, string]>;
  private readonly bump: Database.Statement<[], { rv: number }>;
  private readonly current: Database.Statement<[], { rv: number }>;

  constructor(
    private readonly db: Database.Database,
    private readonly bus: EventEmitter,
    private readonly kind: string,
    private readonly history: { changes: Change[]; floor: number },
  ) {
    this.sel = db.prepare('SELECT body FROM objects WHERE kind = ? AND namespace = ? AND name = ?');
    // SQLite's JSON reader finds the uid in C: a write need not build the old object in JS.
    this.version = db.prepare("SELECT rv, json_extract(body, '$.metadata.uid') AS uid FROM objects WHERE kind = ? AND namespace = ? AND name = ?");
    this.listAll = db.prepare('SELECT body FROM objects WHERE kind = ? ORDER BY namespace, name');
    this.listNs = db.prepare('SELECT body FROM objects WHERE kind = ? AND namespace = ? ORDER BY name');
    this.ins = db.prepare('INSERT INTO objects (kind, namespace, name, rv, body) VALUES (?, ?, ?, ?, ?)');
    this.upd = db.prepare('UPDATE objects SET rv = ?, body = ? WHERE kind = ? AND namespace = ? AND name = ?');
    this.del = db.prepare('DELETE FROM objects WHERE kind = ? AND namespace = ? AND name = ?');
    this.bump = db.prepare('UPDATE revision SET rv = rv + 1 WHERE id = 1 RETURNING rv');
    this.current = db.prepare('SELECT rv FROM revision WHERE id = 1');
  }

  async get(namespace: string, name: string): Promise<T | undefined> {
    return guard(() => this.read(namespace, name));
  }

  async list(filter: ListFilter = {}): Promise<ListResult<T>> {
    const tx = this.db.transaction(() => {
      const rows = filter.namespace ? this.listNs.all(this.kind, filter.namespace) : this.listAll.all(this.kind);
      return { rows, rv: this.current.get()!.rv };
    });
    const { rows, rv } = guard(tx);
    let items = rows.map((r) => JSON.parse(r.body) as T);
    const sel = filter.labelSelector;
    if (sel && Object.keys(sel).length > 0) {
      items = items.filter((o) => Object.entries(sel).every(([k, v]) => o.metadata.labels?.[k] === v));
    }
    return { items, resourceVersion: String(rv) };
  }

  async create(obj: T): Promise<T> {
    const { namespace, name } = obj.metadata;
    const body = guard(
      this.db.transaction(() => {
        if (this.sel.get(this.kind, namespace, name)) throw alreadyExists(this.kind, name);
        const rv = this.bump.get()!.rv;
        const meta = obj.metadata;
        const json = JSON.stringify({
          ...obj,
          metadata: {
            ...meta,
            uid: meta.uid || randomUUID(),
            resourceVersion: String(rv),
            creationTimestamp: meta.creationTimestamp || new Date().toISOString(),
          },
        });
        this.ins.run(this.kind, namespace, name, rv, json);
        return json;
      }),
    );
    return this.emit('ADDED', body);
  }

  async update(obj: T): Promise<T> {
    const { namespace, name } = obj.metadata;
    const body = guard(
      this.db.transaction(() => {
        const cur = this.version.get(this.kind, namespace, name);
        if (!cur) throw notFound(this.kind, name, namespace);
        if (cur.uid !== (obj.metadata.uid ?? null) || String(cur.rv) !== obj.metadata.resourceVersion) {
          throw conflict(`the object has been modified; please apply your changes to the latest version and try again`, { kind: this.kind, name });
        }
        const rv = this.bump.get()!.rv;
        const json = JSON.stringify({ ...obj, metadata: { ...obj.metadata, resourceVersion: String(rv) } });
        this.upd.run(rv, json, this.kind, namespace, name);
        return json;
      }),
    );
    return this.emit('MODIFIED', body);
  }

  async delete(namespace: string, name: string, pre: { resourceVersion?: string } = {}): Promise<T | undefined> {
    const removed = guard(
      this.db.transaction(() => {
        const cur = this.read(namespace, name);
        if (!cur) return undefined;
        if (pre.resourceVersion && pre.resourceVersion !== cur.metadata.resourceVersion) {
          throw conflict('the object has been modified; delete precondition failed', { kind: this.kind, name });
        }
        const rv = this.bump.get()!.rv;
        this.del.run(this.kind, namespace, name);
        cur.metadata.resourceVersion = String(rv);
        return JSON.stringify(cur);
      }),
    );
    return removed === undefined ? undefined : this.emit('DELETED', removed);
  }

  watch(fn: (ev: WatchEvent<T>) => void, opts: WatchOptions = {}): () => void {
    const topic = `change:${this.kind}`;
    if (opts.resourceVersion !== undefined && opts.resourceVersion !== '' && opts.resourceVersion !== '0') {
      const from = Number(opts.resourceVersion);
      if (!Number.isSafeInteger(from) || from < this.history.floor) {
        const err = expired(opts.resourceVersion);
        if (!opts.onError) throw err;
        const onError = opts.onError;
        queueMicrotask(() => onError(err));
        return () => undefined;
      }
      // Replay synchronously, then subscribe: no change can land in between (one thread).
      for (const c of this.history.changes) if (c.rv > from) fn({ type: c.type, object: fromJson<T>(c.body) });
    }
    const listener = (c: Change): void => fn({ type: c.type, object: fromJson<T>(c.body) });
    this.bus.on(topic, listener);
    return () => this.bus.off(topic, listener);
  }

  private read(namespace: string, name: string): T | undefined {
    const row = this.sel.get(this.kind, namespace, name);
    return row ? (JSON.parse(row.body) as T) : undefined;
  }

  /** Records a change and tells the watchers; returns the caller's own copy of the object. */
  private emit(type: Change['type'], body: string): T {
    const h = this.history;
    const object = fromJson<T>(body);
    const change: Change = { rv: Number(object.metadata.resourceVersion), type, body };
    h.changes.push(change);
    if (h.changes.length > WATCH_WINDOW) h.floor = h.changes.shift()!.rv;
    this.bus.emit(`change:${this.kind}`, change);
    return object;
  }
}
