// An OpenID Connect issuer for tests, on loopback over HTTPS: the discovery document, a JWKS
// and ID tokens signed with real keys (jose). It stands in for an identity provider such as
// Dex or Keycloak; the server under test validates its tokens exactly as it would theirs.

import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT } from 'jose';
import { makeServingCert } from './tls.js';

type PrivateKey = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

interface SigningKey {
  kid: string;
  alg: string;
  privateKey: PrivateKey;
  jwk: JWK;
}

export interface OidcIssuer {
  /** `https://127.0.0.1:<port>`: the `iss` of its tokens. */
  url: string;
  /** PEM of the CA that signed its serving certificate (for --oidc-ca-file). */
  caFile: string;
  /** How many times the JWKS was fetched. */
  jwksFetches(): number;
  /** A signed ID token: `iss` and a one-hour `exp` unless `claims` say otherwise; `kid` picks the key. */
  token(claims: JWTPayload, opts?: { kid?: string; audience?: string | string[]; expiresIn?: string | number }): Promise<string>;
  /** Adds a key; `publish: false` keeps it out of the JWKS (a key the issuer never owned). */
  addKey(kid: string, opts?: { publish?: boolean; alg?: 'RS256' | 'ES256' }): Promise<void>;
  /** Removes a key from the JWKS (rotation). */
  retireKey(kid: string): void;
  close(): Promise<void>;
}

/** Starts the issuer with one published RS256 key, `k1`. `dir` receives its certificates. */
export async function startOidcIssuer(dir: string, audience: string): Promise<OidcIssuer> {
  await makeServingCert(dir);
  const caFile = join(dir, 'serving-ca.crt');
  const keys = new Map<string, SigningKey & { published: boolean }>();
  let fetches = 0;
  let url = '';
  const server: Server = createServer({ key: readFileSync(join(dir, 'serving.key')), cert: readFileSync(join(dir, 'serving.crt')) }, (req, res) => {
    const send = (body: unknown): void => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.url === '/.well-known/openid-configuration') {
      return send({
        issuer: url,
        jwks_uri: `${url}/keys`,
        id_token_signing_alg_values_supported: ['RS256', 'ES256'],
        response_types_supported: ['id_token'],
        subject_types_supported: ['public'],
      });
    }
    if (req.url === '/keys') {
      fetches++;
      return send({ keys: [...keys.values()].filter((k) => k.published).map((k) => k.jwk) });
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const issuer: OidcIssuer = {
    url,
    caFile,
    jwksFetches: () => fetches,
    async addKey(kid, opts = {}) {
      const alg = opts.alg ?? 'RS256';
      const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
      const jwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
      keys.set(kid, { kid, alg, privateKey, jwk, published: opts.publish !== false });
    },
    retireKey(kid) {
      keys.delete(kid);
    },
    async token(claims, opts = {}) {
      const key = keys.get(opts.kid ?? 'k1');
      if (!key) throw new Error(`no key ${opts.kid}`);
      return new SignJWT(claims)
        .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT' })
        .setIssuer(claims.iss ?? url)
        .setAudience(opts.audience ?? audience)
        .setIssuedAt()
        .setExpirationTime(opts.expiresIn ?? '1h')
        .sign(key.privateKey);
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  await issuer.addKey('k1');
  return issuer;
}
