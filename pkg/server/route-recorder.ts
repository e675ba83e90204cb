// Records every route as fastify registers it, so a test can check /openapi.json against what
// is really served (printRoutes is text meant for people).

import type { FastifyInstance } from 'fastify';

export interface RouteEntry {
  method: string;
  url: string;
}

const recorded = new WeakMap<FastifyInstance, RouteEntry[]>();

/** Call before any route is registered. */
export function recordRoutes(app: FastifyInstance): void {
  const list: RouteEntry[] = [];
  recorded.set(app, list);
  app.addHook('onRoute', (r) => {
    for (const m of Array.isArray(r.method) ? r.method : [r.method]) list.push({ method: m.toUpperCase(), url: r.url });
  });
}

/** The routes registered on `app` so far (empty when recordRoutes was not called). */
export const routesOf = (app: FastifyInstance): RouteEntry[] => [...(recorded.get(app) ?? [])];
