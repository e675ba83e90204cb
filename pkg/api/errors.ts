// The one error type of agentplane. Every failure a client can cause is an ApiError with a
// reason it can branch on and a message it can act on; anything else is an InternalError.

export type Reason =
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Expired'
  | 'Invalid'
  | 'BadRequest'
  | 'Unauthorized'
  | 'Forbidden'
  | 'MethodNotAllowed'
  | 'RequestEntityTooLarge'
  | 'UnsupportedMediaType'
  | 'TooManyRequests'
  | 'InternalError'
  | 'BadGateway'
  | 'ServiceUnavailable';

export interface Cause {
  field: string;
  message: string;
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
  new ApiError(
    'NotFound',
    404,
    namespace ? `${kind} "${name}" not found in namespace "${namespace}"` : `${kind} "${name}" not found`,
    { kind, name },
  );

export const alreadyExists = (kind: string, name: string): ApiError =>
  new ApiError('AlreadyExists', 409, `${kind} "${name}" already exists`, { kind, name });

export const conflict = (message: string, details: ErrorDetails = {}): ApiError =>
  new ApiError('Conflict', 409, message, details);

/** A watch or list continuation asked for history the store no longer holds (410 Gone). */
export const expired = (resourceVersion: string): ApiError =>
  new ApiError('Expired', 410, `too old resource version: ${resourceVersion}; list again to get a current one`);

export const badRequest = (message: string, details: ErrorDetails = {}): ApiError =>
  new ApiError('BadRequest', 400, message, details);

/** Validation failure; REST renders it as 400, the aggregated API as 422 (Kubernetes' Invalid). */
export const invalid = (kind: string, name: string | undefined, causes: Cause[]): ApiError =>
  new ApiError(
    'Invalid',
    400,
    `${kind}${name ? ` "${name}"` : ''} is invalid: ${causes.map((c) => `${c.field}: ${c.message}`).join('; ')}`,
    { kind, ...(name ? { name } : {}), causes },
  );

export const internalError = (message = 'internal error'): ApiError =>
  new ApiError('InternalError', 500, message);

export interface RestErrorBody {
  error: string;
  reason: Reason;
  code: number;
  details: ErrorDetails;
}

export function toRestBody(err: ApiError): RestErrorBody {
  return { error: err.message, reason: err.reason, code: err.code, details: err.details };
}

export function isApiError(err: unknown): err is ApiError {
  return err instanceof ApiError;
}
