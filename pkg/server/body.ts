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
  // eslint-disable-next-line @typescript-eslint/no-misused-promises -- fastify's default JSON parser is the callback form; its type also allows the async one
  app.addContentTypeParser('application/json', { parseAs: 'string' }, lenientJson(json));
  app.addContentTypeParser('*', { parseAs: 'string' }, (req, body, done) => {
    done(null, req.is404 ? undefined : new UnparsedBody(req.headers['content-type'] ?? '', String(body)));
  });
}

/**
 * The deepest nesting a request body may have. The API's objects are a few levels deep; the
 * code that walks bodies (validation, merge patch, apply) recurses, so a body nested deeper is
 * refused once, here, instead of exhausting the stack somewhere later (Go's encoding/json, and so
 * kube-apiserver, stops at 10 000).
 */
export const MAX_BODY_DEPTH = 1000;

const tooDeep = (): ApiError => new ApiError('BadRequest', 400, `the body is nested deeper than ${MAX_BODY_DEPTH} levels`);

/** 400 when `value` nests objects and arrays deeper than MAX_BODY_DEPTH (checked without recursion). */
export function checkBodyDepth(value: unknown): void {
  let level: unknown[] = [value];
  for (let depth = 0; level.length; depth++) {
    if (depth > MAX_BODY_DEPTH) throw tooDeep();
    const next: unknown[] = [];
    for (const v of level) if (v !== null && typeof v === 'object') for (const child of Object.values(v)) next.push(child);
    level = next;
  }
}

/** A JSON parser for which a blank body, or any body of an unrouted path, is no body. */
export function lenientJson(json: (req: FastifyRequest, body: string, done: Done) => void) {
  return (req: FastifyRequest, body: string | Buffer, done: Done): void => {
    if (req.is404 || String(body).trim() === '') return done(null, undefined);
    const text = String(body);
    if (textDepth(text) > MAX_BODY_DEPTH) return done(tooDeep());
    json(req, text, (err, value) => {
      if (err) return done(malformedJson(text));
      try {
        checkBodyDepth(value);
      } catch (e) {
        return done(e as Error);
      }
      done(null, value);
    });
  };
}

/**
 * Why a body the JSON parser refused is refused (fastify's parser says only "not valid JSON"):
 * JSON's own syntax error, else the one key valid JSON may not have here, `__proto__` (it would
 * pollute the object's prototype). Duplicate keys are not an error: the last one wins, as in
 * JSON.parse (docs/decisions.md "Duplicate JSON keys").
 */
function malformedJson(text: string): ApiError {
  try {
    JSON.parse(text);
  } catch (err) {
    return new ApiError('BadRequest', 400, `the body is not valid JSON: ${(err as Error).message}`);
  }
  return new ApiError('BadRequest', 400, 'the body may not contain a "__proto__" key');
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

/**
 * The deepest nesting of brackets ([ ] and { }: JSON, YAML flow collections) in `text`, quoted
 * strings skipped: a linear scan that refuses a deep body before a parser spends time on it.
 */
export function textDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let quote = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === '\\' && quote === '"') i++;
      else if (c === quote) quote = '';
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '[' || c === '{') max = Math.max(max, ++depth);
    else if (c === ']' || c === '}') depth--;
  }
  return max;
}
