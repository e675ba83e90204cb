// Reports of pods' model-proxy sidecars (pkg/modelproxy/reports.ts), on the worker-facing
// listener beside the model proxy. Authenticated by the agent's report credential, which only its
// pod's sidecar holds, not by the user auth filter (it is under the proxy's bypassed path).
// Without sidecars (the embedded home, or pods on the server's proxy) the server meters every
// request itself, and refuses reports: 404.

import type { FastifyInstance } from 'fastify';
import { BUDGET_HEADER, MODEL_REPORT_PATH } from '../../api/worker-protocol.js';
import type { ModelReports } from '../../modelproxy/reports.js';
import { credentialOf } from '../../modelproxy/proxy.js';

export function modelReportRoutes(reports: ModelReports | undefined) {
  return async (app: FastifyInstance): Promise<void> => {
    app.post(MODEL_REPORT_PATH, { bodyLimit: 64 * 1024 }, async (req, reply) => {
      if (!reports) {
        const message = 'this server runs no model-proxy sidecars: it meters model requests itself and takes no reports';
        return reply.code(404).send({ type: 'error', error: { type: 'not_found_error', message } });
      }
      // An `admit` of a held task waits: the sidecar giving up (its engine went away) ends the wait.
      const gone = new AbortController();
      reply.raw.once('close', () => {
        if (!reply.raw.writableFinished) gone.abort();
      });
      const out = await reports.apply(credentialOf(req.headers), req.body, gone.signal);
      if (out.status === 204)
        return reply
          .code(204)
          .header(BUDGET_HEADER, out.budgeted ? 'on' : 'off')
          .send();
      if (out.status === 200)
        return reply
          .code(200)
          .header(BUDGET_HEADER, out.budgeted ? 'on' : 'off')
          .send(out.answer);
      const type = out.status === 401 ? 'authentication_error' : 'invalid_request_error';
      return reply.code(out.status).send({ type: 'error', error: { type, message: out.message } });
    });
  };
}
