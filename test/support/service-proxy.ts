// A stand-in for kube-proxy, for one Service, in the pods suites: the local cluster has neither
// kube-proxy nor cluster DNS, so a pod cannot dial a Service. This listens on the node IP (which
// pods reach) and forwards each connection to a ready endpoint of the Service, read from its
// EndpointSlices at connect time, so it follows the Service's pods as they are replaced.

import net from 'node:net';

import type { Cluster } from './pods.js';

interface EndpointSlice {
  ports?: { name?: string; port?: number }[];
  endpoints?: { addresses: string[]; conditions?: { ready?: boolean } }[];
}

export interface ServiceProxy {
  /** http://<node IP>:<port>: what pods dial instead of the Service. */
  url: string;
  close(): Promise<void>;
}

export async function serviceProxy(c: Cluster, namespace: string, service: string, portName: string): Promise<ServiceProxy> {
  const backend = async (): Promise<{ host: string; port: number }> => {
    const list = await c.json<{ items: EndpointSlice[] }>(['get', 'endpointslices', '-n', namespace, '-l', `kubernetes.io/service-name=${service}`]);
    for (const slice of list.items) {
      const port = slice.ports?.find((p) => p.name === portName)?.port;
      const ready = slice.endpoints?.find((e) => e.conditions?.ready !== false);
      if (port && ready) return { host: ready.addresses[0], port };
    }
    throw new Error(`no ready endpoint of ${namespace}/${service}`);
  };
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.pause();
    backend().then(
      ({ host, port }) => {
        const upstream = net.connect(port, host, () => {
          client.pipe(upstream);
          upstream.pipe(client);
          client.resume();
        });
        sockets.add(upstream);
        upstream.on('close', () => (sockets.delete(upstream), client.destroy()));
        upstream.on('error', () => client.destroy());
        client.on('error', () => upstream.destroy());
        client.on('close', () => upstream.destroy());
      },
      () => client.destroy(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, c.nodeIP, resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://${c.nodeIP}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
