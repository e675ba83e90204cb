// Request bodies, read the way clients send them. Many clients put `Content-Type:
// application/json` on every request, bodiless ones included (cancel, delete, break-up), so an
// empty JSON body parses as "no body" and only a route that needs one refuses it. A body of a
// type this API does not read is kept unparsed until a route asks for it: a route that reads
// no body ignores it, one that does answers 415. Nothing is parsed for a path that has no route,
// so an unknown path is 404 whatever its body.

import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../api/errors.js';

/** A request body of a media type this API does not read. */
export class UnparsedBody {
  constructor(
    readonly contentType: string,
    readonly text: string,
  ) {}
}

type Done = (err: Error | null, body?: unknown) => void;

/** Installs the JSON parser (empty is "no body") and the catch-all that defers the 415. */
export function installBodyParsers(app: FastifyInstance): void {
  const json = app.getDefaultJsonParser('error', 'ignore');
  // fastify's own text/plain parser would hand a string to a route that wants JSON (a 400 where
  // the client's mistake is the media type): text goes to the catch-all like any other type.
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'string' }, lenientJson(json));
  app.addContentTypeParser('*', { parseAs: 'string' }, (req, body, done) => {
    done(null, req.is404 ? undefined : new UnparsedBody(req.headers['content-type'] ?? '', String(body)));
  });
}

/** A JSON parser for which a blank body, or any body of an unrouted path, is no body. */
export function lenientJson(json: (req: FastifyRequest, body: string, done: Done) => void) {
  return (req: FastifyRequest, body: string | Buffer, done: Done): void => {
    if (req.is404 || String(body).trim() === '') return done(null, undefined);
    json(req, String(body), done);
  };
}

/**
 * The JSON body of a route that reads one: undefined when none was sent (the route's schema
 * then says it is required), 415 when it is of a type this API does not read.
 */
export function jsonBody(req: FastifyRequest, accepted = 'application/json'): unknown {
  if (req.body instanceof UnparsedBody) throw unsupportedMediaType(req.body.contentType, accepted);
  return req.body;
}

export const unsupportedMediaType = (contentType: string, accepted = 'application/json'): ApiError =>
  new ApiError(
    'UnsupportedMediaType',
    415,
    `the body's Content-Type "${contentType}" is not supported: use ${accepted}${contentType ? '' : ' (no Content-Type was given)'}`,
  );
