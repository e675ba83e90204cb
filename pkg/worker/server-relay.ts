// The sandboxed worker's way out for its engine and tools. A sandbox with its own network
// namespace reaches nothing but its own loopback, and the worker reaches the server only over a
// Unix socket bound into the sandbox. This relay listens on the sandbox's loopback and passes
// requests on over that socket, adding the agent's model credential itself: the engine is given
// a placeholder key and the relay's address (ANTHROPIC_BASE_URL, HTTP(S)_PROXY), so neither it
// nor any tool holds a credential. What reaches the relay acts as the agent (as the engine
// does); what lies behind the socket (the model proxy, the connector gateway, the egress proxy)
// decides what the agent may do.

import { type IncomingHttpHeaders, type IncomingMessage, request, type Server, type ServerResponse, createServer } from 'node:http';
import type { Socket } from 'node:net';

/** The key the engine sends: not a credential, only a value for its client to send. */
export const PLACEHOLDER_API_KEY = 'sandboxed-credential-added-by-the-worker';

export interface RelayOptions {
  /** The server's worker socket. */
  socketPath: string;
  /** The agent's model credential; replaced on re-assignment (warm-pool slots). */
  credential: () => string;
}

export interface Relay {
  /** `http://127.0.0.1:<port>` inside the sandbox. */
  readonly url: string;
  close(): Promise<void>;
}

// Hop-by-hop headers (RFC 9110 7.6.1), never passed on; to agentplane, nor is the caller's key.
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host']);
const TO_AGENTPLANE = new Set([...HOP_BY_HOP, 'authorization', 'x-api-key']);

export async function startRelay(o: RelayOptions): Promise<Relay> {
  const server = createServer((req, res) => forward(o, req, res));
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => tunnel(o, req.url ?? '', client, head));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, close: () => closeServer(server) };
}

function forward(o: RelayOptions, req: IncomingMessage, res: ServerResponse): void {
  const target = req.url ?? '/';
  // A plain-HTTP request through the proxy (absolute form): tunnel to its host, send it there.
  if (!target.startsWith('/')) return viaTunnel(o, req, res, target);
  const headers = passed(req.headers, TO_AGENTPLANE);
  headers['x-api-key'] = o.credential();
  const up = request({ socketPath: o.socketPath, method: req.method, path: target, headers: { ...headers, host: 'agentplane' } }, (r) => {
    res.writeHead(r.statusCode ?? 502, r.statusMessage, r.headers);
    r.pipe(res);
  });
  up.setNoDelay(true);
  up.on('error', (err) => fail(res, 502, `agentplane is unreachable: ${err.message}`));
  req.pipe(up);
}

/** Opens a CONNECT tunnel to `authority` through the server's egress proxy. */
function openTunnel(o: RelayOptions, authority: string, done: (err: Error | undefined, socket?: Socket, status?: number, reason?: string) => void): void {
  const up = request({
    socketPath: o.socketPath,
    method: 'CONNECT',
    path: authority,
    headers: { host: authority, 'proxy-authorization': `Basic ${Buffer.from(`agent:${o.credential()}`).toString('base64')}` },
  });
  up.on('connect', (r: IncomingMessage, socket: Socket, head: Buffer) => {
    if (r.statusCode !== 200) {
      socket.destroy();
      return done(undefined, undefined, r.statusCode ?? 502, r.statusMessage ?? '');
    }
    if (head.length) socket.unshift(head);
    done(undefined, socket, 200);
  });
  up.on('error', (err) => done(err));
  up.end();
}

function tunnel(o: RelayOptions, authority: string, client: Socket, head: Buffer): void {
  openTunnel(o, authority, (err, socket, status, reason) => {
    if (err || !socket) {
      client.end(`HTTP/1.1 ${err ? 502 : status} ${err ? 'Bad Gateway' : reason}\r\ncontent-length: 0\r\n\r\n`);
      return;
    }
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length) socket.write(head);
    socket.pipe(client).pipe(socket);
    const end = (): void => {
      socket.destroy();
      client.destroy();
    };
    socket.on('error', end);
    client.on('error', end);
  });
}

function viaTunnel(o: RelayOptions, req: IncomingMessage, res: ServerResponse, target: string): void {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return fail(res, 400, 'not a URL');
  }
  if (url.protocol !== 'http:') return fail(res, 400, 'only http:// URLs are relayed in absolute form; use CONNECT for https');
  openTunnel(o, `${url.hostname}:${url.port || 80}`, (err, socket, status, reason) => {
    if (err || !socket) return fail(res, err ? 502 : status!, err ? err.message : reason!);
    const up = request(
      {
        createConnection: () => socket,
        method: req.method,
        path: `${url.pathname}${url.search}`,
        headers: { ...passed(req.headers, HOP_BY_HOP), host: url.host },
      },
      (r) => {
        res.writeHead(r.statusCode ?? 502, r.statusMessage, r.headers);
        r.pipe(res);
      },
    );
    up.on('error', (e) => fail(res, 502, e.message));
    req.pipe(up);
  });
}

function passed(h: IncomingHttpHeaders, dropped: Set<string>): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined && !dropped.has(k)) out[k] = v;
  return out;
}

function fail(res: ServerResponse, status: number, message: string): void {
  if (res.headersSent) return void res.destroy();
  res.writeHead(status, { 'content-type': 'text/plain' }).end(`${message}\n`);
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}
