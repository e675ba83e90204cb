// OIDC ID tokens for the embedded home, as kube-apiserver's --oidc-* flags accept them: a bearer
// JWT signed by the configured issuer (keys from its JWKS, found through its discovery
// document), for the configured client (`aud`), not expired. Signatures and claims are checked
// by `jose`; this file only fetches the issuer's documents and maps claims to a user.
//
// What a user may do is not in the token: the token file's `grants` (token-file.ts) name users
// and groups, as RBAC bindings name subjects.

import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { createLocalJWKSet, errors as joseErrors, type JSONWebKeySet, type JWTPayload, jwtVerify } from 'jose';
import { componentLogger, type Logger } from '../../observability/logger.js';
import { type AuthenticationInput, type AuthenticationResult, bearerToken, wsProtocolToken } from './authenticator.js';
import { expiringAt } from './revocation.js';
import { AUTHENTICATED_GROUP } from './user.js';

export interface OidcOptions {
  /** The issuer URL, exactly as tokens carry it in `iss`; https only. */
  issuerUrl: string;
  /** The client ID tokens must be issued for (`aud`). */
  clientId: string;
  /** The claim that names the user; default `sub`. */
  usernameClaim?: string;
  /**
   * Put before the user name. Default as kube-apiserver: `<issuer>#` unless the claim is
   * `email`; `-` for none.
   */
  usernamePrefix?: string;
  /** The claim listing the user's groups (a string or a list of strings); none by default. */
  groupsClaim?: string;
  /** Put before each group name; default none. */
  groupsPrefix?: string;
  /** PEM file of the CAs that sign the issuer's serving certificate; default Node's roots. */
  caFile?: string;
}

/** The JWS algorithms accepted, as kube-apiserver's default (asymmetric only: never HS*, never none). */
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512'];
/** An unknown `kid` refetches the keys at most this often, so forged kids cannot flood the issuer. */
const REFRESH_MIN_MS = 2_000;
/** Known keys are refetched this often anyway, to drop revoked ones. */
const REFRESH_MAX_MS = 60 * 60_000;
const FETCH_TIMEOUT_MS = 10_000;
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

export class OidcConfigError extends Error {}

/** Checks the options (at start-up, so a typo stops the server with a clear message). */
export function checkOidcOptions(o: OidcOptions): void {
  let url: URL;
  try {
    url = new URL(o.issuerUrl);
  } catch {
    throw new OidcConfigError(`--oidc-issuer-url "${o.issuerUrl}" is not a URL`);
  }
  if (url.protocol !== 'https:') throw new OidcConfigError(`--oidc-issuer-url must use https (got ${url.protocol})`);
  if (url.search || url.hash) throw new OidcConfigError('--oidc-issuer-url must not have a query or fragment');
  if (!o.clientId) throw new OidcConfigError('--oidc-client-id is required with --oidc-issuer-url');
  if (o.caFile) {
    try {
      readFileSync(o.caFile);
    } catch (err) {
      throw new OidcConfigError(`--oidc-ca-file: ${(err as Error).message}`);
    }
  }
}

export class OidcAuthenticator {
  private keys?: { set: ReturnType<typeof createLocalJWKSet>; at: number };
  private refreshing?: Promise<void>;
  private readonly log: Logger;
  private readonly ca?: Buffer;

  constructor(
    private readonly o: OidcOptions,
    logger: Logger,
    private readonly now: () => number = Date.now,
  ) {
    checkOidcOptions(o);
    this.log = componentLogger(logger, 'oidc', { issuer: o.issuerUrl });
    if (o.caFile) this.ca = readFileSync(o.caFile);
  }

  isIdentityHeader(): boolean {
    return false;
  }

  async authenticate(input: AuthenticationInput): Promise<AuthenticationResult> {
    const token = bearerToken(input.rawHeaders) ?? wsProtocolToken(input.rawHeaders);
    // Not a JWT: some other authenticator's token, or none.
    if (token === undefined || !JWT_SHAPE.test(token)) return { errors: [] };
    let payload: JWTPayload;
    try {
      payload = await this.verify(token);
    } catch (err) {
      return { errors: [`oidc: ${reason(err)}`] };
    }
    const claim = this.o.usernameClaim ?? 'sub';
    const name = payload[claim];
    if (typeof name !== 'string' || name === '') return { errors: [`oidc: the token has no "${claim}" claim`] };
    // kube-apiserver refuses an unverified email as a user name; so do we.
    if (claim === 'email' && payload.email_verified !== undefined && payload.email_verified !== true) return { errors: ['oidc: the email is not verified'] };
    const prefix = this.o.usernamePrefix === '-' ? '' : (this.o.usernamePrefix ?? (claim === 'email' ? '' : `${this.o.issuerUrl}#`));
    const groups: string[] = [];
    if (this.o.groupsClaim) {
      const g = payload[this.o.groupsClaim];
      const list = typeof g === 'string' ? [g] : Array.isArray(g) ? g.filter((x): x is string => typeof x === 'string') : [];
      for (const x of list) groups.push(`${this.o.groupsPrefix ?? ''}${x}`);
    }
    const user = { username: prefix + name, groups: [...groups, AUTHENTICATED_GROUP], extra: {} };
    // A connection the token opens ends at its expiry, as a new request would be refused then.
    return { method: 'token', user, ...(typeof payload.exp === 'number' ? { revocable: expiringAt(payload.exp * 1000, this.now) } : {}) };
  }

