// Delegated authentication, as a Kubernetes extension API server does it. The trust settings
// come from kube-system/extension-apiserver-authentication (re-read periodically). Per request,
// first success wins:
//   1. a client certificate from the front proxy (verified against the request-header CA, CN in
//      the allowed names): the user is what the X-Remote-* headers say;
//   2. a client certificate verified against the client CA: user = CN, groups = O;
//   3. a bearer token, checked with a TokenReview (successes cached briefly);
// otherwise the request is anonymous, which the filter answers with 401.

import { createHash } from 'node:crypto';
import type { X509Certificate } from 'node:crypto';
import { AuthenticationV1Api, CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { componentLogger, type Logger } from '../../observability/logger.js';
import type { Revocable } from './revocation.js';
import { TtlCache } from './ttl-cache.js';
import { type UserInfo, withAuthenticatedGroup } from './user.js';
import { type PeerChain, parsePemBundle, verifyClientChain } from './x509.js';
import { inspect } from 'node:util';

export const AUTH_CONFIGMAP_NAMESPACE = 'kube-system';
export const AUTH_CONFIGMAP_NAME = 'extension-apiserver-authentication';

/** The header names kube-apiserver's aggregator uses by default. Always stripped from requests. */
const DEFAULT_REQUEST_HEADERS = { username: ['X-Remote-User'], uid: ['X-Remote-Uid'], group: ['X-Remote-Group'], extraPrefix: ['X-Remote-Extra-'] };

export interface RequestHeaderConfig {
  ca: X509Certificate[];
  /** Accepted front-proxy certificate CNs; empty means any certificate from the CA. */
  allowedNames: string[];
  usernameHeaders: string[];
  uidHeaders: string[];
  groupHeaders: string[];
  extraHeaderPrefixes: string[];
}

export interface ExtensionAuthConfig {
  /** client-ca-file: CAs for client certificates (user = CN, groups = O). */
  clientCA: X509Certificate[];
  /** requestheader-*: the front proxy; absent when the ConfigMap has no request-header CA. */
  requestHeader?: RequestHeaderConfig;
}

/** Parses the ConfigMap's data (list values are JSON arrays of strings, as kube-apiserver writes them). */
export function parseAuthConfigMap(data: Record<string, string> | undefined): ExtensionAuthConfig {
  const d = data ?? {};
  const list = (key: string): string[] => {
    const raw = d[key];
    if (!raw) return [];
    try {
      const v: unknown = JSON.parse(raw);
      return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && x !== '') : [];
    } catch {
      return [];
    }
  };
  const clientCA = parsePemBundle(d['client-ca-file']);
  const rhCA = parsePemBundle(d['requestheader-client-ca-file']);
  const config: ExtensionAuthConfig = { clientCA };
  if (rhCA.length) {
    config.requestHeader = {
      ca: rhCA,
      allowedNames: list('requestheader-allowed-names'),
      usernameHeaders: list('requestheader-username-headers'),
      uidHeaders: list('requestheader-uid-headers'),
      groupHeaders: list('requestheader-group-headers'),
      extraHeaderPrefixes: list('requestheader-extra-headers-prefix'),
    };
  }
  return config;
}

export interface TokenReviewResult {
  authenticated: boolean;
  user?: UserInfo;
  error?: string;
}

export interface AuthenticationInput {
  /** The client certificate chain of the connection, if any. */
  peer?: PeerChain;
  /** Node's rawHeaders: [name, value, name, value, ...]; repeated headers stay separate. */
  rawHeaders: string[];
}

export type AuthMethod = 'requestheader' | 'x509' | 'token';

export type AuthenticationResult =
  | {
      user: UserInfo;
      method: AuthMethod;
      /** When the credential can stop being good while a connection it opened lives on (revocation.ts). */
      revocable?: Revocable;
    }
  | { user?: undefined; /** Why each presented credential was refused; empty when none was presented. */ errors: string[] };

export interface AuthenticatorOptions {
  loadConfig: () => Promise<ExtensionAuthConfig>;
  reviewToken: (token: string) => Promise<TokenReviewResult>;
  logger: Logger;
  /** How often the ConfigMap is re-read; default 30 s. */
  refreshIntervalMs?: number;
  /** How long a successful TokenReview is reused; default 10 s (Kubernetes' delegated default). */
  tokenCacheTtlMs?: number;
  now?: () => Date;
}

export class DelegatedAuthenticator {
  private current: ExtensionAuthConfig | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly tokens = new TtlCache<UserInfo>(4096);
  private readonly inflight = new Map<string, Promise<TokenReviewResult>>();
  private readonly log: Logger;

  constructor(private readonly opts: AuthenticatorOptions) {
    this.log = componentLogger(opts.logger, 'authn');
  }

