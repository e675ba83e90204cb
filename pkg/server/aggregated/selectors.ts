// Label and field selectors with Kubernetes' syntax and semantics.
//   labels: a=b, a==b, a!=b, a in (x,y), a notin (x,y), a, !a, a>1, a<1   (comma = AND)
//   fields: a=b, a==b, a!=b; the names each resource allows come from its strategy.
// `!=` and `notin` also match objects without the label, as in Kubernetes.

import { badRequest } from '../../api/errors.js';

export type LabelOp = 'eq' | 'neq' | 'in' | 'notin' | 'exists' | 'notexists' | 'gt' | 'lt';

export interface LabelRequirement {
  key: string;
  op: LabelOp;
  values: string[];
}

const KEY_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

function checkKey(key: string, selector: string): void {
  const slash = key.indexOf('/');
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  const ok = name.length > 0 && name.length <= 63 && KEY_NAME.test(name) && (prefix === undefined || (prefix.length <= 253 && DNS_SUBDOMAIN.test(prefix)));
  if (!ok) throw badRequest(`unable to parse requirement: invalid label key "${key}" in selector "${selector}"`);
}

function checkValue(value: string, selector: string): void {
  if (value.length > 63 || !VALUE.test(value)) throw badRequest(`unable to parse requirement: invalid label value "${value}" in selector "${selector}"`);
}

type Token = { t: 'id'; v: string } | { t: 'op'; v: string };

function tokenize(s: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < s.length) {
    const c = s[i];
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const two = s.slice(i, i + 2);
    if (two === '==' || two === '!=') {
      out.push({ t: 'op', v: two });
      i += 2;
      continue;
    }
    if ('=!(),<>'.includes(c)) {
      out.push({ t: 'op', v: c });
      i++;
      continue;
    }
    let j = i;
    while (j < s.length && !/\s/.test(s[j]) && !'=!(),<>'.includes(s[j])) j++;
    out.push({ t: 'id', v: s.slice(i, j) });
    i = j;
  }
  return out;
}

/** Parses a label selector; "" selects everything. Throws 400 BadRequest on bad syntax. */
export function parseLabelSelector(selector: string | undefined): LabelRequirement[] {
  if (!selector || !selector.trim()) return [];
  const toks = tokenize(selector);
  const reqs: LabelRequirement[] = [];
  let i = 0;
  const fail = (what: string): never => {
    throw badRequest(`unable to parse requirement: ${what} in label selector "${selector}"`);
  };
  const peek = (): Token | undefined => toks[i];
  const isOp = (v: string): boolean => peek()?.t === 'op' && peek()!.v === v;
  const ident = (): string => {
    const tk = peek();
    if (tk?.t !== 'id') return fail('expected a label key');
    i++;
    return tk.v;
  };
  const value = (): string => {
    const tk = peek();
    if (tk?.t === 'id') {
      i++;
      checkValue(tk.v, selector);
      return tk.v;
    }
    return ''; // `a=` selects the empty value
  };
  for (;;) {
    if (isOp('!')) {
      i++;
      const key = ident();
      checkKey(key, selector);
      reqs.push({ key, op: 'notexists', values: [] });
    } else {
      const key = ident();
      checkKey(key, selector);
      const tk = peek();
      if (!tk || (tk.t === 'op' && tk.v === ',')) {
        reqs.push({ key, op: 'exists', values: [] });
      } else if (tk.t === 'op' && (tk.v === '=' || tk.v === '==' || tk.v === '!=')) {
        i++;
        reqs.push({ key, op: tk.v === '!=' ? 'neq' : 'eq', values: [value()] });
      } else if (tk.t === 'op' && (tk.v === '<' || tk.v === '>')) {
        i++;
        const v = value();
        if (!/^-?\d+$/.test(v)) fail(`"${v}" is not an integer`);
        reqs.push({ key, op: tk.v === '>' ? 'gt' : 'lt', values: [v] });
      } else if (tk.t === 'id' && (tk.v === 'in' || tk.v === 'notin')) {
        i++;
        if (!isOp('(')) fail('expected "(" after in/notin');
        i++;
        const values: string[] = [];
        if (isOp(')')) fail('the set of values is empty');
        for (;;) {
          values.push(value());
          if (isOp(',')) {
            i++;
            continue;
          }
          if (isOp(')')) {
            i++;
            break;
          }
          fail('expected "," or ")" in the set of values');
        }
        reqs.push({ key, op: tk.v === 'in' ? 'in' : 'notin', values });
      } else {
        fail(`unexpected "${tk.v}"`);
      }
    }
    if (i >= toks.length) break;
    if (!isOp(',')) fail(`unexpected "${peek()!.v}"`);
    i++;
  }
  return reqs;
}

