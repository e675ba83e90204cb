// Authentication and authorization of the embedded home: bearer tokens from a token file, each
// scoped to namespaces and Kubernetes verbs. The two classes fit the same filter
// (filter.ts, installAuthFilter) as the cluster home's delegated ones.
//
// The file (YAML or JSON) holds no token, only its SHA-256:
//
//   tokens:
//     - user: alice
//       namespaces: [team-a]              # or "*"
//       verbs: [get, list, watch]         # or "*"; get list watch create update patch delete approve
//       tokenHash: sha256:<hex of sha256(token)>
//
// A presented token is hashed and compared with every entry's hash in constant time
// (crypto.timingSafeEqual, no early exit). The file is re-read every couple of seconds; a file
// that does not parse keeps the last good one in force and logs an error.
//
// The same file grants scopes to users who sign in elsewhere (OIDC, oidc.ts), by user or group:
//
//   grants:
//     - group: team-a-devs                # or  user: alice@example.com
//       namespaces: [team-a]
//       verbs: "*"

import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { componentLogger, type Logger } from '../../observability/logger.js';
import type { RequestAttributes } from './attributes.js';
import { type AuthenticationInput, type AuthenticationResult, bearerToken, WS_BEARER_PROTOCOL_PREFIX, wsProtocolToken } from './authenticator.js';

import type { Decision } from './authorizer.js';
import { ALWAYS_ALLOW_PATHS, type RequestAuth } from './filter.js';
import { OidcAuthenticator, type OidcOptions, UnionAuthenticator } from './oidc.js';
import { either, type Revocable, RevocationList, TOKEN_REVOKED } from './revocation.js';
import { AUTHENTICATED_GROUP, type UserInfo } from './user.js';

/**
 * The verbs a token may be given (deletecollection counts as delete). `approve` decides tool-call
 * approvals (create on agents/approvals) and nothing else; no other verb decides them.
 */
export const TOKEN_VERBS = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'approve'] as const;
/** Where the token's scope travels on the authenticated user, for the authorizer. */
export const NAMESPACES_EXTRA = 'agentplane.io/namespaces';
export const VERBS_EXTRA = 'agentplane.io/verbs';

export interface TokenEntry {
  user: string;
  /** ['*'] for every namespace. */
  namespaces: string[];
  /** ['*'] for every verb. */
  verbs: string[];
  /** The SHA-256 of the token (32 bytes). */
  hash: Buffer;
}

/** A scope for users authenticated by other means (OIDC): one user name or one group. */
export interface Grant {
  user?: string;
  group?: string;
  namespaces: string[];
  verbs: string[];
}

export interface AccessFile {
  tokens: TokenEntry[];
  grants: Grant[];
}

export class TokenFileError extends Error {}

const HASH_RE = /^sha256:([0-9a-f]{64})$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** Parses a token file's tokens (YAML or JSON); throws TokenFileError saying what is wrong. */
export function parseTokenFile(text: string): TokenEntry[] {
  return parseAccessFile(text).tokens;
}

/** Parses a token file: its `tokens` and its `grants` (either may be absent, not both). */
export function parseAccessFile(text: string): AccessFile {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new TokenFileError(`not YAML or JSON: ${(err as Error).message.split('\n')[0]}`);
  }
  if (Array.isArray(doc)) return { tokens: parseTokens(doc), grants: [] };
  const d = doc && typeof doc === 'object' ? (doc as { tokens?: unknown; grants?: unknown }) : {};
  if (d.tokens === undefined && d.grants === undefined) throw new TokenFileError('expected "tokens:" (and/or "grants:") with a list of entries');
  if (d.tokens !== undefined && !Array.isArray(d.tokens)) throw new TokenFileError('"tokens" must be a list of entries');
  if (d.grants !== undefined && !Array.isArray(d.grants)) throw new TokenFileError('"grants" must be a list of entries');
  return { tokens: parseTokens((d.tokens as unknown[] | undefined) ?? []), grants: parseGrants((d.grants as unknown[] | undefined) ?? []) };
}

