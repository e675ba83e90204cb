// What an IP address is, for deciding where the server (connectors) and agents' tools (the egress
// proxy) may connect. One classification for both, so a range refused for one is refused for the
// other. IPv6 forms that carry an IPv4 address (mapped, translated, compatible, NAT64, 6to4) are
// classified by that IPv4 address: `::ffff:127.0.0.1` and `64:ff9b::a00:1` are what they embed.
//
// Node's BlockList holds the ranges; the few embedded-IPv4 forms are read here, on the URL
// parser's canonical text of the address (so `::ffff:7f00:1` and `::ffff:127.0.0.1` are one).

import { BlockList, isIP } from 'node:net';

/**
 * `reserved`: addresses no connector or tool has business reaching (documentation, benchmarking,
 * multicast, broadcast, "this network", IETF protocol assignments, anything IPv6 outside global
 * unicast). Refused like link-local.
 */
export type AddressClass = 'public' | 'loopback' | 'private' | 'link-local' | 'metadata' | 'reserved';

const METADATA_ADDRESSES = new Set(['169.254.169.254', '169.254.170.2', 'fd00:ec2::254', '100.100.100.200']);
export const METADATA_HOSTS = new Set(['metadata.google.internal', 'metadata.goog']);

const list = (entries: [string, number, 'ipv4' | 'ipv6'][]): BlockList => {
  const b = new BlockList();
  for (const [net, prefix, type] of entries) b.addSubnet(net, prefix, type);
  return b;
};
const LINK_LOCAL = list([
  ['169.254.0.0', 16, 'ipv4'],
  ['fe80::', 10, 'ipv6'],
]);
// 0.0.0.0/8 and :: reach the host itself when connected to.
const LOOPBACK = list([
  ['127.0.0.0', 8, 'ipv4'],
  ['0.0.0.0', 8, 'ipv4'],
  ['::1', 128, 'ipv6'],
  ['::', 128, 'ipv6'],
]);
const PRIVATE = list([
  ['10.0.0.0', 8, 'ipv4'],
  ['172.16.0.0', 12, 'ipv4'],
  ['192.168.0.0', 16, 'ipv4'],
  ['100.64.0.0', 10, 'ipv4'], // carrier-grade NAT (shared address space)
  ['fc00::', 7, 'ipv6'], // unique local
  ['fec0::', 10, 'ipv6'], // site-local (deprecated, still routed inside some sites)
  ['64:ff9b:1::', 48, 'ipv6'], // local-use NAT64 (RFC 8215): a translator inside the network
]);
const RESERVED = list([
  ['192.0.0.0', 24, 'ipv4'], // IETF protocol assignments
  ['192.0.2.0', 24, 'ipv4'], // documentation (TEST-NET-1)
  ['192.88.99.0', 24, 'ipv4'], // 6to4 relay anycast (deprecated)
  ['198.18.0.0', 15, 'ipv4'], // benchmarking
  ['198.51.100.0', 24, 'ipv4'], // documentation (TEST-NET-2)
  ['203.0.113.0', 24, 'ipv4'], // documentation (TEST-NET-3)
  ['224.0.0.0', 4, 'ipv4'], // multicast
  ['240.0.0.0', 4, 'ipv4'], // reserved, and 255.255.255.255 broadcast
  ['ff00::', 8, 'ipv6'], // multicast
  ['100::', 64, 'ipv6'], // discard
  ['2001::', 23, 'ipv6'], // IETF protocol assignments, Teredo (2001::/32) among them
  ['2001:db8::', 32, 'ipv6'], // documentation
  ['3fff::', 20, 'ipv6'], // documentation
  ['5f00::', 16, 'ipv6'], // SRv6 SIDs
]);
/** IPv6 global unicast: anything else (not classified above) is reserved. */
const GLOBAL_UNICAST = list([['2000::', 3, 'ipv6']]);

