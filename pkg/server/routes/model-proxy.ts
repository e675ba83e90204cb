// The model proxy's mount point on the worker-facing listener (the public app in the embedded
// home, the loopback worker listener in the cluster home). The body is not parsed: the proxy
// reads the raw request and writes the raw response itself, so streams pass unbuffered.

import type { FastifyInstance } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { MODEL_PROXY_PATH } from '../../modelproxy/index.js';

export interface ModelProxyHandler {
  handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<void>;
}

export function modelProxyRoutes(proxy: ModelProxyHandler) {
  return async (app: FastifyInstance): Promise<void> => {
    // This plugin's scope only: every body stays an unread stream for the proxy.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', (_req, _payload, done) => done(null));
    app.all(`${MODEL_PROXY_PATH}/*`, (req, reply) => {
      reply.hijack();
      const path = (req.raw.url ?? '').slice(MODEL_PROXY_PATH.length) || '/';
      proxy.handle(req.raw, reply.raw, path).catch((err: unknown) => {
        req.log.error({ err: String(err) }, 'model proxy failed');
        if (!reply.raw.headersSent) reply.raw.writeHead(502, { 'content-type': 'application/json' });
        reply.raw.end(JSON.stringify({ type: 'error', error: { type: 'api_error', message: 'model proxy failure' } }));
      });
    });
  };
}