function parseGrants(list: unknown[]): Grant[] {
  return list.map((raw, i): Grant => {
    const at = `grants[${i}]`;
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new TokenFileError(`${at}: must be a mapping`);
    const e = raw as Record<string, unknown>;
    const who = (['user', 'group'] as const).filter((k) => e[k] !== undefined);
    if (who.length !== 1) throw new TokenFileError(`${at}: give exactly one of "user" or "group"`);
    const key = who[0];
    const name = e[key];
    if (typeof name !== 'string' || name.trim() === '') throw new TokenFileError(`${at}: "${key}" must be a non-empty string`);
    const label = `${at} (${key} ${name.trim()})`;
    const namespaces = starOrList(e.namespaces, `${label}: "namespaces"`, (ns) => DNS_LABEL.test(ns), 'a namespace name');
    const verbs = starOrList(e.verbs, `${label}: "verbs"`, (v) => (TOKEN_VERBS as readonly string[]).includes(v), `one of ${TOKEN_VERBS.join(', ')}`);
    return { [key]: name.trim(), namespaces, verbs };
  });
}

function parseTokens(list: unknown[]): TokenEntry[] {
  const seen = new Set<string>();
  return list.map((raw, i): TokenEntry => {
    const at = `tokens[${i}]`;
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new TokenFileError(`${at}: must be a mapping`);
    const e = raw as Record<string, unknown>;
    if ('token' in e)
      throw new TokenFileError(`${at}: holds a plain "token"; store only its hash, as tokenHash: sha256:<hex> (printf %s "$TOKEN" | sha256sum)`);
    if (typeof e.user !== 'string' || e.user.trim() === '') throw new TokenFileError(`${at}: "user" must be a non-empty string`);
    const hashText = typeof e.tokenHash === 'string' ? e.tokenHash.trim().toLowerCase() : '';
    const m = HASH_RE.exec(hashText);
    if (!m) throw new TokenFileError(`${at} (${e.user}): "tokenHash" must be sha256:<64 hex digits>`);
    if (seen.has(m[1])) throw new TokenFileError(`${at} (${e.user}): the same tokenHash appears twice`);
    seen.add(m[1]);
    const namespaces = starOrList(e.namespaces, `${at} (${e.user}): "namespaces"`, (ns) => DNS_LABEL.test(ns), 'a namespace name');
    const verbs = starOrList(e.verbs, `${at} (${e.user}): "verbs"`, (v) => (TOKEN_VERBS as readonly string[]).includes(v), `one of ${TOKEN_VERBS.join(', ')}`);
    return { user: e.user.trim(), namespaces, verbs, hash: Buffer.from(m[1], 'hex') };
  });
}

function starOrList(v: unknown, what: string, ok: (s: string) => boolean, expected: string): string[] {
  if (v === '*') return ['*'];
  if (!Array.isArray(v) || v.length === 0) throw new TokenFileError(`${what} must be "*" or a non-empty list`);
  const out: string[] = [];
  for (const x of v) {
    if (x === '*') return ['*'];
    if (typeof x !== 'string' || !ok(x)) throw new TokenFileError(`${what}: ${JSON.stringify(x)} is not ${expected}`);
    out.push(x);
  }
  return out;
}

/** `sha256:<hex>` of a token, as the file stores it. */
export const hashToken = (token: string): string => `sha256:${createHash('sha256').update(token, 'utf8').digest('hex')}`;

/** How hashes are compared. Exported so a test can see it is the constant-time one. */
export const compareHashes: (a: Buffer, b: Buffer) => boolean = timingSafeEqual;

export interface TokenFileAuthenticatorOptions {
  path: string;
  logger: Logger;
  /** How often the file is re-read; default 2 s. */
  reloadIntervalMs?: number;
  /** For tests: the comparison (default compareHashes, i.e. crypto.timingSafeEqual). */
  compare?: (a: Buffer, b: Buffer) => boolean;
}

