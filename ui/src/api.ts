// The dashboard's only way to the server: /api/v1 with the user's token, as any client calls it.
// A 401 asks the app for a token (kept in sessionStorage: gone when the tab closes).

const TOKEN_KEY = 'agentplane.token';
const SCOPE_KEY = 'agentplane.namespace';

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

let onUnauthorized: () => void = () => {};
/** Called when the server answers 401: the app shows the token prompt. */
export function setUnauthorizedHandler(fn: () => void): void {
  onUnauthorized = fn;
}

export const getToken = (): string | null => sessionStorage.getItem(TOKEN_KEY);
export function setToken(token: string): void {
  sessionStorage.setItem(TOKEN_KEY, token);
}
export function clearToken(): void {
  sessionStorage.removeItem(TOKEN_KEY);
}

/** The namespace the lists show ('' for every namespace, which a namespaced token may not list). */
export const getScope = (): string => sessionStorage.getItem(SCOPE_KEY) ?? '';
export function setScope(namespace: string): void {
  sessionStorage.setItem(SCOPE_KEY, namespace);
}

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  const token = getToken();
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(path, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!res.ok) {
    const err = (parsed ?? {}) as { error?: string; reason?: string };
    if (res.status === 401) onUnauthorized();
    throw new ApiFailure(res.status, err.reason ?? String(res.status), err.error ?? `${method} ${path}: HTTP ${res.status}`);
  }
  return parsed as T;
}

export const q = (params: Record<string, string | number | undefined>): string => {
  const s = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) s.set(k, String(v));
  const out = s.toString();
  return out ? `?${out}` : '';
};

/**
 * A WebSocket to `path` with the token as Kubernetes' bearer subprotocol (browsers cannot set
 * headers on WebSockets); the second protocol is the one the server answers with, so the token
 * is never echoed (docs/auth.md "WebSocket").
 */
export function openSocket(path: string): WebSocket {
  const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}${path}`;
  const token = getToken();
  if (!token) return new WebSocket(url);
  const b64 = btoa(String.fromCharCode(...new TextEncoder().encode(token)))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
  return new WebSocket(url, [`base64url.bearer.authorization.k8s.io.${b64}`, 'agentplane.io.events']);
}

/** A list's error as the page shows it: a 403 on every namespace says how to pick one. */
export function listError(err: Error | undefined, scope: string): string | undefined {
  if (!err || (err instanceof ApiFailure && err.status === 401)) return undefined;
  if (err instanceof ApiFailure && err.status === 403 && !scope) return `${err.message}. Enter a namespace you may read in the box at the top.`;
  return err.message;
}
