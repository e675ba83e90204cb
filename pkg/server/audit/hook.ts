// The audit hooks: every mutating request (create, update, patch, delete, deletecollection on
// either API; POST/PUT/PATCH/DELETE elsewhere) is written, once, when its response is complete,
// refusals (400, 401, 403, 409, ...) included. Reads are not written. The worker control channel
// and the model proxy (/internal/...) are the workers', not users' requests: never written.
//
// What the request did is named by the auth code's attributes (../auth/attributes.ts): those
// the filter authorized when authentication is on, else the same computation here; the policy
// (policy.ts) gives each its level from those attributes and the user.

import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { primaryAttributes, type RequestAttributes } from '../auth/attributes.js';
import { BYPASS_PATHS } from '../auth/filter.js';
import { ANONYMOUS, auditEvent } from './event.js';
import { type AuditPolicy, decide, isMutating, writesAnything } from './policy.js';
import { redactRequestUri } from './redact.js';
import type { AuditSink } from './sink.js';
import { underAny } from '../path-prefix.js';

export interface AuditOptions {
  policy: AuditPolicy;
  sink: AuditSink;
  /** Paths (and everything under them) never audited; default /internal and the filter's bypass paths. */
  skipPaths?: string[];
}

const RECEIVED = Symbol('agentplane.auditReceived');
const AUDIT_ID = Symbol('agentplane.auditID');
type Stamped = FastifyRequest & { [RECEIVED]?: Date; [AUDIT_ID]?: string };

/** Adds the hooks to `app` itself (on the root instance, before any route); nothing when the policy writes nothing. */
export function installAuditLog(app: FastifyInstance, opts: AuditOptions): void {
  if (!writesAnything(opts.policy)) return;
  const skip = opts.skipPaths ?? ['/internal', ...BYPASS_PATHS];
  const skipped = (path: string): boolean => underAny(path, skip);

  app.addHook('onRequest', async (req, reply) => {
    const r = req as Stamped;
    r[RECEIVED] = new Date();
    if (skipped(pathOf(req.url))) return;
    const id = randomUUID();
    r[AUDIT_ID] = id;
    // As kube-apiserver: the response names the audit ID, so a client can find its event.
    void reply.header('Audit-ID', id);
  });

  app.addHook('onResponse', async (req, reply) => {
    const r = req as Stamped;
    // A request refused by a check that runs before these hooks (browser-guard.ts: Host,
    // Origin, Content-Type) has no ID yet, and is audited all the same.
    if (!r[AUDIT_ID]) {
      if (skipped(pathOf(req.url))) return;
      r[AUDIT_ID] = randomUUID();
    }
    const attributes = attributesOf(req, reply.statusCode);
    if (!isMutating(attributes)) return;
    const { level, omitManagedFields } = decide(opts.policy, attributes, req.user ?? ANONYMOUS);
    if (level === 'None') return;
    opts.sink.write(
      auditEvent(
        level,
        {
          auditID: r[AUDIT_ID],
          requestURI: redactRequestUri(req.url),
          attributes,
          ...(req.user ? { user: req.user } : {}),
          sourceIPs: sourceIPs(req),
          ...(req.headers['user-agent'] ? { userAgent: req.headers['user-agent'] } : {}),
          code: reply.statusCode,
          body: req.body,
          received: r[RECEIVED] ?? new Date(Date.now() - reply.elapsedTime),
          completed: new Date(),
        },
        omitManagedFields,
      ),
    );
  });
}

function attributesOf(req: FastifyRequest, code: number): RequestAttributes {
  const authorized = req.authorizedAs?.[0];
  if (authorized) return authorized;
  // Without the filter's lookup, POST /api/v1/agents tells by its answer: 200 for a task handed
  // to an existing agent, 201 for a new one.
  const query = (req.query && typeof req.query === 'object' ? req.query : {}) as Record<string, string>;
  return primaryAttributes({ method: req.method, url: req.url, query, hasBody: true, body: req.body }, code === 200);
}

/** As kube's utilnet.SourceIPs: X-Forwarded-For's addresses, X-Real-Ip, then the peer, without repeats. */
function sourceIPs(req: FastifyRequest): string[] {
  const out: string[] = [];
  const add = (ip: string | undefined): void => {
    const v = ip?.trim();
    if (v && !out.includes(v)) out.push(v);
  };
  const xff = req.headers['x-forwarded-for'];
  for (const part of (Array.isArray(xff) ? xff.join(',') : (xff ?? '')).split(',')) add(part);
  const real = req.headers['x-real-ip'];
  add(Array.isArray(real) ? real[0] : real);
  add(req.socket?.remoteAddress);
  return out;
}

const pathOf = (url: string): string => url.split('?')[0];
