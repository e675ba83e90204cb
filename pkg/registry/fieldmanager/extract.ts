// The field set of an object (what an applied configuration claims) and the comparison of two
// versions of an object (what an update changed), under a TypeSchema.

import { field, FieldSet, type Path } from './fieldset.js';
import { indexItems, isObj } from './items.js';
import { childOf, type TypeSchema } from './schema.js';
import { isDeepStrictEqual } from 'node:util';

/**
 * The set of `value`'s fields: every leaf; list items (they are the unit of ownership); map
 * entries that are not declared fields (label keys); and empty or null values.
 */
export function toFieldSet(value: unknown, schema: TypeSchema): FieldSet {
  const set = new FieldSet();
  walk(value, schema, [], set);
  return set;
}

function walk(v: unknown, s: TypeSchema, path: Path, set: FieldSet): void {
  if (s.type === 'map' && isObj(v)) {
    for (const [k, child] of Object.entries(v)) {
      const { schema, declared } = childOf(s, k);
      const p = [...path, field(k)];
      walk(child, schema, p, set);
      if (child === null || (isObj(child) && !Object.keys(child).length) || !declared) set.insert(p);
    }
    return;
  }
  if (s.type === 'list' && Array.isArray(v)) {
    for (const [pe, item] of indexItems(s, v)) {
      const p = [...path, pe];
      walk(item, s.element, p, set);
      set.insert(p);
    }
    return;
  }
  if (path.length) set.insert(path);
}

export interface Comparison {
  added: FieldSet;
  modified: FieldSet;
  removed: FieldSet;
}

/**
 * What changed from `lhs` to `rhs`: leaves added, modified or removed, and granular maps, lists
 * and items that appeared or went (so a manager that creates `metadata.labels` owns the map too).
 */
export function compare(lhs: unknown, rhs: unknown, schema: TypeSchema): Comparison {
  const c: Comparison = { added: new FieldSet(), modified: new FieldSet(), removed: new FieldSet() };
  diff(lhs, rhs, schema, [], c);
  return c;
}

const isEmpty = (v: unknown): boolean => v === undefined || (Array.isArray(v) ? !v.length : isObj(v) && !Object.keys(v).length);

function diff(l: unknown, r: unknown, s: TypeSchema, path: Path, c: Comparison): void {
  const leaf = (): void => {
    if (l === undefined) c.added.insert(path);
    else if (r === undefined) c.removed.insert(path);
    else if (!isDeepStrictEqual(l, r)) c.modified.insert(path);
  };
  const granularMap = s.type === 'map' && (l === undefined || isObj(l)) && (r === undefined || isObj(r));
  const granularList = s.type === 'list' && (l === undefined || Array.isArray(l)) && (r === undefined || Array.isArray(r));
  // Both sides empty (or absent) compare as a leaf: keeps {} apart from absent.
  if ((!granularMap && !granularList) || (isEmpty(l) && isEmpty(r))) {
    if (path.length) leaf();
    return;
  }
  if (s.type === 'map') {
    const lo = (l ?? {}) as Record<string, unknown>;
    const ro = (r ?? {}) as Record<string, unknown>;
    for (const k of new Set([...Object.keys(lo), ...Object.keys(ro)])) {
      diff(lo[k], ro[k], childOf(s, k).schema, [...path, field(k)], c);
    }
  } else if (s.type === 'list') {
    const li = indexItems(s, l as unknown[] | undefined);
    const ri = indexItems(s, r as unknown[] | undefined);
    for (const pe of new Set([...li.keys(), ...ri.keys()])) diff(li.get(pe), ri.get(pe), s.element, [...path, pe], c);
  }
  // A node (not a leaf) that appeared or went is itself added or removed.
  if (!path.length) return;
  if (l === undefined) c.added.insert(path);
  else if (r === undefined) c.removed.insert(path);
}