export function matchesLabels(reqs: LabelRequirement[], labels: Record<string, string> | undefined): boolean {
  const l = labels ?? {};
  return reqs.every((r) => {
    const has = Object.prototype.hasOwnProperty.call(l, r.key);
    const v = l[r.key];
    switch (r.op) {
      case 'exists':
        return has;
      case 'notexists':
        return !has;
      case 'eq':
      case 'in':
        return has && r.values.includes(v);
      case 'neq':
      case 'notin':
        return !has || !r.values.includes(v);
      case 'gt':
      case 'lt': {
        if (!has || !/^-?\d+$/.test(v)) return false;
        return r.op === 'gt' ? Number(v) > Number(r.values[0]) : Number(v) < Number(r.values[0]);
      }
    }
  });
}

export interface FieldRequirement {
  field: string;
  op: 'eq' | 'neq';
  value: string;
}

/** Splits on unescaped separators; `\,` `\=` `\!` `\\` escape them, as Kubernetes' fields.Parse. */
function splitEscaped(s: string, sep: string): string[] {
  const parts: string[] = [];
  let cur = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '\\' && i + 1 < s.length) {
      cur += c + s[i + 1];
      i++;
    } else if (c === sep) {
      parts.push(cur);
      cur = '';
    } else cur += c;
  }
  parts.push(cur);
  return parts;
}

const unescape = (s: string): string => s.replace(/\\(.)/g, '$1');

/** Parses a field selector; "" selects everything. Throws 400 BadRequest on bad syntax. */
export function parseFieldSelector(selector: string | undefined): FieldRequirement[] {
  if (!selector || !selector.trim()) return [];
  return splitEscaped(selector, ',').map((term) => {
    const m = /^(.*?)(!=|==|=)(.*)$/s.exec(term.replace(/\\./g, (e) => (e === '\\=' || e === '\\!' ? `\u0000${e[1]}` : e)));
    if (!m) throw badRequest(`invalid selector: "${selector}"; can't understand "${term}"`);
    // eslint-disable-next-line no-control-regex -- \u0000 is the marker the escape pass above puts before an escaped = or !
    const restore = (s: string): string => unescape(s.replace(/\u0000(.)/g, '\\$1'));
    const field = restore(m[1]).trim();
    if (!field) throw badRequest(`invalid selector: "${selector}"; can't understand "${term}"`);
    return { field, op: m[2] === '!=' ? 'neq' : 'eq', value: restore(m[3]) };
  });
}

/** Whether the object's selectable fields satisfy every requirement; unknown fields are a 400. */
export function matchesFields(reqs: FieldRequirement[], fields: Record<string, string>, resource: string): boolean {
  return reqs.every((r) => {
    if (!Object.prototype.hasOwnProperty.call(fields, r.field)) throw unsupportedField(r.field, resource, fields);
    return r.op === 'eq' ? fields[r.field] === r.value : fields[r.field] !== r.value;
  });
}

export function unsupportedField(field: string, resource: string, fields: Record<string, string>) {
  return badRequest(`field label not supported: ${field} (${resource} support ${Object.keys(fields).join(', ')})`);
}
