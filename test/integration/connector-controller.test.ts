// The connector controller end to end: connectors written through the aggregated API (as kubectl
// would), used by no agent, get their status from the controller alone: reachability within
// seconds, a closed port as Unreachable with its reason, a secret's change re-checked, and a
// server that goes away noticed by the periodic re-check. A real server and a real MCP server.

import { createServer } from 'node:net';
import { expect } from 'chai';
import { eventually, type Harness, startHarness } from '../support/harness.js';
import { createTestMcpServer, type TestMcpServer } from '../support/mcp-server.js';

const NS = '/apis/agentplane.io/v1alpha1/namespaces/default';
const TOKEN = 'mcp-ctl-2b7e4f9a1c3d5e80';
/** The re-check period the server runs with here: the default (30 s) is too long for a test. */
const RESYNC_MS = 1_000;

const connector = (name: string, url: string, secret?: string) => ({
  apiVersion: 'agentplane.io/v1alpha1',
  kind: 'Connector',
  metadata: { name },
  spec: { url, service: 'echo', ...(secret ? { authSecretName: secret, authSecretKey: 'token' } : {}) },
});

/** A loopback port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as { port: number };
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

describe('connector controller (integration)', function () {
  let h: Harness;
  let mcp: TestMcpServer;
  const status = async (name: string): Promise<{ phase: string; message: string; toolCount?: number; lastCheckedAt?: string }> =>
    (await h.api('GET', `${NS}/connectors/${name}`)).body.status;
  const phaseBecomes = (name: string, phase: string, ms: number) =>
    eventually(
      async () => {
        const s = await status(name);
        return s.phase === phase && s;
      },
      ms,
      `connector ${name} ${phase}`,
    );

  before(async () => {
    mcp = createTestMcpServer({ token: TOKEN });
    await mcp.start();
    h = await startHarness({ connectorChecks: { resyncMs: RESYNC_MS, maxBackoffMs: 2 * RESYNC_MS } });
    expect((await h.api('POST', '/api/v1/secrets', { name: 'ctl-token', data: { token: TOKEN } })).status).to.equal(201);
    expect((await h.api('POST', '/api/v1/secrets', { name: 'ctl-wrong', data: { token: 'not-the-token' } })).status).to.equal(201);
  });
  after(async () => {
    await h?.close();
    await mcp?.close();
  });

  it('a connector created through the aggregated API, used by no agent, shows Ready with its tools within 30 s', async () => {
    const r = await h.api('POST', `${NS}/connectors`, connector('kube-echo', mcp.url, 'ctl-token'));
    expect(r.status, r.text).to.equal(201);
    const s = await phaseBecomes('kube-echo', 'Ready', 30_000);
    expect(s).to.include({ toolCount: 1, message: '1 tool available' });
    expect(Date.parse(s.lastCheckedAt!)).to.be.closeTo(Date.now(), 60_000);
    expect(mcp.tokensSeen).to.include(TOKEN);
    // The REST mirror reads the same status.
    expect((await h.api('GET', '/api/v1/connectors/kube-echo')).body.status.phase).to.equal('Ready');
  });

  it('one pointing at a closed port shows Unreachable with the reason', async () => {
    const url = `http://127.0.0.1:${await closedPort()}/mcp`;
    expect((await h.api('POST', `${NS}/connectors`, connector('kube-closed', url))).status).to.equal(201);
    const s = await phaseBecomes('kube-closed', 'Unreachable', 30_000);
    expect(s.message).to.contain(url);
  });

  it('a secret replaced through the REST mirror re-checks the connectors that use it', async () => {
    expect((await h.api('POST', `${NS}/connectors`, connector('kube-wrong', mcp.url, 'ctl-wrong'))).status).to.equal(201);
    await phaseBecomes('kube-wrong', 'Unauthorized', 30_000);
    const put = await h.api('PUT', '/api/v1/secrets/ctl-wrong', { data: { token: TOKEN } });
    expect(put.status, put.text).to.equal(200);
    await phaseBecomes('kube-wrong', 'Ready', 10_000);
  });

  it('a spec change through the aggregated API is checked again', async () => {
    const url = `http://127.0.0.1:${await closedPort()}/mcp`;
    const merge = { 'content-type': 'application/merge-patch+json' };
    const r = await h.api('PATCH', `${NS}/connectors/kube-closed`, { spec: { url: mcp.url } }, merge);
    expect(r.status, r.text).to.equal(200);
    // No credential: the server answers, and refuses.
    await phaseBecomes('kube-closed', 'Unauthorized', 10_000);
    expect((await h.api('PATCH', `${NS}/connectors/kube-closed`, { spec: { url } }, merge)).status).to.equal(200);
    await phaseBecomes('kube-closed', 'Unreachable', 10_000);
  });

  it('after the MCP server goes away, the periodic re-check shows Unreachable within a bounded time', async () => {
    const started = Date.now();
    await mcp.close();
    const s = await phaseBecomes('kube-echo', 'Unreachable', 15_000);
    expect(s.message).to.contain(mcp.url);
    // Ready connectors are checked every RESYNC_MS; allow for the probe and a loaded machine.
    expect(Date.now() - started).to.be.below(15_000);
  });
});
