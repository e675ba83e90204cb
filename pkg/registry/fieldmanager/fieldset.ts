// Field sets: which fields of an object a manager owns, as a tree keyed by path elements in the
// FieldsV1 encoding Kubernetes stores in metadata.managedFields: `f:<name>` (a field or map key),
// `k:{"<key>":<value>,...}` (a list item by its keys), `v:<json>` (a set item), `i:<n>` (an item
// by index). A node is a member of the set itself when it has no children or carries `.`.

export type PathElement = string;
export type Path = PathElement[];

export class FieldSet {
  /** Whether the path leading here is itself in the set. */
  member = false;
  readonly children = new Map<PathElement, FieldSet>();

  static of(...paths: Path[]): FieldSet {
    const s = new FieldSet();
    for (const p of paths) s.insert(p);
    return s;
  }

  insert(path: Path): void {
    const n = path.reduce<FieldSet>((at, pe) => {
      let c = at.children.get(pe);
      if (!c) at.children.set(pe, (c = new FieldSet()));
      return c;
    }, this);
    n.member = true;
  }

  has(path: Path): boolean {
    const n = this.node(path);
    return !!n && n.member;
  }

  /** The subtree at `path` (its members are relative to it), if any. */
  node(path: Path): FieldSet | undefined {
    return path.reduce<FieldSet | undefined>((at, pe) => at?.children.get(pe), this);
  }

  /** True when `path` or anything below it is a member. */
  hasPrefix(path: Path): boolean {
    const n = this.node(path);
    return !!n && !n.empty();
  }

  empty(): boolean {
    if (this.member) return false;
    for (const c of this.children.values()) if (!c.empty()) return false;
    return true;
  }

  clone(): FieldSet {
    const s = new FieldSet();
    s.member = this.member;
    for (const [k, c] of this.children) s.children.set(k, c.clone());
    return s;
  }

  union(other: FieldSet): FieldSet {
    const s = this.clone();
    s.addAll(other);
    return s;
  }

  private addAll(other: FieldSet): void {
    this.member ||= other.member;
    for (const [k, c] of other.children) {
      let mine = this.children.get(k);
      if (!mine) this.children.set(k, (mine = new FieldSet()));
      mine.addAll(c);
    }
  }

  /** Members of this set that are not members of `other` (path by path, not recursive). */
  difference(other: FieldSet): FieldSet {
    const s = new FieldSet();
    s.member = this.member && !other.member;
    for (const [k, c] of this.children) {
      const o = other.children.get(k);
      const d = o ? c.difference(o) : c.clone();
      if (!d.empty()) s.children.set(k, d);
    }
    return s;
  }

  intersection(other: FieldSet): FieldSet {
    const s = new FieldSet();
    s.member = this.member && other.member;
    for (const [k, c] of this.children) {
      const o = other.children.get(k);
      if (!o) continue;
      const i = c.intersection(o);
      if (!i.empty()) s.children.set(k, i);
    }
    return s;
  }

  /** Removes `paths` and everything below them. */
  withoutSubtrees(paths: Path[]): FieldSet {
    const s = this.clone();
    for (const p of paths) {
      if (!p.length) return new FieldSet();
      const parent = s.node(p.slice(0, -1));
      parent?.children.delete(p[p.length - 1]);
    }
    return s;
  }

  /** Every member path, in FieldsV1 order (parents before children). */
  paths(prefix: Path = []): Path[] {
    const out: Path[] = [];
    if (this.member) out.push(prefix);
    for (const k of sortedKeys(this.children)) out.push(...this.children.get(k)!.paths([...prefix, k]));
    return out;
  }

  equals(other: FieldSet): boolean {
    return this.difference(other).empty() && other.difference(this).empty();
  }

  /** The FieldsV1 JSON object. */
  toFieldsV1(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    if (this.member && this.children.size) out['.'] = {};
    for (const k of sortedKeys(this.children)) {
      const c = this.children.get(k)!;
      if (!c.empty()) out[k] = c.toFieldsV1();
    }
    return out;
  }

  static fromFieldsV1(v: unknown): FieldSet {
    const s = new FieldSet();
    if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error('FieldsV1 must be an object');
    const entries = Object.entries(v);
    if (!entries.length) s.member = true;
    for (const [k, c] of entries) {
      if (k === '.') s.member = true;
      else if (/^[fkvi]:/.test(k)) s.children.set(k, FieldSet.fromFieldsV1(c));
      else throw new Error(`FieldsV1: unknown path element "${k}"`);
    }
    return s;
  }
}

// Kubernetes orders path elements fields, then keys, then values, then indexes.
const ORDER: Record<string, number> = { f: 0, k: 1, v: 2, i: 3 };
function sortedKeys(m: Map<PathElement, FieldSet>): PathElement[] {
  return [...m.keys()].sort((a, b) => {
    const d = ORDER[a[0]] - ORDER[b[0]];
    if (d) return d;
    if (a[0] === 'i') return Number(a.slice(2)) - Number(b.slice(2));
    return a < b ? -1 : a > b ? 1 : 0;
  });
}

export const field = (name: string): PathElement => `f:${name}`;
export const index = (i: number): PathElement => `i:${i}`;
export const valueElement = (v: unknown): PathElement => `v:${JSON.stringify(v)}`;
/** `k:{...}` with the key fields in name order, as Kubernetes writes them. */
export const keyElement = (keys: Record<string, unknown>): PathElement =>
  `k:${JSON.stringify(
    Object.fromEntries(
      Object.keys(keys)
        .sort()
        .map((k) => [k, keys[k]]),
    ),
  )}`;

/** A path as kube-apiserver prints it in conflicts: `.spec.model`, `.spec.members[name="a"]`, `.x[="v"]`. */
export function pathString(path: Path): string {
  return path
    .map((pe) => {
      const body = pe.slice(2);
      switch (pe[0]) {
        case 'f':
          return `.${body}`;
        case 'k': {
          const keys = JSON.parse(body) as Record<string, unknown>;
          return `[${Object.entries(keys)
            .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
            .join(',')}]`;
        }
        case 'v':
          return `[=${body}]`;
        default:
          return `[${body}]`;
      }
    })
    .join('');
}