  /** Reads the client CA and request-header settings from the cluster through `kc`. */
  static fromKubeConfig(kc: KubeConfig, opts: Omit<AuthenticatorOptions, 'loadConfig' | 'reviewToken'>): DelegatedAuthenticator {
    const core = kc.makeApiClient(CoreV1Api);
    const authn = kc.makeApiClient(AuthenticationV1Api);
    return new DelegatedAuthenticator({
      ...opts,
      loadConfig: async () => {
        const cm = await core.readNamespacedConfigMap({ namespace: AUTH_CONFIGMAP_NAMESPACE, name: AUTH_CONFIGMAP_NAME });
        return parseAuthConfigMap(cm.data);
      },
      reviewToken: async (token) => {
        const review = await authn.createTokenReview({
          body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
        });
        const s = review.status ?? {};
        if (!s.authenticated || !s.user?.username) return { authenticated: false, ...(s.error ? { error: s.error } : {}) };
        return {
          authenticated: true,
          user: { username: s.user.username, ...(s.user.uid ? { uid: s.user.uid } : {}), groups: s.user.groups ?? [], extra: s.user.extra ?? {} },
        };
      },
    });
  }

  /** Loads the configuration once (failing if it cannot), then refreshes it in the background. */
  async start(): Promise<void> {
    this.current = await this.opts.loadConfig();
    this.log.info(
      {
        clientCAs: this.current.clientCA.length,
        requestHeaderCAs: this.current.requestHeader?.ca.length ?? 0,
        allowedNames: this.current.requestHeader?.allowedNames,
      },
      'loaded delegated authentication settings',
    );
    this.timer = setInterval(() => void this.refresh(), this.opts.refreshIntervalMs ?? 30_000);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Re-reads the ConfigMap; on failure the last good settings stay in force. */
  async refresh(): Promise<void> {
    try {
      this.current = await this.opts.loadConfig();
    } catch (err) {
      this.log.warn({ err: errMessage(err) }, 'could not refresh delegated authentication settings; keeping the previous ones');
    }
  }

  get config(): ExtensionAuthConfig | undefined {
    return this.current;
  }

  /**
   * True for header names that carry front-proxy identity (configured or default names). The
   * filter removes them from every request, so nothing downstream can mistake them for facts.
   */
  isIdentityHeader(name: string): boolean {
    const n = name.toLowerCase();
    const rh = this.current?.requestHeader;
    const exact = [
      ...DEFAULT_REQUEST_HEADERS.username,
      ...DEFAULT_REQUEST_HEADERS.uid,
      ...DEFAULT_REQUEST_HEADERS.group,
      ...(rh ? [...rh.usernameHeaders, ...rh.uidHeaders, ...rh.groupHeaders] : []),
    ];
    if (exact.some((h) => h.toLowerCase() === n)) return true;
    const prefixes = [...DEFAULT_REQUEST_HEADERS.extraPrefix, ...(rh?.extraHeaderPrefixes ?? [])];
    return prefixes.some((p) => n.startsWith(p.toLowerCase()));
  }

  async authenticate(input: AuthenticationInput): Promise<AuthenticationResult> {
    const config = this.current;
    if (!config) return { errors: ['authentication settings are not loaded yet'] };
    const errors: string[] = [];
    const now = this.opts.now?.() ?? new Date();

    if (input.peer && config.requestHeader) {
      const rh = config.requestHeader;
      const bad = verifyClientChain(input.peer, rh.ca, now);
      const cn = input.peer.subject.CN?.[0] ?? '';
      if (!bad && rh.allowedNames.length && !rh.allowedNames.includes(cn)) {
        errors.push(`request-header client certificate CN "${cn}" is not in the allowed names`);
      } else if (!bad) {
        const user = userFromHeaders(input.rawHeaders, rh);
        if (user) return { user: withAuthenticatedGroup(user), method: 'requestheader' };
      }
    }

    if (input.peer && config.clientCA.length) {
      const bad = verifyClientChain(input.peer, config.clientCA, now);
      const cn = input.peer.subject.CN?.[0];
      if (bad) errors.push(`client certificate: ${bad}`);
      else if (cn) return { user: withAuthenticatedGroup({ username: cn, groups: [...(input.peer.subject.O ?? [])], extra: {} }), method: 'x509' };
    }

    const token = bearerToken(input.rawHeaders);
    if (token) {
      const res = await this.reviewCached(token);
      if (res.authenticated && res.user) return { user: withAuthenticatedGroup(res.user), method: 'token' };
      errors.push(res.error ? `token: ${res.error}` : 'token: not authenticated');
    }
    return { errors };
  }

  /** TokenReview with a short cache of successes, keyed by the token's SHA-256 (never the token). */
  private async reviewCached(token: string): Promise<TokenReviewResult> {
    const key = createHash('sha256').update(token).digest('hex');
    const cached = this.tokens.get(key);
    if (cached) return { authenticated: true, user: cached };
    let pending = this.inflight.get(key);
    if (!pending) {
      pending = this.opts
        .reviewToken(token)
        .catch((err: unknown): TokenReviewResult => {
          this.log.warn({ tokenHash: key.slice(0, 12), err: errMessage(err) }, 'TokenReview failed');
          return { authenticated: false, error: 'token review failed' };
        })
        .finally(() => this.inflight.delete(key));
      this.inflight.set(key, pending);
    }
    const res = await pending;
    // Failures are not cached (as in Kubernetes): a token created a moment ago must work at once.
    if (res.authenticated && res.user) this.tokens.set(key, res.user, this.opts.tokenCacheTtlMs ?? 10_000);
    return res;
  }
}

/** The user the front proxy asserts, or undefined when it sent no username header. */
export function userFromHeaders(rawHeaders: string[], rh: RequestHeaderConfig): UserInfo | undefined {
  const pairs: [string, string][] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) pairs.push([rawHeaders[i].toLowerCase(), rawHeaders[i + 1]]);
  const first = (names: string[]): string | undefined => {
    for (const n of names.map((x) => x.toLowerCase())) {
      const v = pairs.find(([k, val]) => k === n && val.trim() !== '');
      if (v) return v[1].trim();
    }
    return undefined;
  };
  const username = first(rh.usernameHeaders);
  if (!username) return undefined;
  const uid = first(rh.uidHeaders);
  const groupNames = new Set(rh.groupHeaders.map((g) => g.toLowerCase()));
  const groups = pairs
    .filter(([k]) => groupNames.has(k))
    .map(([, v]) => v.trim())
    .filter(Boolean);
  const extra: Record<string, string[]> = {};
  for (const prefix of rh.extraHeaderPrefixes.map((p) => p.toLowerCase())) {
    for (const [k, v] of pairs) {
      if (!k.startsWith(prefix) || k.length === prefix.length) continue;
      const key = unescapeExtraKey(k.slice(prefix.length));
      (extra[key] ??= []).push(v.trim());
    }
  }
  return { username, ...(uid ? { uid } : {}), groups, extra };
}