export class TokenFileAuthenticator {
  private entries: TokenEntry[] = [];
  private grantList: Grant[] = [];
  private lastSeen = '';
  private timer: NodeJS.Timeout | undefined;
  private readonly log: Logger;
  /** Connections opened with a token, by the token's hash and scope when it was presented. */
  private readonly tokenUses = new RevocationList<{ hash: string; scope: string }>();
  /** Connections opened by users of the grants (OIDC), by the scope the grants gave them then. */
  private readonly grantUses = new RevocationList<{ user: UserInfo; scope: string }>();

  constructor(private readonly opts: TokenFileAuthenticatorOptions) {
    this.log = componentLogger(opts.logger, 'authn', { tokenFile: opts.path });
  }

  /** Loads the file (throwing when it cannot be read or parsed), then re-reads it periodically. */
  start(): void {
    const text = this.read();
    this.use(parseAccessFile(text));
    this.lastSeen = digest(text);
    this.log.info({ entries: this.entries.length, grants: this.grantList.length }, 'loaded the token file');
    this.timer = setInterval(() => this.reload(), this.opts.reloadIntervalMs ?? 2_000);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Re-reads the file if it changed; a file that cannot be read or parsed keeps the last good one. */
  reload(): void {
    let text: string;
    try {
      text = readFileSync(this.opts.path, 'utf8');
    } catch (err) {
      const key = `unreadable:${(err as NodeJS.ErrnoException).code ?? ''}`;
      if (key !== this.lastSeen) this.log.error({ err: (err as Error).message }, 'cannot read the token file; keeping the tokens loaded before');
      this.lastSeen = key;
      return;
    }
    const d = digest(text);
    if (d === this.lastSeen) return;
    this.lastSeen = d;
    try {
      this.use(parseAccessFile(text));
      this.log.info({ entries: this.entries.length, grants: this.grantList.length }, 'reloaded the token file');
    } catch (err) {
      this.log.error({ err: (err as Error).message }, 'the token file is invalid; keeping the tokens loaded before');
    }
  }

  get size(): number {
    return this.entries.length;
  }

  /** The file's grants, for users authenticated by other means; always the last good file's. */
  grants(): readonly Grant[] {
    return this.grantList;
  }

  /**
   * Takes a newly read file. Connections opened with a token the file no longer holds, or now
   * holds with another user or scope, are revoked; so are those of grant users whose grants
   * changed.
   */
  private use(file: AccessFile): void {
    this.entries = file.tokens;
    this.grantList = file.grants;
    const now = new Set(file.tokens.map((e) => `${e.hash.toString('hex')} ${entryScope(e)}`));
    this.tokenUses.check((k) => now.has(`${k.hash} ${k.scope}`), TOKEN_REVOKED);
    this.grantUses.check((k) => grantScope(this.grantList, k.user) === k.scope, TOKEN_REVOKED);
  }

  /** Revoked when a reload changes the grants that name `user` (or its groups). */
  grantsRevocable(user: UserInfo): Revocable {
    return this.grantUses.revocable({ user, scope: grantScope(this.grantList, user) });
  }

  /** Listeners waiting for a revocation (tests: none may be left once connections end). */
  get listening(): number {
    return this.tokenUses.size + this.grantUses.size;
  }

  /** The X-Remote-* headers mean nothing here; the filter strips them so nothing trusts them. */
  isIdentityHeader(name: string): boolean {
    const n = name.toLowerCase();
    return n === 'x-remote-user' || n === 'x-remote-uid' || n === 'x-remote-group' || n.startsWith('x-remote-extra-');
  }

  async authenticate(input: AuthenticationInput): Promise<AuthenticationResult> {
    const token = bearerToken(input.rawHeaders) ?? wsProtocolToken(input.rawHeaders);
    if (token === undefined) return { errors: [] };
    const entry = this.match(token);
    if (!entry) return { errors: ['token: not in the token file'] };
    return {
      method: 'token',
      user: { username: entry.user, groups: [AUTHENTICATED_GROUP], extra: { [NAMESPACES_EXTRA]: [...entry.namespaces], [VERBS_EXTRA]: [...entry.verbs] } },
      revocable: this.tokenUses.revocable({ hash: entry.hash.toString('hex'), scope: entryScope(entry) }),
    };
  }

  /** Compares the token's hash with every entry's, without stopping at a match. */
  match(token: string): TokenEntry | undefined {
    const presented = createHash('sha256').update(token, 'utf8').digest();
    const compare = this.opts.compare ?? compareHashes;
    let found: TokenEntry | undefined;
    for (const e of this.entries) {
      if (compare(presented, e.hash) && !found) found = e;
    }
    return found;
  }

  private read(): string {
    try {
      return readFileSync(this.opts.path, 'utf8');
    } catch (err) {
      throw new TokenFileError(`cannot read the token file ${this.opts.path}: ${(err as Error).message}`);
    }
  }
}

const digest = (text: string): string => createHash('sha256').update(text).digest('hex');

/** What a token entry allows, as one comparable string. */
const entryScope = (e: TokenEntry): string => JSON.stringify([e.user, e.namespaces, e.verbs]);

/** What the grants give `user`, as one comparable string (the grants naming it or its groups, in order). */
function grantScope(grants: readonly Grant[], user: UserInfo): string {
  const mine = grants.filter((g) => (g.user !== undefined && g.user === user.username) || (g.group !== undefined && user.groups.includes(g.group)));
  return JSON.stringify(mine);
}

/**
 * Namespaces × verbs: the scope the token file gave an authenticated token, or, for a user
 * authenticated otherwise (OIDC), every grant naming the user or one of their groups; any one
 * grant that allows the request is enough, as with RBAC's role bindings.
 */
export class TokenScopeAuthorizer {
  constructor(private readonly grants: () => readonly Grant[] = () => []) {}

