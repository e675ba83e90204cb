// The instructions template of a Trigger: text with {{a.b.c}} placeholders, each replaced by the
// payload's value at that dotted path (an array index is a number: {{commits.0.id}}). No
// expressions, filters or code: only a path lookup, so a template can do nothing but copy fields.
// A missing field (or null) renders empty, so one template serves events that differ in shape
// (docs/triggers-and-webhooks.md); an object or array renders as its JSON.

import type { Cause } from './errors.js';

const SEGMENT = '[A-Za-z0-9_-]+';
const PLACEHOLDER = new RegExp(`\\{\\{\\s*(${SEGMENT}(?:\\.${SEGMENT})*)\\s*\\}\\}`, 'g');
const MAX_DEPTH = 32;

/** What is wrong with a template: an opening "{{" that is no placeholder. */
export function templateCauses(template: string, field: string): Cause[] {
  const rest = template.replace(PLACEHOLDER, '');
  const open = rest.indexOf('{{');
  if (open < 0) return [];
  const near = rest.slice(open, open + 40);
  return [{ field, message: `"${near}" is not a placeholder: write {{path.to.field}} (letters, digits, "_" and "-" separated by dots)` }];
}

/** The value at a dotted path; undefined when any step is missing. */
function lookup(payload: unknown, path: string): unknown {
  let cur: unknown = payload;
  for (const key of path.split('.').slice(0, MAX_DEPTH)) {
    if (cur === null || typeof cur !== 'object') return undefined;
    if (!Object.prototype.hasOwnProperty.call(cur, key)) return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

const text = (v: unknown): string => {
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
};

/** The template with each placeholder replaced; at most `maxLength` characters. */
export function renderTemplate(template: string, payload: unknown, maxLength: number): string {
  const out = template.replace(PLACEHOLDER, (_m, path: string) => text(lookup(payload, path)));
  return out.length > maxLength ? out.slice(0, maxLength) : out;
}
