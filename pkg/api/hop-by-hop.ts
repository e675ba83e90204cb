// The hop-by-hop headers (RFC 9110 section 7.6.1, with the proxy ones Node's and curl's clients
// send): meaningful for one connection only, so no proxy of this service forwards them. Each
// proxy adds the headers of its own that it also drops (the caller's credential, cookies, ...).

export const HOP_BY_HOP_HEADERS: readonly string[] = [
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
];
