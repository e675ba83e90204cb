// Kubernetes implementation of the generic store: each agentplane kind X is kept as custom
// resources of kind XRecord in an internal group, in the object's namespace and under its name,
// so the API server (etcd) is the only state and replicas stay stateless. resourceVersion and
// creationTimestamp are the record's (the uid is agentplane's, see records.ts); optimistic
// concurrency is Kubernetes' own.
// See docs/kubernetes-storage.md.

import { randomUUID } from 'node:crypto';
import { CustomObjectsApi, Watch, type KubeConfig } from '@kubernetes/client-node';
import { badRequest, conflict, notFound } from '../../api/errors.js';
import type { ListFilter, ListResult, Store, StoredObject, WatchEvent, WatchOptions } from '../store.js';
import { isMissingObject, statusOf, toApiError } from './errors.js';
import { KindHub } from './kind-hub.js';
import { DEFAULT_GROUP, RECORD_VERSION, fromRecord, recordNames, toRecord, type StorageRecord } from './records.js';

export interface KubernetesStateOptions {
  /** API group of the storage CRDs (default internal.agentplane.io). */
  group?: string;
  /** Server-side timeout of each upstream watch; default a random 5 to 10 minutes, as client-go. */
  watchTimeoutSeconds?: number;
  /** How long a write waits for this process's watches to deliver it (default 5 s). */
  writeSettleMs?: number;
  /** Where watch trouble is reported (a pino logger fits); default stderr. */
  logger?: { warn(obj: object, msg: string): void };
}

const MODIFIED = 'the object has been modified; please apply your changes to the latest version and try again';

/** Page size of lists: large enough to be one request in practice, bounded for big namespaces. */
const PAGE = 500;

interface RecordList {
  metadata: { resourceVersion?: string; continue?: string };
  items: StorageRecord[];
}

export class KubernetesState {
  private readonly api: CustomObjectsApi;
  private readonly watcher: Watch;
  private readonly group: string;
  private readonly hubs = new Map<string, KindHub>();

  constructor(
    kc: KubeConfig,
    private readonly opts: KubernetesStateOptions = {},
  ) {
    this.api = kc.makeApiClient(CustomObjectsApi);
    this.watcher = new Watch(kc);
    this.group = opts.group ?? DEFAULT_GROUP;
  }

  store<T extends StoredObject>(kind: string): Store<T> {
    const names = recordNames(kind);
    const ref: RecordRef = { api: this.api, group: this.group, plural: names.plural, recordKind: names.kind, kind };
    let hub = this.hubs.get(kind);
    if (!hub) {
      const log = this.opts.logger ?? {
        warn: (o: { kind: string; err?: unknown }, msg: string) =>
          console.warn(`agentplane storage (${o.kind}): ${msg}${o.err ? `: ${(o.err as Error).message ?? o.err}` : ''}`),
      };
      hub = new KindHub(
        {
          watch: this.watcher,
          path: `/apis/${this.group}/${RECORD_VERSION}/${names.plural}`,
          list: () => listAll(ref, {}),
          timeoutSeconds: () => this.opts.watchTimeoutSeconds ?? 300 + Math.floor(Math.random() * 300),
          warn: (msg, err) => log.warn({ kind, err }, msg),
        },
        this.opts.writeSettleMs ?? 5_000,
      );
      this.hubs.set(kind, hub);
    }
    return new KubernetesStore<T>(ref, hub);
  }

  /** Stops every watch; pending writes stop waiting for delivery. */
  close(): void {
    for (const hub of this.hubs.values()) hub.close();
    this.hubs.clear();
  }
}

interface RecordRef {
  api: CustomObjectsApi;
  group: string;
  plural: string;
  recordKind: string;
  /** The agentplane kind, for error messages. */
  kind: string;
}

/** Every record matching `filter`, in pages that continue the first page's snapshot. */
async function listAll(ref: RecordRef, filter: ListFilter): Promise<{ resourceVersion: string; items: StorageRecord[] }> {
  const items: StorageRecord[] = [];
  let resourceVersion: string | undefined;
  let cont: string | undefined;
  do {
    const page = await listPage(ref, filter, PAGE, cont);
    resourceVersion ??= page.metadata.resourceVersion;
    items.push(...page.items);
    cont = page.metadata.continue || undefined;
  } while (cont);
  return { resourceVersion: resourceVersion ?? '0', items };
}

function listPage(ref: RecordRef, filter: ListFilter, limit: number, cont?: string): Promise<RecordList> {
  const base = { group: ref.group, version: RECORD_VERSION, plural: ref.plural, limit, _continue: cont };
  const sel = Object.entries(filter.labelSelector ?? {});
  const labelSelector = sel.length ? sel.map(([k, v]) => `${k}=${v}`).join(',') : undefined;
  return (
    filter.namespace
      ? ref.api.listNamespacedCustomObject({ ...base, namespace: filter.namespace, labelSelector })
      : ref.api.listCustomObjectForAllNamespaces({ ...base, labelSelector })
  ) as Promise<RecordList>;
}

class KubernetesStore<T extends StoredObject> implements Store<T> {
  private readonly apiVersion: string;

