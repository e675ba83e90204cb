// metadata.managedFields: one entry per manager, operation (Apply or Update) and subresource,
// each with the set of fields it owns in the FieldsV1 encoding; decoded to FieldSets and back.

import type { ManagedFieldsEntry } from '../../api/meta.js';
import { field, FieldSet, type Path } from './fieldset.js';

export type { ManagedFieldsEntry };
export type Operation = ManagedFieldsEntry['operation'];

export interface ManagerId {
  manager: string;
  operation: Operation;
  apiVersion: string;
  subresource?: string;
}

export interface Managed {
  id: ManagerId;
  set: FieldSet;
  time?: string;
}

/** Entries with the same manager, operation and subresource are one owner (Update ones per apiVersion too). */
export const sameManager = (a: ManagerId, b: ManagerId): boolean =>
  a.manager === b.manager &&
  a.operation === b.operation &&
  (a.subresource ?? '') === (b.subresource ?? '') &&
  (a.operation === 'Apply' || a.apiVersion === b.apiVersion);

/** Decodes stored entries; malformed ones (not written by us) are dropped rather than failing every write. */
export function decodeManaged(entries: unknown): Managed[] {
  if (!Array.isArray(entries)) return [];
  const out: Managed[] = [];
  for (const e of entries as Partial<ManagedFieldsEntry>[]) {
    if (!e || typeof e.manager !== 'string' || (e.operation !== 'Apply' && e.operation !== 'Update')) continue;
    let set: FieldSet;
    try {
      set = FieldSet.fromFieldsV1(e.fieldsV1 ?? {});
    } catch {
      continue;
    }
    const id: ManagerId = {
      manager: e.manager,
      operation: e.operation,
      apiVersion: e.apiVersion ?? '',
      ...(e.subresource ? { subresource: e.subresource } : {}),
    };
    out.push({ id, set, ...(e.time ? { time: e.time } : {}) });
  }
  return out;
}

/** Kubernetes' order: Apply entries before Update ones, then oldest first, then by manager. */
export function encodeManaged(managed: Managed[]): ManagedFieldsEntry[] {
  return managed
    .filter((m) => !m.set.empty())
    .sort(
      (a, b) =>
        cmp(a.id.operation, b.id.operation) ||
        cmp(a.time ?? '', b.time ?? '') ||
        cmp(a.id.manager, b.id.manager) ||
        cmp(a.id.subresource ?? '', b.id.subresource ?? ''),
    )
    .map((m) => ({
      manager: m.id.manager,
      operation: m.id.operation,
      apiVersion: m.id.apiVersion,
      ...(m.time ? { time: m.time } : {}),
      fieldsType: 'FieldsV1' as const,
      fieldsV1: m.set.toFieldsV1(),
      ...(m.id.subresource ? { subresource: m.id.subresource } : {}),
    }));
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Times as Kubernetes writes them: RFC 3339, whole seconds, UTC. */
export const timestamp = (d: Date): string => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

/** Fields the server sets: never owned by a manager (kube-apiserver strips the same). */
export const SERVER_FIELDS: Path[] = [
  [field('apiVersion')],
  [field('kind')],
  [field('metadata')],
  ...['name', 'namespace', 'creationTimestamp', 'selfLink', 'uid', 'generation', 'managedFields', 'resourceVersion', 'deletionTimestamp'].map((f) => [
    field('metadata'),
    field(f),
  ]),
];

/** Removes the server's fields (the paths themselves, not what is below them). */
export function stripServerFields(set: FieldSet): FieldSet {
  return set.difference(FieldSet.of(...SERVER_FIELDS));
}
