import { once } from 'node:events';
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';

import { expect } from 'chai';

import { excludeNetworkFromReports } from '../../pkg/worker/engine-session.js';

interface Endpoint {
  host?: string;
  ip4?: string;
}
type ReportFlags = NodeJS.ProcessReport & { excludeNetwork: boolean };

/** The endpoints of this process's connected TCP handles, as a diagnostic report lists them. */
function tcpEndpoints(): Endpoint[] {
  const report = process.report.getReport() as { libuv: { type: string; remoteEndpoint?: Endpoint }[] };
  return report.libuv.filter((h) => h.type === 'tcp' && h.remoteEndpoint).map((h) => h.remoteEndpoint!);
}

describe('excludeNetworkFromReports', () => {
  const flags = process.report as ReportFlags;
  let saved: boolean;
  before(() => (saved = flags.excludeNetwork));
  after(() => (flags.excludeNetwork = saved));

  it('makes a diagnostic report (the engine SDK asks for one at every engine start) resolve no socket address', async () => {
    const server = createServer().listen(0, '127.0.0.1');
    await once(server, 'listening');
    const client: Socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
    await once(client, 'connect');
    try {
      flags.excludeNetwork = false;
      // By default each address is looked up by name (a reverse DNS query where /etc/hosts has none).
      expect(tcpEndpoints().map((e) => e.host)).to.include('localhost');
      excludeNetworkFromReports();
      const endpoints = tcpEndpoints();
      expect(endpoints).to.not.have.lengthOf(0);
      for (const e of endpoints) expect(e.host).to.equal(e.ip4);
    } finally {
      client.destroy();
      server.close();
    }
  });
});