/** The class of an IP address (v4 or v6, brackets allowed); undefined when it is not one. */
export function classifyAddress(address: string): AddressClass | undefined {
  const a = address.replace(/^\[|\]$/g, '').toLowerCase();
  const family = isIP(a);
  if (family === 4) return classifyV4(a);
  if (family !== 6) return undefined;
  const v6 = canonicalV6(a);
  if (METADATA_ADDRESSES.has(v6)) return 'metadata';
  const groups = groupsOf(v6);
  const embedded = groups && embeddedV4(groups);
  if (embedded) return classifyV4(embedded);
  if (LINK_LOCAL.check(v6, 'ipv6')) return 'link-local';
  if (LOOPBACK.check(v6, 'ipv6')) return 'loopback';
  if (PRIVATE.check(v6, 'ipv6')) return 'private';
  if (RESERVED.check(v6, 'ipv6') || !GLOBAL_UNICAST.check(v6, 'ipv6')) return 'reserved';
  return 'public';
}

function classifyV4(a: string): AddressClass {
  if (METADATA_ADDRESSES.has(a)) return 'metadata';
  if (LINK_LOCAL.check(a, 'ipv4')) return 'link-local';
  if (LOOPBACK.check(a, 'ipv4')) return 'loopback';
  if (PRIVATE.check(a, 'ipv4')) return 'private';
  if (RESERVED.check(a, 'ipv4')) return 'reserved';
  return 'public';
}

/** The class of a host as written: an IP literal, a metadata or localhost name, else public (names are checked again when resolved). */
export function classifyHost(hostname: string): AddressClass {
  const h = hostname.toLowerCase().replace(/\.$/, '');
  const ip = classifyAddress(h);
  if (ip) return ip;
  if (METADATA_HOSTS.has(h)) return 'metadata';
  if (h === 'localhost' || h.endsWith('.localhost')) return 'loopback';
  return 'public';
}

/**
 * The IPv4 address an IPv6 address carries, when it is one of the forms that reach that IPv4
 * address: IPv4-mapped `::ffff:a.b.c.d`, IPv4-translated `::ffff:0:a.b.c.d`, IPv4-compatible
 * `::a.b.c.d` (not `::` or `::1`), NAT64 `64:ff9b::a.b.c.d` and 6to4 `2002:AABB:CCDD::/48`.
 */
function embeddedV4(g: number[]): string | undefined {
  const zero = (from: number, to: number): boolean => g.slice(from, to).every((x) => x === 0);
  const v4 = (hi: number, lo: number): string => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  if (zero(0, 5) && g[5] === 0xffff) return v4(g[6], g[7]);
  if (zero(0, 4) && g[4] === 0xffff && g[5] === 0) return v4(g[6], g[7]);
  if (zero(0, 6) && (g[6] !== 0 || g[7] > 1)) return v4(g[6], g[7]);
  if (g[0] === 0x64 && g[1] === 0xff9b && zero(2, 6)) return v4(g[6], g[7]);
  if (g[0] === 0x2002) return v4(g[1], g[2]);
  return undefined;
}

/** The eight 16-bit groups of a canonical IPv6 text (no dotted part: the URL parser writes it in hex). */
function groupsOf(v6: string): number[] | undefined {
  const [head, tail] = v6.includes('::') ? v6.split('::') : [v6, undefined];
  const parse = (s: string | undefined): number[] => (s ? s.split(':').map((x) => parseInt(x, 16)) : []);
  const h = parse(head);
  const t = parse(tail);
  const groups = tail === undefined ? h : [...h, ...new Array<number>(8 - h.length - t.length).fill(0), ...t];
  return groups.length === 8 && groups.every((x) => Number.isInteger(x) && x >= 0 && x <= 0xffff) ? groups : undefined;
}

/** A canonical text form of an IPv6 address (via the URL parser): lowercase, `::`-compressed, hex only. */
function canonicalV6(a: string): string {
  try {
    return new URL(`http://[${a}]/`).hostname.replace(/^\[|\]$/g, '');
  } catch {
    return a;
  }
}