  constructor(
    private readonly ref: RecordRef,
    private readonly hub: KindHub,
  ) {
    this.apiVersion = `${ref.group}/${RECORD_VERSION}`;
  }

  private at(namespace: string, name: string) {
    return { group: this.ref.group, version: RECORD_VERSION, plural: this.ref.plural, namespace, name };
  }

  private fail(err: unknown, namespace: string, name: string): never {
    throw toApiError(err, { kind: this.ref.kind, namespace, name, resource: `${this.ref.plural}.${this.ref.group}` });
  }

  async get(namespace: string, name: string): Promise<T | undefined> {
    try {
      return fromRecord<T>((await this.ref.api.getNamespacedCustomObject(this.at(namespace, name))) as StorageRecord);
    } catch (err) {
      if (isMissingObject(err)) return undefined;
      this.fail(err, namespace, name);
    }
  }

  async list(filter: ListFilter = {}): Promise<ListResult<T>> {
    let list: Awaited<ReturnType<typeof listAll>>;
    try {
      list = await listAll(this.ref, filter);
    } catch (err) {
      if (statusOf(err)?.code === 400) throw badRequest(statusOf(err)?.message ?? 'bad list request');
      this.fail(err, filter.namespace ?? '', '');
    }
    const items = list.items.map((r) => fromRecord<T>(r));
    const key = (o: T): string => `${o.metadata.namespace}\u0000${o.metadata.name}`;
    items.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
    return { items, resourceVersion: list.resourceVersion };
  }

  async create(obj: T): Promise<T> {
    const { namespace, name } = obj.metadata;
    await this.hub.beforeWrite();
    let rec: StorageRecord;
    try {
      rec = (await this.ref.api.createNamespacedCustomObject({
        ...this.at(namespace, name),
        // The object's uid is agentplane's, never the record's (see records.ts).
        body: toRecord({ ...obj, metadata: { ...obj.metadata, uid: obj.metadata.uid || randomUUID() } }, this.apiVersion, this.ref.recordKind, false),
      })) as StorageRecord;
    } catch (err) {
      this.fail(err, namespace, name);
    }
    await this.hub.afterWrite(rec.metadata.resourceVersion!);
    return fromRecord<T>(rec);
  }

  async update(obj: T): Promise<T> {
    const { namespace, name, uid, resourceVersion } = obj.metadata;
    // Kubernetes would treat a missing uid or version as "any"; this interface never does.
    if (!uid || !resourceVersion || resourceVersion === '0') {
      if (!(await this.get(namespace, name))) throw notFound(this.ref.kind, name, namespace);
      throw conflict(MODIFIED, { kind: this.ref.kind, name });
    }
    await this.hub.beforeWrite();
    let rec: StorageRecord;
    try {
      // metadata.resourceVersion in the body is the API server's precondition.
      rec = (await this.ref.api.replaceNamespacedCustomObject({
        ...this.at(namespace, name),
        body: toRecord(obj, this.apiVersion, this.ref.recordKind, true),
      })) as StorageRecord;
    } catch (err) {
      this.fail(err, namespace, name);
    }
    await this.hub.afterWrite(rec.metadata.resourceVersion!);
    return fromRecord<T>(rec);
  }

  /**
   * Kubernetes answers a custom resource's deletion with a Status, not the object, so the object
   * is read first and deleted with its resourceVersion as precondition (retried when it
   * changed in between, unless the caller gave a resourceVersion of its own).
   */
  async delete(namespace: string, name: string, pre: { resourceVersion?: string } = {}): Promise<T | undefined> {
    await this.hub.beforeWrite();
    for (let attempt = 0; ; attempt++) {
      const cur = await this.get(namespace, name);
      if (!cur) return undefined;
      const { uid, resourceVersion } = cur.metadata;
      if (pre.resourceVersion && pre.resourceVersion !== resourceVersion) {
        throw conflict('the object has been modified; delete precondition failed', { kind: this.ref.kind, name });
      }
      const deletion = this.hub.expectDeletion(uid);
      try {
        await this.ref.api.deleteNamespacedCustomObject({
          ...this.at(namespace, name),
          body: { preconditions: { resourceVersion } },
        });
      } catch (err) {
        deletion.cancel();
        const code = statusOf(err)?.code;
        if (isMissingObject(err)) return undefined;
        if (code === 409 && !pre.resourceVersion && attempt < 10) continue;
        this.fail(err, namespace, name);
      }
      // A watch of ours saw the deletion: its object carries the deletion's resourceVersion.
      const seen = await deletion.result;
      if (seen) {
        await this.hub.afterWrite(seen.metadata.resourceVersion!);
        return fromRecord<T>(seen);
      }
      // Nothing watches: the current list version is at least the deletion's.
      const removed = structuredClone(cur);
      removed.metadata.resourceVersion = await listPage(this.ref, {}, 1).then(
        (l) => l.metadata.resourceVersion ?? resourceVersion,
        () => resourceVersion,
      );
      return removed;
    }
  }

  watch(fn: (ev: WatchEvent<T>) => void, opts: WatchOptions = {}): () => void {
    return this.hub.subscribe(fn as (ev: WatchEvent<StoredObject>) => void, opts);
  }
}
