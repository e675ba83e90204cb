// The generic registry: a Store plus a Strategy. Every writer goes through here.

import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { finalizersForPolicy, type PropagationPolicy, validateFinalizers, validateOwnerReferences } from '../api/deletion.js';
import { alreadyExists, ApiError, type Cause, conflict, invalid, notFound } from '../api/errors.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { copyObject } from './copy.js';
import { type CachedObjects, FirstReads } from './first-reads.js';
import { KeyedSerializer } from './serializer.js';
import type { ListFilter, ListResult, Store, StoredObject, WatchEvent, WatchOptions } from './store.js';
import type { Strategy } from './strategy.js';
import { AdmissionChain, type Attributes, type Undo } from './admission/admission.js';
import { FieldManager, type WriteOwner } from './fieldmanager/field-manager.js';
import { objectSchema } from './fieldmanager/schema.js';

// Writers in this process take turns per object, so they never conflict with each other; the
// retries (with jittered backoff) are for writers elsewhere: other replicas, kubectl.
const MAX_RETRIES = 10;

export interface WriteOptions {
  /** Run every rule and return the result without storing it (Kubernetes' dryRun=All). */
  dryRun?: boolean;
  /**
   * Who writes, for metadata.managedFields: an Update by this manager, or the second step of an
   * apply (the object's managedFields already carry the applier's entry). Default: an Update by
   * agentplane's own controllers (CONTROLLER_MANAGER).
   */
  owner?: WriteOwner;
}

/** The field manager of writes agentplane's controllers and admission plugins make. */
export const CONTROLLER_MANAGER = 'agentplane-controller';
/** Writes through the REST mirror (/api/v1) are Updates by this manager. */
export const REST_MANAGER = 'agentplane-rest';
export const REST_OWNER: WriteOwner = { manager: REST_MANAGER, operation: 'Update' };

export interface DeleteOptions extends WriteOptions {
  /** Delete only if the object still has this uid / resourceVersion (409 otherwise). */
  preconditions?: { uid?: string; resourceVersion?: string };
  /** Adds or removes the garbage collector's finalizers (orphan, foregroundDeletion); see deletion.ts. */
  propagationPolicy?: PropagationPolicy;
}

export interface RegistryOptions {
  /**
   * Whether a garbage collector (kube-controller-manager's) acts on this home's objects. Without
   * one, nothing would remove the orphan and foregroundDeletion finalizers a propagationPolicy
   * adds, so the policy is ignored (every delete is Background).
   */
  garbageCollector?: boolean;
}

export class Registry<T extends StoredObject> {
  private readonly writes = new KeyedSerializer();
  private readonly firstReads = new FirstReads<T>();
  /** Keeps metadata.managedFields on every create and update (status writes are not tracked). */
  readonly fieldManager: FieldManager;

  constructor(
    private readonly store: Store<T>,
    /** The resource's rules; read by the HTTP layers for table columns and selectable fields. */
    readonly strategy: Strategy<T>,
    /** The rules across objects, shared by every registry of the service. */
    private readonly admission: AdmissionChain = new AdmissionChain(),
    private readonly options: RegistryOptions = {},
  ) {
    this.fieldManager = new FieldManager(objectSchema(strategy.specSchema));
  }

  get kind(): string {
    return this.strategy.kind;
  }

  /** Reads the kind's informer before storage in writes (first-reads.ts); set once the informer exists. */
  readFirstFrom(cache: CachedObjects<T>): void {
    this.firstReads.use(cache);
  }

  get(namespace: string, name: string): Promise<T | undefined> {
    return this.store.get(namespace, name);
  }

  async mustGet(namespace: string, name: string): Promise<T> {
    const obj = await this.store.get(namespace, name);
    if (!obj || obj.metadata.deletionTimestamp) throw notFound(this.kind, name, namespace);
    return obj;
  }

  list(filter?: ListFilter): Promise<ListResult<T>> {
    return this.store.list(filter);
  }

