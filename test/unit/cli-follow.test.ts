// followAgent when the replay arrives in the same TCP segment as the WebSocket handshake: the
// end event is delivered before the socket is handed to the follower, and the follower must
// still stop. A raw server on loopback writes the 101 answer and the frames in one write, which
// is what a finished task's replay looks like on a fast server; the real server is looped in
// test/integration/cli.test.ts.

import { createHash } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { expect } from 'chai';
import type { AgentEvent } from '../../pkg/api/event.js';
import { Client } from '../../pkg/cli/client.js';
import { followAgent } from '../../pkg/cli/follow.js';

const WS_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

/** One unmasked text frame (server to client), payloads under 64 KiB. */
function textFrame(text: string): Buffer {
  const payload = Buffer.from(text);
  const head = payload.length < 126 ? Buffer.from([0x81, payload.length]) : Buffer.from([0x81, 126, payload.length >> 8, payload.length & 0xff]);
  return Buffer.concat([head, payload]);
}

const event = (seq: number, type: string): AgentEvent =>
  ({ seq, agentName: 'a', namespace: 'default', task: 2, type, timestamp: new Date(0).toISOString(), payload: {} }) as unknown as AgentEvent;

describe('CLI follow: replay in the handshake segment', () => {
  let server: Server;
  let url: string;
  const sockets = new Set<Socket>();

  before(async () => {
    server = createServer((sock) => {
      sockets.add(sock);
      sock.on('close', () => sockets.delete(sock));
      sock.once('data', (req) => {
        const key = /sec-websocket-key: *(\S+)/i.exec(req.toString('latin1'))![1];
        const accept = createHash('sha1')
          .update(key + WS_GUID)
          .digest('base64');
        const answer = `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`;
        // The whole finished task at once, and then the socket stays open, as a live stream does.
        sock.write(
          Buffer.concat([
            Buffer.from(answer),
            ...[event(1, 'task_started'), event(2, 'text'), event(3, 'task_completed')].map((e) => textFrame(JSON.stringify(e))),
          ]),
        );
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });

  after(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => server.close(r));
  });

  it('stops at the end event and closes the socket, 50 times in a row', async () => {
    const client = new Client({ server: url, namespace: 'default' });
    for (let i = 0; i < 50; i++) {
      const seen: string[] = [];
      const f = followAgent(client, 'default', 'a', 0, (ev) => {
        seen.push(ev.type);
        return ev.type === 'task_completed';
      });
      const outcome = await Promise.race([f.done.then(() => 'done'), new Promise((r) => setTimeout(r, 3000, 'still waiting'))]);
      f.stop();
      expect(outcome, `follow ${i}`).to.equal('done');
      expect(seen).to.deep.equal(['task_started', 'text', 'task_completed']);
    }
  });
});
