// The worker's only listener, in a pod: GET /healthz answers 200 while the control channel is
// open and 503 otherwise, for the container's readiness probe. It serves nothing else, carries
// no data and needs no credential (docs/kubernetes-runtime.md "Worker pods").

import { createServer, type Server } from 'node:http';

export function startHealthServer(port: number, connected: () => boolean): Server {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url !== '/healthz') {
      res.writeHead(404).end();
      return;
    }
    const ok = connected();
    res.writeHead(ok ? 200 : 503, { 'content-type': 'text/plain' }).end(ok ? 'ok\n' : 'control channel not connected\n');
  });
  server.listen(port);
  server.unref();
  return server;
}
