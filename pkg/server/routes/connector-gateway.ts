// The connector gateway's mount point on the worker-facing listener, beside the model proxy
// (the public app in the embedded home, the worker listener in the cluster home, which pods
// reach as they reach the control channel). The body is not parsed: the gateway streams the raw
// request to the connector and its answer back.

import type { FastifyInstance } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, toRestBody } from '../../api/errors.js';
import { CONNECTOR_GATEWAY_PATH } from '../../api/worker-protocol.js';

export interface ConnectorGatewayHandler {
  handle(req: IncomingMessage, res: ServerResponse, namespace: string, name: string): Promise<void>;
}

/** Namespaces and connector names are DNS labels; anything else names no connector. */
const LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

export function connectorGatewayRoutes(gateway: ConnectorGatewayHandler) {
  return async (app: FastifyInstance): Promise<void> => {
    // This plugin's scope only: every body stays an unread stream for the gateway.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', (_req, _payload, done) => done(null));
    app.all<{ Params: { namespace: string; name: string } }>(`${CONNECTOR_GATEWAY_PATH}/:namespace/:name/mcp`, (req, reply) => {
      reply.hijack();
      const { namespace, name } = req.params;
      const res = reply.raw;
      const fail = (err: ApiError): void => {
        req.raw.resume();
        if (res.headersSent) return void res.destroy();
        res.writeHead(err.code, { 'content-type': 'application/json' }).end(JSON.stringify(toRestBody(err)));
      };
      if (!LABEL.test(namespace) || !LABEL.test(name)) return fail(new ApiError('NotFound', 404, `no connector "${namespace}/${name}"`));
      gateway.handle(req.raw, res, namespace, name).catch((err: unknown) => {
        req.log.error({ err: err instanceof Error ? err.message : String(err), namespace, connector: name }, 'connector gateway failed');
        fail(new ApiError('BadGateway', 502, 'connector gateway failure'));
      });
    });
  };
}
