// The listeners, as runnables: the sandboxed workers' socket, the worker listener (when workers
// have one of their own) and the public HTTP listener. Binding a listener tells the channel
// endpoint where local workers dial.

import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { type ChannelEndpoint, loopbackFor, portOf } from './endpoints.js';
import type { App } from './public-api.js';
import type { BuiltRuntime } from './runtimes.js';
import type { WorkerApps } from './worker-apps.js';
import type { Wiring } from './wiring.js';

export function addListeners(
  { o, manager }: Wiring,
  app: App,
  wa: WorkerApps,
  workerSocket: string | undefined,
  built: BuiltRuntime,
  channel: ChannelEndpoint,
): void {
  const { workers, socket } = wa;
  if (socket && workerSocket) {
    manager.add({
      name: 'worker socket',
      start: async () => {
        mkdirSync(dirname(workerSocket), { recursive: true, mode: 0o700 });
        rmSync(workerSocket, { force: true }); // an earlier run's
        await socket.listen({ path: workerSocket });
        // As root the sandbox's user (nobody) must connect; the directory keeps the host's other users out.
        chmodSync(workerSocket, process.getuid?.() === 0 ? 0o666 : 0o600);
      },
      stop: () => socket.close(),
    });
  }
  if (workers !== app) {
    // Local workers: a loopback port of its own. Pods: where they can reach it (the workers'
    // Service), plain HTTP with per-agent credentials (docs/kubernetes-runtime.md "Network").
    const listen = built.listen ?? { host: '127.0.0.1', port: 0 };
    manager.add({
      name: 'worker listener',
      start: async () => {
        await workers.listen(listen);
        channel.bind(built.workerUrl(`http://${loopbackFor(listen.host)}:${portOf(workers, listen.port)}`));
      },
      stop: () => workers.close(),
    });
  }
  manager.add({
    name: 'http',
    start: async () => {
      await app.listen({ host: o.host, port: o.port });
      if (workers === app) channel.bind(`http://${loopbackFor(o.host)}:${portOf(app, o.port)}`);
    },
    stop: () => app.close(),
  });
}
