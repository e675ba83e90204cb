// Model proxy overhead: the same Messages API request sent straight to the scripted model and
// through the server's model proxy, interleaved in one run, over the same kind of keep-alive
// connection. The difference of the two is what the proxy adds per request.

import http from 'node:http';
import { performance } from 'node:perf_hooks';
import type { BenchServer } from './support.js';

export interface ProxyOverhead {
  direct: number[];
  proxied: number[];
}

const TOOLS = [{ name: 'Bash', description: 'run', input_schema: { type: 'object', properties: {} } }];

/** One request; resolves with the milliseconds until the whole response was read. */
function timed(agent: http.Agent, url: string, key: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = http.request(url, {
      method: 'POST',
      agent,
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-api-key': key, 'content-length': Buffer.byteLength(body) },
    });
    req.on('response', (res) => {
      if (res.statusCode !== 200) reject(new Error(`${url}: HTTP ${res.statusCode}`));
      res.resume();
      res.on('end', () => resolve(performance.now() - t0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** `rounds` streamed requests each way, alternating, after a warm-up of both paths. */
export async function proxyOverhead(b: BenchServer, apiKey: string, rounds: number): Promise<ProxyOverhead> {
  const credential = b.server.modelProxy.credentials.issue({ namespace: 'bench', name: 'proxy-bench' }, 'bench-uid');
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const direct: number[] = [];
  const proxied: number[] = [];
  try {
    for (let i = -20; i < rounds; i++) {
      const body = JSON.stringify({ model: 'bench', max_tokens: 64, stream: true, tools: TOOLS, messages: [{ role: 'user', content: `@say reply ${i}` }] });
      const d = await timed(agent, `${b.model.url}/v1/messages`, apiKey, body);
      const p = await timed(agent, `${b.server.modelProxy.url}/v1/messages`, credential, body);
      if (i >= 0) {
        direct.push(d);
        proxied.push(p);
      }
    }
  } finally {
    agent.destroy();
    b.server.modelProxy.credentials.revoke({ namespace: 'bench', name: 'proxy-bench' });
  }
  return { direct, proxied };
}
