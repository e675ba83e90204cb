// The web dashboard at /ui: static files that hack/build-ui.mjs (esbuild) wrote to dist/ui at
// build time, served as they are. No auth here (the filter lets /ui through): the page holds no
// data; its data calls go to /api/v1 with the caller's token like any client's (docs/dashboard.md).

import { readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { ApiError } from '../../api/errors.js';

export const UI_PATH = '/ui';
/** Where browsers look for a site's icon when a page names none: the dashboard's icon. */
export const FAVICON_PATH = '/favicon.ico';
/** The icon hack/build-ui.mjs writes beside the bundle (content-hashed). */
const ICON_RE = /^favicon-[0-9a-f]+\.svg$/;

/** dist/ui, beside dist/pkg (this file is dist/pkg/server/routes/ui.js once compiled). */
export const DEFAULT_UI_DIR = fileURLToPath(new URL('../../../ui/', import.meta.url));

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
};

// The page loads only its own scripts and styles and talks only to this server (fetch and the
// event WebSockets); Chart.js and React set element styles from script, hence 'unsafe-inline'
// for styles only.
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self' ws: wss:",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

interface Asset {
  body: Buffer;
  type: string;
}

export interface UiOptions {
  /** Where the built dashboard is (default dist/ui). */
  dir?: string;
}

/**
 * index.html (never cached: it names the current bundle) at /ui/ (/ui redirects there), and the bundle's
 * content-hashed files under /ui/assets/ (cached for a year: a new build has new names). The
 * files are read once, at registration; a server without a built dashboard answers 404 with
 * how to build it. /favicon.ico is the dashboard's icon (an SVG), so no page of the server has
 * a missing icon.
 */
export function uiRoutes(opts: UiOptions = {}) {
  const dir = opts.dir ?? DEFAULT_UI_DIR;
  const index = readOptional(join(dir, 'index.html'));
  const assets = new Map<string, Asset>();
  let names: string[] = [];
  try {
    names = readdirSync(join(dir, 'assets'));
  } catch {
    // not built
  }
  for (const name of names) {
    const type = TYPES[extname(name)];
    const body = readOptional(join(dir, 'assets', name));
    if (type && body) assets.set(name, { body, type });
  }

  const icon = [...assets].find(([name]) => ICON_RE.test(name))?.[1];

  const notBuilt = (): ApiError =>
    new ApiError('NotFound', 404, `the dashboard is not built into ${dir}: run \`make build\` (or \`npm run build\`) and restart the server`);

  return async (app: FastifyInstance): Promise<void> => {
    const sendIndex = async (_req: unknown, reply: FastifyReply): Promise<FastifyReply> => {
      if (!index) throw notBuilt();
      return common(reply).type(TYPES['.html']).header('cache-control', 'no-cache').send(index);
    };
    // The page names its files relative to /ui/ (so it works behind any prefix a proxy adds).
    app.get(UI_PATH, async (req, reply) => reply.redirect(`${UI_PATH}/${req.url.slice(UI_PATH.length)}`, 308));
    app.get(`${UI_PATH}/`, sendIndex);
    app.get<{ Params: { file: string } }>(`${UI_PATH}/assets/:file`, async (req, reply) => {
      // Only names the build wrote: nothing else on disk is reachable from here.
      const asset = assets.get(req.params.file);
      if (!asset) throw index ? new ApiError('NotFound', 404, `no dashboard file ${req.params.file}`) : notBuilt();
      return common(reply).type(asset.type).header('cache-control', 'public, max-age=31536000, immutable').send(asset.body);
    });
    // Not content-hashed (the name is fixed): cached for a day.
    app.get(FAVICON_PATH, async (_req, reply) => {
      if (!icon) throw notBuilt();
      return common(reply).type(icon.type).header('cache-control', 'public, max-age=86400').send(icon.body);
    });
  };
}

function common(reply: FastifyReply): FastifyReply {
  return reply.header('content-security-policy', CSP).header('x-content-type-options', 'nosniff').header('referrer-policy', 'no-referrer');
}

function readOptional(path: string): Buffer | undefined {
  try {
    return readFileSync(path);
  } catch {
    return undefined;
  }
}