/** Extra keys arrive percent-encoded (so they can hold '/' and such); lowercased first, as Kubernetes does. */
function unescapeExtraKey(key: string): string {
  try {
    return decodeURIComponent(key.toLowerCase());
  } catch {
    return key.toLowerCase();
  }
}

/** The token of the first `Authorization: Bearer <token>` header, if any. */
export function bearerToken(rawHeaders: string[]): string | undefined {
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if (rawHeaders[i].toLowerCase() !== 'authorization') continue;
    const m = /^bearer\s+(\S+)\s*$/i.exec(rawHeaders[i + 1]);
    if (m) return m[1];
  }
  return undefined;
}

/** A short description of a client error: its status and first line only (never a request body). */
export function errMessage(err: unknown): string {
  if (err && typeof err === 'object') {
    const e = err as { code?: number; message?: string };
    const first = (e.message ?? inspect(err)).split('\n')[0].slice(0, 300);
    return e.code ? `${e.code}: ${first}` : first;
  }
  return String(err).split('\n')[0].slice(0, 300);
}

/** Kubernetes' WebSocket bearer subprotocol: this prefix, then the token in unpadded base64url. */
export const WS_BEARER_PROTOCOL_PREFIX = 'base64url.bearer.authorization.k8s.io.';

/**
 * The token in Kubernetes' WebSocket bearer subprotocol (`Sec-WebSocket-Protocol:
 * base64url.bearer.authorization.k8s.io.<token>`), for browsers, which cannot set headers on
 * a WebSocket. Only on upgrade requests.
 */
export function wsProtocolToken(rawHeaders: string[]): string | undefined {
  let upgrade = false;
  const offered: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i].toLowerCase();
    if (name === 'upgrade' && rawHeaders[i + 1].trim().toLowerCase() === 'websocket') upgrade = true;
    if (name === 'sec-websocket-protocol') offered.push(...rawHeaders[i + 1].split(',').map((p) => p.trim()));
  }
  if (!upgrade) return undefined;
  for (const p of offered) {
    if (!p.startsWith(WS_BEARER_PROTOCOL_PREFIX)) continue;
    const encoded = p.slice(WS_BEARER_PROTOCOL_PREFIX.length);
    if (!/^[A-Za-z0-9_-]+$/.test(encoded)) return undefined;
    const token = Buffer.from(encoded, 'base64url').toString('utf8');
    return token === '' ? undefined : token;
  }
  return undefined;
}
