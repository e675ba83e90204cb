import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';

import { KeepAliveKubeConfig } from '../../cmd/agentplane/kube-config.js';
import { makeServingCert } from '../support/tls.js';

// A real HTTPS server standing in for kube-apiserver, and the real client library: what is
// counted is the TCP connections the server accepts.
describe('KeepAliveKubeConfig: one kept-alive connection to kube-apiserver, not one per request', function () {
  this.timeout(20_000);
  let dir: string;
  let server: Server;
  let connections = 0;
  let url: string;
  let ca: Buffer;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agentplane-kube-config-'));
    ca = await makeServingCert(dir);
    server = createServer({ key: readFileSync(join(dir, 'serving.key')), cert: readFileSync(join(dir, 'serving.crt')) }, (req, res) => {
      const name = decodeURIComponent(req.url!.split('/').pop()!);
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } }));
    });
    server.on('secureConnection', () => connections++);
    await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const load = <K extends KubeConfig>(kc: K, caData: Buffer): K => {
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: url, caData: caData.toString('base64') }],
      users: [{ name: 'u', token: 'secret' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    return kc;
  };
  const readTimes = async (kc: KubeConfig, n: number, parallel = 1): Promise<number> => {
    const api = kc.makeApiClient(CoreV1Api);
    const before = connections;
    await Promise.all(
      Array.from({ length: parallel }, async (_, p) => {
        for (let i = 0; i < n; i++) expect((await api.readNamespace({ name: `ns-${p}-${i}` })).metadata?.name).to.equal(`ns-${p}-${i}`);
      }),
    );
    return connections - before;
  };

  it("the library's own KubeConfig opens a connection per request (why this class exists)", async () => {
    expect(await readTimes(load(new KubeConfig(), ca), 10)).to.equal(10);
  });

  it('requests one after another share one connection; concurrent ones at most one each', async () => {
    const kc = load(new KeepAliveKubeConfig(), ca);
    try {
      expect(await readTimes(kc, 20)).to.equal(1);
      expect(await readTimes(kc, 20)).to.equal(0);
      expect(await readTimes(kc, 10, 4)).to.be.at.most(4);
    } finally {
      kc.close();
    }
  });

  it('new TLS options (a rotated CA) get a new connection; the same options again reuse it', async () => {
    const kc = load(new KeepAliveKubeConfig(), ca);
    try {
      expect(await readTimes(kc, 3)).to.equal(1);
      // The same CA with a trailing newline is other bytes: the library's options changed.
      load(kc, Buffer.concat([ca, Buffer.from('\n')]));
      expect(await readTimes(kc, 3)).to.equal(1);
      expect(await readTimes(kc, 3)).to.equal(0);
    } finally {
      kc.close();
    }
  });
});