  watch(fn: (ev: WatchEvent<T>) => void, opts?: WatchOptions): () => void {
    return this.store.watch(fn, opts);
  }

  async create(obj: T, opts: WriteOptions = {}): Promise<T> {
    // A client's object, not yet validated: structuredClone keeps what JSON would change
    // (a number parsed as Infinity must reach validation as such, not as null).
    const draft = structuredClone(obj);
    delete draft.metadata.deletionTimestamp;
    this.strategy.prepareForCreate(draft);
    normalizeMeta(draft);
    draft.metadata.generation = 1;
    draft.metadata.managedFields = this.fieldManager.record(undefined, draft, ownerOf(opts));
    const attrs = this.attributes('CREATE', draft, undefined, opts);
    await this.admission.admit(attrs);
    const causes = [...metaCauses(draft), ...this.strategy.validate(draft)];
    if (causes.length) throw invalid(this.kind, draft.metadata.name, causes);
    // Before the validating plugins, so a duplicate changes nothing elsewhere (binds no secret).
    if (await this.exists(draft.metadata.namespace, draft.metadata.name)) throw alreadyExists(this.kind, draft.metadata.name);
    const undo = await this.admission.validate(attrs);
    if (opts.dryRun) {
      draft.metadata.uid ||= randomUUID();
      draft.metadata.creationTimestamp ||= new Date().toISOString();
      return draft;
    }
    return this.firstReads.wrote(await this.stored(() => this.store.create(draft), undo));
  }

  /**
   * Whether the object is there, for a create's early refusal. With a cache, one it does not hold
   * is taken as absent: should storage hold it after all, storage refuses the create (and the
   * validating plugins' work is undone).
   */
  private async exists(namespace: string, name: string): Promise<boolean> {
    if (!this.firstReads.active) return !!(await this.store.get(namespace, name));
    return !!this.firstReads.current(namespace, name) && !!(await this.store.get(namespace, name));
  }

  /**
   * Read-modify-write of the spec (and metadata), retried on resourceVersion conflicts.
   * `mutate` sees the latest object and may throw an ApiError to refuse.
   */
  async update(namespace: string, name: string, mutate: (obj: T) => void, opts: WriteOptions = {}): Promise<T> {
    return this.retry(namespace, name, opts, async (cur) => {
      const next = copyObject(cur);
      mutate(next);
      // Set by DELETE only, and never taken back.
      if (cur.metadata.deletionTimestamp) next.metadata.deletionTimestamp = cur.metadata.deletionTimestamp;
      else delete next.metadata.deletionTimestamp;
      normalizeMeta(next);
      this.strategy.prepareForUpdate(next, cur);
      next.metadata.managedFields = this.fieldManager.record(cur, next, ownerOf(opts));
      if (isDeepStrictEqual(next, cur)) return cur;
      await this.admission.admit(this.attributes('UPDATE', next, cur, opts));
      if (!isDeepStrictEqual(next.spec, cur.spec)) next.metadata.generation = cur.metadata.generation + 1;
      const res = this.strategy.validateUpdate(next, cur);
      if (res instanceof ApiError) throw res;
      const causes = [...metaCauses(next), ...newFinalizerCauses(next, cur), ...this.strategy.validate(next), ...res];
      if (causes.length) throw invalid(this.kind, name, causes);
      return next;
    });
  }

  /** Status-only write: the spec and metadata of the stored object are kept as they are. */
  async updateStatus(namespace: string, name: string, mutate: (status: T['status'], obj: T) => void): Promise<T> {
    return this.retry(
      namespace,
      name,
      {},
      (cur) => {
        const next = copyObject(cur);
        mutate(next.status, next);
        next.spec = cur.spec;
        next.metadata = cur.metadata;
        this.strategy.prepareForStatusUpdate?.(next, cur);
        const causes = this.strategy.validateStatusUpdate?.(next, cur) ?? [];
        if (causes.length) throw invalid(this.kind, name, causes);
        return next;
      },
      false,
    );
  }