  private async verify(token: string): Promise<JWTPayload> {
    const opts = { issuer: this.o.issuerUrl, audience: this.o.clientId, algorithms: ALGORITHMS, clockTolerance: 5 };
    await this.ensureKeys(false);
    try {
      return (await jwtVerify(token, this.keys!.set, opts)).payload;
    } catch (err) {
      // The issuer rotated its keys: refetch (rate-limited) and try once more.
      if (!(err instanceof joseErrors.JWKSNoMatchingKey)) throw err;
      if (!(await this.ensureKeys(true))) throw err;
      return (await jwtVerify(token, this.keys!.set, opts)).payload;
    }
  }

  /** Fetches the keys when missing or stale (or `unknownKid` and not fetched recently); true if it did. */
  private async ensureKeys(unknownKid: boolean): Promise<boolean> {
    const age = this.keys ? this.now() - this.keys.at : Infinity;
    if (this.keys && age < REFRESH_MAX_MS && !(unknownKid && age >= REFRESH_MIN_MS)) return false;
    this.refreshing ??= this.fetchKeys().finally(() => (this.refreshing = undefined));
    try {
      await this.refreshing;
    } catch (err) {
      // Keep serving with the keys we have; without any, the request fails.
      if (!this.keys) throw err;
      this.log.warn({ err: (err as Error).message }, 'cannot refresh the issuer keys; using the ones fetched before');
      return false;
    }
    return true;
  }

  private async fetchKeys(): Promise<void> {
    const base = this.o.issuerUrl.replace(/\/$/, '');
    const discovery = (await this.getJson(`${base}/.well-known/openid-configuration`)) as { issuer?: unknown; jwks_uri?: unknown };
    if (discovery.issuer !== this.o.issuerUrl)
      throw new Error(`the discovery document names the issuer ${JSON.stringify(discovery.issuer)}, not ${this.o.issuerUrl}`);
    if (typeof discovery.jwks_uri !== 'string' || !discovery.jwks_uri.startsWith('https://')) throw new Error('the discovery document has no https jwks_uri');
    const jwks = (await this.getJson(discovery.jwks_uri)) as JSONWebKeySet;
    if (!Array.isArray(jwks?.keys)) throw new Error('the JWKS has no "keys" list');
    this.keys = { set: createLocalJWKSet(jwks), at: this.now() };
    this.log.info({ keys: jwks.keys.length }, 'fetched the issuer keys');
  }

  private getJson(url: string): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const req = request(url, { ...(this.ca ? { ca: this.ca } : {}), timeout: FETCH_TIMEOUT_MS, headers: { accept: 'application/json' } }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > 1 << 20) req.destroy(new Error(`${url}: answer over 1 MiB`));
          else chunks.push(c);
        });
        res.on('end', () => {
          if (res.statusCode !== 200) return reject(new Error(`${url}: HTTP ${res.statusCode}`));
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
          } catch {
            reject(new Error(`${url}: not JSON`));
          }
        });
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new Error(`${url}: no answer in ${FETCH_TIMEOUT_MS / 1000} s`)));
      req.on('error', (err) => reject(new Error(`cannot fetch ${url}: ${err.message}`)));
      req.end();
    });
  }
}

/** What went wrong, in words a user can act on; never the token. */
function reason(err: unknown): string {
  if (err instanceof joseErrors.JWTExpired) return 'the token has expired';
  if (err instanceof joseErrors.JWTClaimValidationFailed)
    return `claim "${err.claim}" is not valid: ${err.reason === 'check_failed' ? 'unexpected value' : err.reason}`;
  if (err instanceof joseErrors.JWKSNoMatchingKey) return 'the token is not signed by a key of the issuer';
  if (err instanceof joseErrors.JWSSignatureVerificationFailed) return 'the token signature does not verify';
  if (err instanceof joseErrors.JOSEAlgNotAllowed) return 'the token is signed with an algorithm that is not accepted';
  if (err instanceof joseErrors.JOSEError) return `the token is not valid (${err.code})`;
  return `cannot check the token: ${(err as Error).message}`;
}

/**
 * Several authenticators, asked in order; the first that knows the user wins (kube-apiserver's
 * union authenticator). A token file's opaque tokens and OIDC's JWTs never overlap.
 */
export class UnionAuthenticator {
  constructor(private readonly all: { authenticate(i: AuthenticationInput): Promise<AuthenticationResult>; isIdentityHeader(name: string): boolean }[]) {}

  isIdentityHeader(name: string): boolean {
    return this.all.some((a) => a.isIdentityHeader(name));
  }

  async authenticate(input: AuthenticationInput): Promise<AuthenticationResult> {
    const errors: string[] = [];
    for (const a of this.all) {
      const r = await a.authenticate(input);
      if (r.user) return r;
      errors.push(...r.errors);
    }
    return { errors };
  }
}
