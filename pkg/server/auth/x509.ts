// Client certificate chains, verified by hand. The TLS server requests a certificate but does
// not reject on its own (`rejectUnauthorized: false`), because two different trust roots apply
// (the front proxy's request-header CA and the client CA), and a certificate from one must not
// count for the other. The TLS handshake itself still proves the client holds the leaf's key.

import { X509Certificate } from 'node:crypto';

/** serverAuth/clientAuth OIDs as X509Certificate.keyUsage reports extended key usages. */
const EKU_CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';
const EKU_ANY = '2.5.29.37.0';
const MAX_INTERMEDIATES = 4;

/** The certificates a client presented, leaf first, and the leaf's subject fields. */
export interface PeerChain {
  leaf: X509Certificate;
  intermediates: X509Certificate[];
  /** Subject attributes of the leaf (e.g. CN, O); repeated attributes as several values. */
  subject: Record<string, string[]>;
}

export function parsePemBundle(pem: string | undefined): X509Certificate[] {
  if (!pem) return [];
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  return blocks.map((b) => new X509Certificate(b));
}

interface DetailedPeerCert {
  raw?: Buffer;
  fingerprint256?: string;
  subject?: Record<string, string | string[]>;
  issuerCertificate?: DetailedPeerCert;
}

/**
 * The chain a TLS client presented, from the request's socket (an HTTP/1.1 TLSSocket or the
 * proxy socket of an HTTP/2 stream). Undefined for plain HTTP or when no certificate was sent.
 */
export function peerChainOf(socket: unknown): PeerChain | undefined {
  const s = socket as { getPeerCertificate?: (detailed: boolean) => DetailedPeerCert | null } | undefined;
  if (typeof s?.getPeerCertificate !== 'function') return undefined;
  const top = s.getPeerCertificate(true);
  if (!top?.raw) return undefined;
  const certs: X509Certificate[] = [];
  const seen = new Set<string>();
  for (let c: DetailedPeerCert | undefined = top; c?.raw && certs.length <= MAX_INTERMEDIATES + 1; c = c.issuerCertificate) {
    const fp = c.fingerprint256 ?? String(certs.length);
    if (seen.has(fp)) break;
    seen.add(fp);
    certs.push(new X509Certificate(c.raw));
  }
  const subject: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(top.subject ?? {})) subject[k] = Array.isArray(v) ? v : [v];
  return { leaf: certs[0], intermediates: certs.slice(1), subject };
}

/**
 * Verifies that the chain leads from the leaf to one of `roots`, every certificate on the path
 * being within its validity period and correctly signed, intermediates being CAs, and the leaf
 * being usable for client authentication. Returns undefined when valid, else the reason.
 */
export function verifyClientChain(chain: PeerChain, roots: X509Certificate[], now = new Date()): string | undefined {
  if (!roots.length) return 'no trusted CA is configured';
  const { leaf } = chain;
  const dates = checkDates(leaf, now);
  if (dates) return dates;
  const eku = leaf.keyUsage;
  if (eku && eku.length && !eku.includes(EKU_CLIENT_AUTH) && !eku.includes(EKU_ANY)) {
    return 'certificate is not valid for client authentication';
  }
  const reaches = (cert: X509Certificate, depth: number, used: Set<X509Certificate>): boolean => {
    if (roots.some((root) => issuedBy(cert, root) && !checkDates(root, now))) return true;
    if (depth >= MAX_INTERMEDIATES) return false;
    return chain.intermediates.some(
      (im) => !used.has(im) && im.ca && !checkDates(im, now) && issuedBy(cert, im) && reaches(im, depth + 1, new Set([...used, im])),
    );
  };
  return reaches(leaf, 0, new Set([leaf])) ? undefined : 'certificate signed by unknown authority';
}

function issuedBy(cert: X509Certificate, issuer: X509Certificate): boolean {
  try {
    return cert.checkIssued(issuer) && cert.verify(issuer.publicKey);
  } catch {
    return false;
  }
}

function checkDates(cert: X509Certificate, now: Date): string | undefined {
  const from = new Date(cert.validFrom);
  const to = new Date(cert.validTo);
  if (Number.isNaN(from.getTime()) || Number.isNaN(to.getTime())) return 'certificate has unreadable validity dates';
  if (now < from) return `certificate is not valid before ${from.toISOString()}`;
  if (now > to) return `certificate expired at ${to.toISOString()}`;
  return undefined;
}
