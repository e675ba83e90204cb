// Kubernetes failures (ApiException bodies, watch ERROR events, network errors) turned into
// agentplane's one error type, so callers never see a client-library error.

import { ApiError, alreadyExists, conflict, invalid, notFound } from '../../api/errors.js';

/** The parts of a metav1.Status this package uses. */
export interface K8sStatus {
  code: number;
  reason?: string;
  message?: string;
  details?: { name?: string; kind?: string; causes?: { field?: string; reason?: string; message?: string }[] };
}

/** The Status behind an error from @kubernetes/client-node, or undefined for non-HTTP failures. */
export function statusOf(err: unknown): K8sStatus | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const e = err as { code?: unknown; statusCode?: unknown; body?: unknown };
  // ApiException: `code` is the HTTP status, `body` the response text (a Status as JSON).
  const code = typeof e.code === 'number' ? e.code : typeof e.statusCode === 'number' ? e.statusCode : undefined;
  if (code === undefined) return undefined;
  let body: unknown = e.body;
  if (typeof body === 'string') {
    try {
      body = JSON.parse(body);
    } catch {
      body = undefined;
    }
  }
  const s = (typeof body === 'object' && body !== null ? body : {}) as Partial<K8sStatus>;
  return { ...s, code };
}

export interface ErrorContext {
  kind: string;
  namespace: string;
  name: string;
  /** The records' resource, e.g. agentrecords.internal.agentplane.io. */
  resource: string;
}

/** A 404 about the object itself; without a name in it, the resource (CRD) is what is missing. */
export const isMissingObject = (err: unknown): boolean => {
  const s = statusOf(err);
  return s?.code === 404 && !!s.details?.name;
};

export const namespaceNotFound = (namespace: string): ApiError =>
  new ApiError('NotFound', 404, `namespace "${namespace}" does not exist`, { kind: 'Namespace', name: namespace });

/** Maps a failed request about one object to an ApiError; anything unexpected says where it came from. */
export function toApiError(err: unknown, ctx: ErrorContext): ApiError {
  if (err instanceof ApiError) return err;
  const s = statusOf(err);
  if (!s) {
    return new ApiError('ServiceUnavailable', 503, `Kubernetes API unavailable: ${(err as Error)?.message ?? String(err)}`);
  }
  const detail = s.message ?? s.reason ?? `HTTP ${s.code}`;
  switch (s.code) {
    case 404:
      if (!s.details?.name) {
        return new ApiError('ServiceUnavailable', 503, `storage of ${ctx.kind} is not installed: CustomResourceDefinition ${ctx.resource} is missing`);
      }
      // The NamespaceLifecycle admission plugin refuses writes into a namespace that is absent.
      if (s.details?.kind === 'namespaces') return namespaceNotFound(s.details.name ?? ctx.namespace);
      return notFound(ctx.kind, ctx.name, ctx.namespace);
    case 409:
      if (s.reason === 'AlreadyExists') return alreadyExists(ctx.kind, ctx.name);
      return conflict('the object has been modified; please apply your changes to the latest version and try again', {
        kind: ctx.kind,
        name: ctx.name,
      });
    case 422: {
      // A uid that is not the stored one means the object was deleted and re-created since it
      // was read: a stale write, as in the SQLite store. (Updates report it as a 409 precondition
      // failure; this covers paths that validate it as an immutable field instead.)
      const causes = s.details?.causes ?? [];
      if (causes.some((c) => c.field === 'metadata.uid' || c.field === 'spec.uid')) {
        return conflict('the object has been deleted and re-created; read it again', { kind: ctx.kind, name: ctx.name });
      }
      // Kubernetes' own rules on metadata (label syntax, annotation size) reject the input.
      return invalid(
        ctx.kind,
        ctx.name,
        causes.length ? causes.map((c) => ({ field: c.field ?? '', message: c.message ?? c.reason ?? 'invalid' })) : [{ field: '', message: detail }],
      );
    }
    case 429:
      return new ApiError('TooManyRequests', 429, `Kubernetes API is throttling: ${detail}`);
    case 401:
    case 403:
      // The server's own identity lacks permission on its storage: an installation problem.
      return new ApiError('InternalError', 500, `agentplane may not access its ${ctx.kind} records: ${detail}`);
    default:
      if (s.code >= 500) return new ApiError('ServiceUnavailable', 503, `Kubernetes API error: ${detail}`);
      return new ApiError('InternalError', 500, `Kubernetes API error (${s.code}): ${detail}`);
  }
}
