// The one error type of agentplane. Every failure a client can cause is an ApiError with a
// reason it can branch on and a message it can act on; anything else is an InternalError.

export type Reason =
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Expired'
  | 'Invalid'
  | 'SecretBindingMismatch'
  | 'BadRequest'
  | 'Unauthorized'
  | 'Forbidden'
  | 'MethodNotAllowed'
  | 'NotAcceptable'
  | 'RequestEntityTooLarge'
  | 'URITooLong'
  | 'RequestHeaderFieldsTooLarge'
  | 'RequestTimeout'
  | 'UnsupportedMediaType'
  | 'UpgradeRequired'
  | 'MisdirectedRequest'
  | 'TooManyRequests'
  | 'InternalError'
  | 'BadGateway'
  | 'NotImplemented'
  | 'ServiceUnavailable'
  | 'Timeout';

export interface Cause {
  field: string;
  message: string;
  /** Kubernetes' cause type when the message does not tell it (e.g. FieldManagerConflict). */
  reason?: string;
}

export interface ErrorDetails {
  kind?: string;
  name?: string;
  causes?: Cause[];
  [key: string]: unknown;
}

export class ApiError extends Error {
  constructor(
    readonly reason: Reason,
    readonly code: number,
    message: string,
    readonly details: ErrorDetails = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export const notFound = (kind: string, name: string, namespace?: string): ApiError =>
  new ApiError('NotFound', 404, namespace ? `${kind} "${name}" not found in namespace "${namespace}"` : `${kind} "${name}" not found`, { kind, name });

export const alreadyExists = (kind: string, name: string): ApiError => new ApiError('AlreadyExists', 409, `${kind} "${name}" already exists`, { kind, name });

export const conflict = (message: string, details: ErrorDetails = {}): ApiError => new ApiError('Conflict', 409, message, details);

/** A watch or list continuation asked for history the store no longer holds (410 Gone). */
export const expired = (resourceVersion: string): ApiError =>
  new ApiError('Expired', 410, `too old resource version: ${resourceVersion}; list again to get a current one`);

/**
 * A list continuation whose snapshot is gone (410, kube-apiserver's words); `inconsistentContinue`
 * reads the remainder at the current state instead (Status metadata.continue).
 */
export const continueExpired = (inconsistentContinue: string): ApiError =>
  new ApiError(
    'Expired',
    410,
    'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.',
    { continue: inconsistentContinue },
  );

/** A read at a resourceVersion the server has not reached in time (504, as kube-apiserver answers). */
export const resourceVersionTooLarge = (requested: string, current: string): ApiError =>
  new ApiError('Timeout', 504, `Too large resource version: ${requested}, current: ${current}`, {
    causes: [{ field: '', message: 'Too large resource version' }],
    retryAfterSeconds: 1,
  });

export const badRequest = (message: string, details: ErrorDetails = {}): ApiError => new ApiError('BadRequest', 400, message, details);

/** Validation failure; REST renders it as 400, the aggregated API as 422 (Kubernetes' Invalid). */
export const invalid = (kind: string, name: string | undefined, causes: Cause[]): ApiError =>
  new ApiError('Invalid', 400, invalidMessage(kind, name, causes), { kind, ...(name ? { name } : {}), causes });

const invalidMessage = (kind: string, name: string | undefined, causes: Cause[]): string =>
  `${kind}${name ? ` "${name}"` : ''} is invalid: ${causes.map((c) => `${c.field}: ${c.message}`).join('; ')}`;

/**
 * A field of a stored object as the REST mirror's flat bodies name it: spec fields sit at the top
 * level (`spec.connectors[0]` is `connectors[0]`), as do the name and namespace.
 */
export const restField = (field: string): string =>
  field.startsWith('spec.') ? field.slice(5) : field === 'metadata.name' ? 'name' : field === 'metadata.namespace' ? 'namespace' : field;

/**
 * A connector names a secret that may not be sent to its URL (the secret's allowedUrls do not
 * cover it): 422 in both APIs, with its own reason here (the aggregated API says Invalid).
 */
export const secretBindingMismatch = (message: string, details: ErrorDetails): ApiError => new ApiError('SecretBindingMismatch', 422, message, details);

/** Refused for the rate of requests; the client may retry after `retryAfterSeconds`. */
export const tooManyRequests = (message: string, retryAfterSeconds: number): ApiError => new ApiError('TooManyRequests', 429, message, { retryAfterSeconds });

export const internalError = (message = 'internal error'): ApiError => new ApiError('InternalError', 500, message);

export interface RestErrorBody {
  error: string;
  reason: Reason;
  code: number;
  details: ErrorDetails;
}

export function toRestBody(err: ApiError): RestErrorBody {
  const causes = err.details.causes?.map((c) => ({ ...c, field: restField(c.field) }));
  if (!causes) return { error: err.message, reason: err.reason, code: err.code, details: err.details };
  const error = err.reason === 'Invalid' && err.details.kind ? invalidMessage(err.details.kind, err.details.name, causes) : err.message;
  return { error, reason: err.reason, code: err.code, details: { ...err.details, causes } };
}

export function isApiError(err: unknown): err is ApiError {
  return err instanceof ApiError;
}

// ---------------------------------------------------------------------------------------------
// The Kubernetes rendering: metav1.Status, as the aggregated API (/apis/agentplane.io) answers.

export interface StatusCause {
  reason: string;
  message: string;
  field: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

/** metav1.Status (kind Status, apiVersion v1). */
export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  /** ListMeta: `continue` on a 410 for a too-old list continuation. */
  metadata: { continue?: string };
  status: 'Failure' | 'Success';
  message: string;
  reason: string;
  code: number;
  details?: StatusDetails;
}

/** HTTP codes of metav1.Status per reason; Invalid is 422 here (REST answers 400). */
const STATUS_CODES: Partial<Record<Reason, number>> = {
  BadRequest: 400,
  Unauthorized: 401,
  Forbidden: 403,
  NotFound: 404,
  MethodNotAllowed: 405,
  NotAcceptable: 406,
  AlreadyExists: 409,
  Conflict: 409,
  Expired: 410,
  RequestEntityTooLarge: 413,
  URITooLong: 414,
  RequestTimeout: 408,
  RequestHeaderFieldsTooLarge: 431,
  UnsupportedMediaType: 415,
  Invalid: 422,
  SecretBindingMismatch: 422,
  TooManyRequests: 429,
  InternalError: 500,
  NotImplemented: 501,
  ServiceUnavailable: 503,
  Timeout: 504,
};

/** Kubernetes' cause reasons, told from our messages (validation.ts writes them). */
function causeReason(message: string): string {
  if (message === 'is required') return 'FieldValueRequired';
  if (message === 'Too large resource version') return 'ResourceVersionTooLarge';
  if (message.startsWith('Forbidden: ')) return 'FieldValueForbidden';
  if (message.startsWith('must be one of')) return 'FieldValueNotSupported';
  return 'FieldValueInvalid';
}

/**
 * The error as Kubernetes' metav1.Status, with Kubernetes' reason and code. `group` goes into
 * details (for errors about one of the group's objects).
 */
export function toStatus(err: ApiError, group?: string): Status {
  // BadGateway has no Kubernetes reason: it stays a server-side failure with its own code. A
  // secret binding mismatch is, to Kubernetes clients, an invalid field (spec.url).
  const reason = err.reason === 'BadGateway' ? 'InternalError' : err.reason === 'SecretBindingMismatch' ? 'Invalid' : err.reason;
  const code = err.reason === 'BadGateway' ? 502 : (STATUS_CODES[err.reason] ?? err.code);
  const d = err.details;
  const details: StatusDetails = {
    ...(typeof d.name === 'string' ? { name: d.name } : {}),
    ...(group && typeof d.kind === 'string' ? { group } : {}),
    ...(typeof d.kind === 'string' ? { kind: d.kind } : {}),
    ...(d.causes?.length ? { causes: d.causes.map((c) => ({ reason: c.reason ?? causeReason(c.message), message: c.message, field: c.field })) } : {}),
    ...(typeof d.retryAfterSeconds === 'number' ? { retryAfterSeconds: d.retryAfterSeconds } : {}),
  };
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: typeof d.continue === 'string' ? { continue: d.continue } : {},
    status: 'Failure',
    message: err.message,
    reason,
    code,
    ...(Object.keys(details).length ? { details } : {}),
  };
}