  /**
   * Deletes as Kubernetes does: an object left with finalizers (its own, or the garbage
   * collector's that `propagationPolicy` adds) is only marked (deletionTimestamp) and returned;
   * the write that removes its last finalizer deletes it. Otherwise it is removed at once.
   * Returns the object as marked, or as it was when removed.
   */
  async delete(namespace: string, name: string, opts: DeleteOptions = {}): Promise<T> {
    const pre = opts.preconditions ?? {};
    const check = (cur: T): void => {
      if (pre.uid && pre.uid !== cur.metadata.uid) {
        throw conflict(`precondition failed: uid in precondition: ${pre.uid}, uid in object meta: ${cur.metadata.uid}`, { kind: this.kind, name });
      }
      if (pre.resourceVersion && pre.resourceVersion !== cur.metadata.resourceVersion) {
        throw conflict(
          `precondition failed: resourceVersion in precondition: ${pre.resourceVersion}, resourceVersion in object meta: ${cur.metadata.resourceVersion}`,
          { kind: this.kind, name },
        );
      }
    };
    const policy = this.options.garbageCollector ? opts.propagationPolicy : undefined;
    return this.writes.run(`${namespace}/${name}`, async () => {
      for (let i = 0; ; i++) {
        const cur = await this.store.get(namespace, name);
        if (!cur) throw notFound(this.kind, name, namespace);
        check(cur);
        const finalizers = finalizersForPolicy(cur.metadata.finalizers ?? [], policy);
        if (!finalizers.length) {
          const undo = await this.admission.validate(this.attributes('DELETE', undefined, cur, opts));
          if (opts.dryRun) return cur;
          const removed = await this.stored(() => this.store.delete(namespace, name, { resourceVersion: cur.metadata.resourceVersion }), undo).catch(
            (err: unknown) => {
              if (err instanceof ApiError && err.reason === 'Conflict' && !pre.resourceVersion && i < MAX_RETRIES) return 'retry' as const;
              throw err;
            },
          );
          if (removed === 'retry') continue;
          if (!removed) throw notFound(this.kind, name, namespace);
          return removed;
        }
        const next = copyObject(cur);
        next.metadata.finalizers = finalizers;
        next.metadata.deletionTimestamp ||= new Date().toISOString();
        if (isDeepStrictEqual(next, cur)) return cur;
        // The first DELETE is judged by admission; later ones only change the GC finalizers.
        if (!cur.metadata.deletionTimestamp) await this.admission.validate(this.attributes('DELETE', undefined, cur, opts));
        if (opts.dryRun) return next;
        try {
          return this.firstReads.wrote(await this.store.update(next));
        } catch (err) {
          if (!(err instanceof ApiError && err.reason === 'Conflict') || pre.resourceVersion || i >= MAX_RETRIES) throw err;
          await sleep(Math.random() * Math.min(10 * 2 ** i, 500));
        }
      }
    });
  }

  /**
   * Removes one finalizer (a controller's own, after its clean-up); deletes the object when it
   * was the last one of an object being deleted. No admission: only metadata changes.
   */
  async removeFinalizer(namespace: string, name: string, finalizer: string): Promise<void> {
    try {
      await this.retry(
        namespace,
        name,
        {},
        (cur) => {
          if (!cur.metadata.finalizers?.includes(finalizer)) return cur;
          const next = copyObject(cur);
          next.metadata.finalizers = cur.metadata.finalizers.filter((f) => f !== finalizer);
          normalizeMeta(next);
          return next;
        },
        false,
      );
    } catch (err) {
      if (!(err instanceof ApiError && err.reason === 'NotFound')) throw err;
    }
  }