  async authorize(user: UserInfo, attrs: RequestAttributes): Promise<Decision> {
    const namespaces = user.extra[NAMESPACES_EXTRA];
    const verbs = user.extra[VERBS_EXTRA];
    if (namespaces && verbs) return scopeDecision({ namespaces, verbs }, attrs, 'the token');
    const mine = this.grants().filter((g) => (g.user !== undefined && g.user === user.username) || (g.group !== undefined && user.groups.includes(g.group)));
    if (!mine.length) return { allowed: false, reason: `no grant in the token file names the user "${user.username}" or one of their groups` };
    const decisions = mine.map((g) => scopeDecision(g, attrs, g.user !== undefined ? `the grant for user ${g.user}` : `the grant for group ${g.group}`));
    return decisions.find((d) => d.allowed) ?? { allowed: false, reason: decisions.map((d) => d.reason).join('; ') };
  }
}

function scopeDecision(scope: { namespaces: string[]; verbs: string[] }, attrs: RequestAttributes, who: string): Decision {
  const { namespaces, verbs } = scope;
  const allVerbs = verbs.includes('*');
  if ('nonResource' in attrs) {
    // Discovery, OpenAPI, metrics (when guarded): readable by anyone with a scope.
    if (attrs.nonResource.verb === 'get' || allVerbs) return { allowed: true, reason: '' };
    return { allowed: false, reason: `${who} may only read non-resource paths` };
  }
  const r = attrs.resource;
  // Deciding an approval is its own grant, apart from creating or changing agents.
  const deciding = r.resource === 'agents' && r.subresource === 'approvals' && r.verb === 'create';
  const verb = deciding ? 'approve' : r.verb === 'deletecollection' ? 'delete' : r.verb;
  if (!allVerbs && !verbs.includes(verb)) return { allowed: false, reason: `${who} allows the verbs ${verbs.join(', ')}` };
  if (namespaces.includes('*')) return { allowed: true, reason: '' };
  if (r.namespace === '') return { allowed: false, reason: `${who} allows the namespaces ${namespaces.join(', ')}, not all of them` };
  if (!namespaces.includes(r.namespace)) return { allowed: false, reason: `${who} allows the namespaces ${namespaces.join(', ')}` };
  return { allowed: true, reason: '' };
}

export interface TokenFileAuthOptions {
  path: string;
  logger: Logger;
  /**
   * Whether /metrics needs a token (default true: it names namespaces and agents); false leaves
   * it open, like /healthz.
   */
  metricsAuth?: boolean;
  reloadIntervalMs?: number;
  /** OIDC ID tokens too (oidc.ts); their users get the file's `grants`. */
  oidc?: OidcOptions;
}

/**
 * The embedded home's auth: loads the token file (failing if it cannot) and returns what the
 * filter needs:
 *
 *   const auth = startTokenFileAuth({ path, logger });
 *   installAuthFilter(app, { ...auth, agentExists });   // before the routes
 *   closers.push(() => auth.stop());
 */
export function startTokenFileAuth(o: TokenFileAuthOptions): RequestAuth & { tokenFile: TokenFileAuthenticator } {
  const tokenFile = new TokenFileAuthenticator({
    path: o.path,
    logger: o.logger,
    ...(o.reloadIntervalMs !== undefined ? { reloadIntervalMs: o.reloadIntervalMs } : {}),
  });
  const oidc = o.oidc ? new OidcAuthenticator(o.oidc, o.logger) : undefined;
  tokenFile.start();
  return {
    tokenFile,
    authenticator: oidc ? new UnionAuthenticator([tokenFile, grantsRevoke(oidc, tokenFile)]) : tokenFile,
    authorizer: new TokenScopeAuthorizer(() => tokenFile.grants()),
    alwaysAllowPaths: o.metricsAuth === false ? [...ALWAYS_ALLOW_PATHS, '/metrics'] : [...ALWAYS_ALLOW_PATHS],
    stop: () => tokenFile.stop(),
  };
}

/**
 * OIDC users' connections end at their token's expiry (oidc.ts) and also when a reload changes
 * the grants that name them.
 */
function grantsRevoke(
  oidc: OidcAuthenticator,
  tokenFile: TokenFileAuthenticator,
): { authenticate: OidcAuthenticator['authenticate']; isIdentityHeader(name: string): boolean } {
  return {
    isIdentityHeader: () => oidc.isIdentityHeader(),
    authenticate: async (input) => {
      const r = await oidc.authenticate(input);
      if (!r.user) return r;
      const grants = tokenFile.grantsRevocable(r.user);
      return { ...r, revocable: r.revocable ? either(r.revocable, grants) : grants };
    },
  };
}

/** 127.0.0.0/8, ::1 (also v4-mapped loopback) and `localhost`: the binds that need no auth. */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1');
  if (h === 'localhost' || h === '::1' || h === '0:0:0:0:0:0:0:1') return true;
  const v4 = /^(?:::ffff:)?(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(h);
  return !!v4 && v4.slice(1).every((o) => Number(o) <= 255) && v4[1] === '127';
}

/**
 * The subprotocol a WebSocket upgrade answers with (ws's `handleProtocols`). A client that
 * offers protocols must get one of them back or a browser drops the connection. The first
 * offered protocol that is not a bearer token wins, so a client that also offers one (e.g.
 * `agentplane.io.events`) never sees its token echoed; a client that offered only the bearer
 * protocol gets that back, as the only answer it accepts.
 */
export function selectWebSocketProtocol(offered: Set<string>): string | false {
  let bearer: string | undefined;
  for (const p of offered) {
    if (!p.startsWith(WS_BEARER_PROTOCOL_PREFIX)) return p;
    bearer ??= p;
  }
  return bearer ?? false;
}
