// Requests kept on an agent for its controller to act on (see `requestCancel` in pkg/api/agent.ts).

import { type Agent, isBusy } from '../../api/agent.js';
import { requestCancel } from '../../api/agent-annotations.js';
import type { Registry } from '../registry.js';

/** Asks for the agent's running task to be cancelled, without waiting; nothing when it has none. */
export async function cancelRunningTask(agents: Registry<Agent>, namespace: string, name: string, reason: string): Promise<void> {
  await agents.update(namespace, name, (a) => {
    if (isBusy(a)) requestCancel(a, reason);
  });
}
