// How a worker started by a runtime learns its secrets and reaches the server: shared by the
// worker's entry point and stand-in workers (tests, benches), so they start the same way.

import { connect, type Socket } from 'node:net';

export interface WorkerSecrets {
  /** The control channel's bearer token. */
  token?: string;
  /** The agent's model credential (the proxy's, never the model key). */
  credential?: string;
}

/**
 * A local runtime sends the token and credential as the worker's first IPC message
 * (`AGENTPLANE_SECRETS=ipc`), so they are in no environment a tool could read; a pod's come from
 * its Secret, in its environment.
 */
export async function workerSecrets(env: NodeJS.ProcessEnv = process.env): Promise<WorkerSecrets> {
  const from = env.AGENTPLANE_SECRETS === 'ipc' ? await secretsFromParent() : env;
  return {
    ...(from.AGENTPLANE_AGENT_TOKEN ? { token: from.AGENTPLANE_AGENT_TOKEN } : {}),
    ...(from.ANTHROPIC_API_KEY ? { credential: from.ANTHROPIC_API_KEY } : {}),
  };
}

function secretsFromParent(): Promise<Record<string, string | undefined>> {
  return new Promise((resolve, reject) => {
    if (!process.send) return reject(new Error('AGENTPLANE_SECRETS=ipc without an IPC channel'));
    const onMessage = (m: unknown): void => {
      const msg = m as { type?: string; env?: Record<string, string> };
      if (msg?.type !== 'secrets' || typeof msg.env !== 'object') return;
      process.off('message', onMessage);
      resolve(msg.env);
    };
    process.on('message', onMessage);
  });
}

/**
 * How to open a connection to the server: over its worker socket (`AGENTPLANE_SERVER_SOCKET`, in
 * a sandbox whose network is its own), else by the URL's host and port.
 */
export function serverConnection(socketPath: string | undefined): { createConnection?: () => Socket } {
  return socketPath ? { createConnection: () => connect(socketPath) } : {};
}
