// Reports of pods' model-proxy sidecars (pkg/modelproxy/reports.ts), on the worker-facing
// listener beside the model proxy. Authenticated by the agent's model credential, not by the
// user auth filter (it is under the proxy's bypassed path).

import type { FastifyInstance } from 'fastify';
import { MODEL_REPORT_PATH } from '../../api/worker-protocol.js';
import type { ModelReports } from '../../modelproxy/reports.js';
import { credentialOf } from '../../modelproxy/proxy.js';

export function modelReportRoutes(reports: ModelReports) {
  return async (app: FastifyInstance): Promise<void> => {
    app.post(MODEL_REPORT_PATH, { bodyLimit: 64 * 1024 }, async (req, reply) => {
      const out = await reports.apply(credentialOf(req.headers), req.body);
      if (out.status === 204) return reply.code(204).send();
      const type = out.status === 401 ? 'authentication_error' : 'invalid_request_error';
      return reply.code(out.status).send({ type: 'error', error: { type, message: out.message } });
    });
  };
}