  private attributes(operation: Attributes['operation'], object: T | undefined, oldObject: T | undefined, opts: WriteOptions): Attributes {
    const meta = (object ?? oldObject)!.metadata;
    return {
      operation,
      kind: this.kind,
      namespace: meta.namespace,
      name: meta.name,
      ...(object ? { object } : {}),
      ...(oldObject ? { oldObject } : {}),
      dryRun: opts.dryRun === true,
    };
  }

  /** Stores, undoing what admission changed elsewhere when storage refuses. */
  private async stored<R>(write: () => Promise<R>, undo: Undo): Promise<R> {
    try {
      return await write();
    } catch (err) {
      await undo();
      throw err;
    }
  }

  /**
   * Serialized read-modify-write. `change` computes the next object from the stored one; with
   * `admit`, the validating admission plugins judge an UPDATE before it is stored.
   */
  private retry(namespace: string, name: string, opts: WriteOptions, change: (cur: T) => T | Promise<T>, admit = true): Promise<T> {
    return this.writes.run(`${namespace}/${name}`, () => this.readModifyWrite(namespace, name, opts, change, admit));
  }

  private async readModifyWrite(namespace: string, name: string, opts: WriteOptions, change: (cur: T) => T | Promise<T>, admit: boolean): Promise<T> {
    let cached = this.firstReads.current(namespace, name);
    for (let i = 0; ;) {
      const fromCache = cached !== undefined;
      const cur = cached ?? (await this.store.get(namespace, name));
      cached = undefined;
      if (!cur) throw notFound(this.kind, name, namespace);
      let next: T;
      try {
        next = await change(cur);
      } catch (err) {
        if (fromCache) continue; // decided on a cached copy: decide again on storage's
        throw err;
      }
      if (isDeepStrictEqual(next, cur)) {
        if (fromCache) continue;
        return cur;
      }
      const undo = admit ? await this.admission.validate(this.attributes('UPDATE', next, cur, opts)) : async () => undefined;
      if (opts.dryRun) return next;
      try {
        // An object being deleted goes once its last finalizer is removed (watch: DELETED).
        if (next.metadata.deletionTimestamp && cur.metadata.finalizers?.length && !next.metadata.finalizers?.length) {
          const removed = await this.stored(() => this.store.delete(namespace, name, { resourceVersion: cur.metadata.resourceVersion }), undo);
          return removed ? { ...next, metadata: { ...next.metadata, resourceVersion: removed.metadata.resourceVersion } } : next;
        }
        return this.firstReads.wrote(await this.stored(() => this.store.update(next), undo));
      } catch (err) {
        if (!(err instanceof ApiError && err.reason === 'Conflict')) throw err;
        if (fromCache) continue; // the cached copy was behind storage: read storage at once
        if (i >= MAX_RETRIES) throw err;
        await sleep(Math.random() * Math.min(10 * 2 ** i, 500));
        i++;
      }
    }
  }
}

/** Empty finalizer and owner lists are left out, as Kubernetes omits them. */
function normalizeMeta(obj: StoredObject): void {
  if (!obj.metadata.finalizers?.length) delete obj.metadata.finalizers;
  if (!obj.metadata.ownerReferences?.length) delete obj.metadata.ownerReferences;
}

function metaCauses(obj: StoredObject): Cause[] {
  return [...validateFinalizers(obj.metadata.finalizers), ...validateOwnerReferences(obj.metadata.ownerReferences)];
}

/** Kubernetes' rule: once deleting, finalizers may only be removed. */
function newFinalizerCauses(next: StoredObject, cur: StoredObject): Cause[] {
  if (!cur.metadata.deletionTimestamp) return [];
  const added = (next.metadata.finalizers ?? []).filter((f) => !cur.metadata.finalizers?.includes(f));
  return added.length
    ? [
        {
          field: 'metadata.finalizers',
          message: `no new finalizers can be added while the object is being deleted; found new finalizers ${JSON.stringify(added)}`,
        },
      ]
    : [];
}

const ownerOf = (opts: WriteOptions): WriteOwner => opts.owner ?? { manager: CONTROLLER_MANAGER, operation: 'Update' };
