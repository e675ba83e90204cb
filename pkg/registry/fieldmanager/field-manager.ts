// Field ownership as kube-apiserver keeps it (structured merge): an Update takes the fields it
// changes from whoever owned them; an Apply owns exactly the fields of its configuration, may not
// change fields another manager owns unless forced (409 FieldManagerConflict), shares fields it
// sets to their current value, and removes the fields it stops applying that nobody else owns.

import { conflictError, type FieldConflict } from './conflict.js';
import { compare, toFieldSet } from './extract.js';
import { FieldSet } from './fieldset.js';
import { isObj, type Obj } from './items.js';
import { SERVER_FINALIZERS } from '../../api/deletion.js';
import { decodeManaged, encodeManaged, type Managed, type ManagedFieldsEntry, type ManagerId, sameManager, stripServerFields, timestamp } from './managed.js';
import { merge, removeUnowned } from './merge.js';
import type { TypeSchema } from './schema.js';

/** The manager kube-apiserver records for objects that existed before anyone applied. */
export const BEFORE_FIRST_APPLY = 'before-first-apply';
export const MAX_MANAGER_LENGTH = 128;

interface Meta {
  managedFields?: ManagedFieldsEntry[];
}
export interface Managee {
  apiVersion: string;
  metadata: Meta;
}

export interface WriteOwner {
  manager: string;
  operation: 'Apply' | 'Update';
  /** Apply only: take the fields other managers own instead of failing. */
  force?: boolean;
}

export class FieldManager {
  /** `schema` is the whole object's (see objectSchema). Status is never owned: writes here ignore it. */
  constructor(
    private readonly schema: TypeSchema,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** The object's fields as a manager would own them (no server fields, no status). */
  fieldSet(obj: unknown): FieldSet {
    return stripServerFields(toFieldSet(ownable(obj), this.schema));
  }

  /**
   * The first step of an apply: `config` merged into `live` (absent: a create), with the fields
   * the manager applied last time and no longer does removed unless someone else owns them. The
   * result carries the manager's new Apply entry; `record` then checks it against the others.
   */
  applyConfiguration<T extends Managee>(live: T | undefined, config: Obj, manager: string): T {
    const applied = this.fieldSet(config);
    let managed = live ? decodeManaged(live.metadata.managedFields) : [];
    // Fields of an object nobody has written through the field manager belong to a placeholder.
    if (live && !live.metadata.managedFields?.length) {
      const set = this.fieldSet(live);
      if (!set.empty()) managed = [{ id: { manager: BEFORE_FIRST_APPLY, operation: 'Update', apiVersion: live.apiVersion }, set }];
    }
    const appliedVersion: unknown = config.apiVersion ?? live?.apiVersion ?? '';
    const id: ManagerId = { manager, operation: 'Apply', apiVersion: typeof appliedVersion === 'string' ? appliedVersion : JSON.stringify(appliedVersion) };
    const mine = managed.find((m) => sameManager(m.id, id));
    const others = managed.filter((m) => m !== mine);
    const configNoStatus = { ...config };
    delete configNoStatus.status;
    let merged = merge(live, configNoStatus, this.schema) as Obj;
    if (mine) {
      const owned = others.reduce((acc, m) => acc.union(m.set), applied);
      merged = removeUnowned(merged, mine.set.difference(applied), owned, this.schema) as Obj;
    }
    const entry: Managed = { id, set: applied, ...(mine?.time ? { time: mine.time } : {}) };
    const meta = (isObj(merged.metadata) ? merged.metadata : {}) as Meta;
    merged.metadata = { ...meta, managedFields: encodeManaged([entry, ...others]) };
    return merged as unknown as T;
  }

  /**
   * The managedFields of `next`, written over `live` (absent: a create) by `owner`. The base is
   * `next`'s managedFields (an apply's first step set them; on an update they are the live
   * ones). Fields the write adds or changes leave other managers; fields it removes leave
   * everyone. An Update owner then owns what it added or changed; an Apply that changes others'
   * fields fails with a conflict unless forced.
   */
  record<T extends Managee>(live: T | undefined, next: T, owner: WriteOwner): ManagedFieldsEntry[] {
    const base = decodeManaged(next.metadata.managedFields);
    const id: ManagerId = { manager: owner.manager, operation: owner.operation, apiVersion: next.apiVersion };
    const c = compare(ownable(live ?? {}), ownable(next), this.schema);
    const changed = stripServerFields(c.added.union(c.modified));
    const removed = stripServerFields(c.removed);
    const conflicts: FieldConflict[] = [];
    const out: Managed[] = [];
    const mine = base.find((m) => sameManager(m.id, id));
    // An apply contends only for the fields it applies: what the server's own rules change after
    // it (defaults, the task counter) stays with its owners, as kube-apiserver's strategies run
    // after its field manager.
    const contested = owner.operation === 'Apply' ? changed.intersection(mine?.set ?? new FieldSet()) : changed;
    for (const m of base) {
      if (m === mine) continue;
      const taken = m.set.intersection(contested);
      for (const path of taken.paths()) conflicts.push({ manager: m.id, path });
      out.push({ ...m, set: m.set.difference(taken).difference(removed) });
    }
    if (owner.operation === 'Apply' && !owner.force && conflicts.length) throw conflictError(conflicts);
    const now = timestamp(this.now());
    if (owner.operation === 'Update') {
      const prev = mine?.set.difference(removed) ?? new FieldSet();
      const set = prev.union(changed);
      // As kube-apiserver: the time moves only when this write took fields.
      out.push({ id, set, ...(changed.empty() ? (mine?.time ? { time: mine.time } : {}) : { time: now }) });
    } else if (mine) {
      const prevTime = decodeManaged(live?.metadata.managedFields).find((m) => sameManager(m.id, id));
      const same = !!prevTime && prevTime.set.equals(mine.set) && changed.empty() && removed.empty();
      out.push({ ...mine, ...(same && prevTime.time ? { time: prevTime.time } : { time: now }) });
    }
    return encodeManaged(out);
  }
}

/** The parts of an object ownership is about: no managedFields, no status. */
function ownable(obj: unknown): Obj {
  if (!isObj(obj)) return {};
  const out: Obj = { ...obj };
  delete out.status;
  if (isObj(out.metadata)) {
    const meta = { ...out.metadata };
    delete meta.managedFields;
    // A finalizer the server adds itself is nobody's, as when kube-apiserver's admission adds one
    // after its field manager ran.
    if (Array.isArray(meta.finalizers)) {
      const finalizers = meta.finalizers.filter((f) => !SERVER_FINALIZERS.includes(f as string));
      if (finalizers.length) meta.finalizers = finalizers;
      else delete meta.finalizers;
    }
    out.metadata = meta;
  }
  return out;
}

/**
 * The manager of an Update that names none: the User-Agent up to its first '/', as
 * kube-apiserver derives it (kubectl/v1.34.0 (linux/amd64) ... -> kubectl).
 */
export function managerFromUserAgent(userAgent: string | undefined): string {
  return (userAgent ?? '').split('/')[0].slice(0, MAX_MANAGER_LENGTH);
}
