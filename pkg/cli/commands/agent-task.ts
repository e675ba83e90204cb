// The agent's task number, which the REST answers lack: read from the aggregated API's object.

import { GROUP_VERSION } from '../client.js';
import type { Session } from '../session.js';

/** The number of the agent's newest task; undefined when it cannot be read (then callers guess less). */
export async function taskNumber(s: Session, name: string): Promise<number | undefined> {
  try {
    const { body } = await s.client.call<{ spec?: { task?: unknown } } | undefined>(
      'GET',
      `/apis/${GROUP_VERSION}/namespaces/${encodeURIComponent(s.target.namespace)}/agents/${encodeURIComponent(name)}`,
      { kind: 'agent' },
    );
    return typeof body?.spec?.task === 'number' ? body.spec.task : undefined;
  } catch {
    return undefined;
  }
}
