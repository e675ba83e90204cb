// Values as the field manager walks them: plain objects, lists and their items' path elements.

import { index, keyElement, type PathElement, valueElement } from './fieldset.js';
import type { TypeSchema } from './schema.js';

export type Obj = Record<string, unknown>;

export const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);

/** The path element naming a list item: its keys (list-type map), its value (set), else its index. */
export function itemElement(s: TypeSchema & { type: 'list' }, item: unknown, i: number): PathElement {
  if (s.listType === 'set') return valueElement(item);
  if (isObj(item) && s.keys.length && s.keys.every((k) => item[k] !== undefined)) {
    return keyElement(Object.fromEntries(s.keys.map((k) => [k, item[k]])));
  }
  return index(i);
}

/** The items of a list by path element, in order; a repeated element keeps its first item. */
export function indexItems(s: TypeSchema & { type: 'list' }, list: unknown[] | undefined): Map<PathElement, unknown> {
  const out = new Map<PathElement, unknown>();
  (list ?? []).forEach((item, i) => {
    const pe = itemElement(s, item, i);
    if (!out.has(pe)) out.set(pe, item);
  });
  return out;
}
