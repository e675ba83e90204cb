// One place that renders an ApiError the way the path's API does: metav1.Status on the
// Kubernetes paths (/apis, and anything outside the REST mirror), the REST error body on
// /api/v1. For refusals made before a route's own error handler is in reach: hooks (auth, URL
// length, rate limit), fastify's framework errors and the raw socket (clientError).

import type { FastifyReply, FastifyRequest } from 'fastify';
import { type ApiError, toRestBody, toStatus } from '../api/errors.js';

export const pathOf = (url: string): string => url.split('?')[0];

/** True for the REST mirror, whose errors use the REST body rather than metav1.Status. */
export const isRestPath = (path: string): boolean => path === '/api/v1' || path.startsWith('/api/v1/');

/** True for the aggregated (Kubernetes) API, whose errors are metav1.Status. */
export const isKubernetesPath = (path: string): boolean => path === '/apis' || path.startsWith('/apis/');

/** The error body for a request to `path`: REST body on /api/v1, else metav1.Status. */
export function errorBodyFor(path: string, err: ApiError, group?: string): unknown {
  return isRestPath(path) ? toRestBody(err) : toStatus(err, group);
}

/** Sends `err` as the path's API renders errors, with Retry-After when the error carries one. */
export function sendError(req: FastifyRequest, reply: FastifyReply, err: ApiError): FastifyReply {
  const group = typeof err.details.group === 'string' ? err.details.group : undefined;
  const retry = err.details.retryAfterSeconds;
  if (typeof retry === 'number') void reply.header('retry-after', String(retry));
  return reply
    .code(err.code)
    .header('content-type', 'application/json; charset=utf-8')
    .send(errorBodyFor(pathOf(req.url), err, group));
}
