// Every route the server registers, by path pattern, so a request for a known path with the
// wrong method gets 405 with an `Allow` header instead of 404 (as RFC 9110 asks), and so tests
// can hold the OpenAPI document to what is really served.

import type { FastifyInstance } from 'fastify';

export interface RouteEntry {
  /** fastify's pattern, e.g. /api/v1/agents/:name */
  url: string;
  methods: Set<string>;
}

const tables = new WeakMap<FastifyInstance, RouteTable>();

/** Every (method, url) served by `app` (empty when no table tracks it). */
export const routesOf = (app: FastifyInstance): { method: string; url: string }[] =>
  (tables.get(app)?.routes() ?? []).flatMap((r) => [...r.methods].map((method) => ({ method, url: r.url })));

export class RouteTable {
  private readonly entries = new Map<string, RouteEntry & { re: RegExp }>();

  /** Records the routes registered on `app` from now on (call before registering any). */
  track(app: FastifyInstance): void {
    tables.set(app, this);
    app.addHook('onRoute', (route) => {
      const methods = [route.method].flat().map((m) => m.toUpperCase());
      let entry = this.entries.get(route.url);
      if (!entry) {
        entry = { url: route.url, methods: new Set(), re: patternOf(route.url) };
        this.entries.set(route.url, entry);
      }
      for (const m of methods) entry.methods.add(m);
    });
  }

  /** The methods served for a concrete path (empty for an unknown path). */
  methodsFor(path: string): string[] {
    const out = new Set<string>();
    for (const e of this.entries.values()) if (e.re.test(path)) e.methods.forEach((m) => out.add(m));
    return [...out].sort();
  }

  routes(): RouteEntry[] {
    return [...this.entries.values()].map(({ url, methods }) => ({ url, methods: new Set(methods) }));
  }
}

/** fastify path pattern -> anchored regular expression (`:param` one segment, `*` the rest). */
function patternOf(url: string): RegExp {
  const body = url
    .split(/(:[A-Za-z0-9_]+|\*)/)
    .map((part) => (part === '*' ? '.*' : part.startsWith(':') ? '[^/]+' : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${body}$`);
}
