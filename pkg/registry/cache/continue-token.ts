// List continue tokens as kube-apiserver makes them (apiserver/pkg/storage/continue.go): base64url
// (no padding) of {"v":"meta.k8s.io/v1","rv":<list resourceVersion>,"start":"<namespace>/<name>\u0000"},
// where `start` is the key after the last item served. rv -1 marks an inconsistent continuation
// (the remainder read at the current state), which a 410 for a too-old token offers.

import { badRequest } from '../../api/errors.js';

const VERSION = 'meta.k8s.io/v1';

export interface Continue {
  /** The snapshot the pages read; -1 for "current". */
  rv: number;
  /** Serve keys >= this one. */
  start: string;
}

/** The key objects are ordered by in a list, as etcd orders kube-apiserver's keys. */
export const listKey = (namespace: string, name: string): string => `${namespace}/${name}`;

/** `start`: the key to go on from (the last key served followed by "\u0000"). */
export function encodeContinue(rv: number, start: string): string {
  return Buffer.from(JSON.stringify({ v: VERSION, rv, start })).toString('base64url');
}

/** Throws 400 BadRequest with kube-apiserver's wording for a token it did not make. */
export function decodeContinue(token: string): Continue {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw badRequest('invalid continue token: continue key is not valid: illegal base64 data');
  }
  const c = parsed as { v?: unknown; rv?: unknown; start?: unknown };
  if (!c || typeof c !== 'object' || c.v !== VERSION) {
    throw badRequest('invalid continue token: continue key is not supported by this version');
  }
  if (typeof c.rv !== 'number' || !Number.isSafeInteger(c.rv) || (c.rv < 1 && c.rv !== -1) || typeof c.start !== 'string' || c.start === '') {
    throw badRequest('invalid continue token: continue key is not valid');
  }
  // Like kube-apiserver, refuse a key that would leave the resource's key space.
  if (c.start.startsWith('/') || c.start.split('/').includes('..')) throw badRequest('invalid continue token: continue key is not valid: path traversal');
  return { rv: c.rv, start: c.start };
}
