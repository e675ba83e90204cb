// The apply merge: an applied configuration merged into the live object under a TypeSchema, and
// the removal of fields an applier gave up that nobody owns any more.

import { field, FieldSet, type PathElement } from './fieldset.js';
import { indexItems, isObj, itemElement, type Obj } from './items.js';
import { childOf, type TypeSchema } from './schema.js';

/**
 * `config` merged into `live`: granular maps key by key, set and map lists item by item, the
 * rest (scalars, atomic lists and maps) replaced. Items of `live` that `config` leaves out keep
 * their place; shared items follow the configuration's order.
 */
export function merge(live: unknown, config: unknown, s: TypeSchema): unknown {
  if (config === undefined) return structuredClone(live);
  if (live === undefined) return structuredClone(config);
  if (s.type === 'map' && isObj(live) && isObj(config)) {
    const out: Obj = { ...live };
    for (const [k, v] of Object.entries(config)) out[k] = merge(live[k], v, childOf(s, k).schema);
    return out;
  }
  if (s.type === 'list' && Array.isArray(live) && Array.isArray(config)) return mergeList(live, config, s);
  return structuredClone(config);
}

function mergeList(live: unknown[], config: unknown[], s: TypeSchema & { type: 'list' }): unknown[] {
  const l = indexItems(s, live);
  const r = indexItems(s, config);
  const lOrder = [...l.keys()];
  const rOrder = [...r.keys()];
  // Items in both lists, in the configuration's order: each is placed where the configuration has it.
  const shared = rOrder.filter((pe) => l.has(pe));
  let next = 0;
  const out: unknown[] = [];
  const emit = (pe: PathElement): void => {
    out.push(merge(l.get(pe), r.get(pe), s.element));
    if (shared[next] === pe) next++;
  };
  let li = 0;
  let ri = 0;
  while (li < lOrder.length || ri < rOrder.length) {
    if (li < lOrder.length && ri < rOrder.length) {
      const pe = lOrder[li];
      if (pe === rOrder[ri]) {
        emit(pe);
        li++;
        ri++;
        continue;
      }
      // A shared item that is not next in the configuration's order waits for its turn there.
      if (r.has(pe) && shared[next] !== undefined && shared[next] !== pe) {
        li++;
        continue;
      }
    }
    if (li < lOrder.length && !r.has(lOrder[li])) {
      out.push(structuredClone(l.get(lOrder[li])));
      li++;
      continue;
    }
    if (ri < rOrder.length) {
      emit(rOrder[ri]);
      ri++;
    } else li++;
  }
  return out;
}

/**
 * Removes from `value` the members of `drop` that no manager in `owned` owns, at or below them.
 * A dropped node with owned fields below it stays, and its unowned children go.
 */
export function removeUnowned(value: unknown, drop: FieldSet, owned: FieldSet, s: TypeSchema): unknown {
  if (s.type === 'map' && isObj(value)) {
    const out: Obj = {};
    for (const [k, v] of Object.entries(value)) {
      const pe = field(k);
      const d = drop.children.get(pe);
      if (!d) {
        out[k] = v;
        continue;
      }
      const o = owned.children.get(pe);
      if (d.member && (!o || o.empty())) continue;
      out[k] = removeUnowned(v, d, o ?? EMPTY, childOf(s, k).schema);
    }
    return out;
  }
  if (s.type === 'list' && Array.isArray(value)) {
    const out: unknown[] = [];
    value.forEach((item, i) => {
      const pe = itemElement(s, item, i);
      const d = drop.children.get(pe);
      if (!d) return void out.push(item);
      const o = owned.children.get(pe);
      if (d.member && (!o || o.empty())) return;
      out.push(removeUnowned(item, d, o ?? EMPTY, s.element));
    });
    return out;
  }
  return value;
}

const EMPTY = new FieldSet();
