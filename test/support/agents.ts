// Agent helpers for integration tests: reach a state through the public API and wait for it.

import { expect } from 'chai';
import { EventClient, eventually, type Harness } from './harness.js';

export interface AgentView {
  name: string;
  status: string;
  taskStatus: string;
  lifecycle: string;
  lastTaskMessage: string;
}

export const getAgent = async (h: Harness, name: string, ns = 'default'): Promise<AgentView | undefined> => {
  const r = await h.api('GET', `/api/v1/agents/${name}?namespace=${ns}`);
  return r.status === 200 ? (r.body as AgentView) : undefined;
};

export function waitAgent(h: Harness, name: string, pred: (a: AgentView) => boolean, what = 'agent state', ns = 'default'): Promise<AgentView> {
  return eventually(
    async () => {
      const a = await getAgent(h, name, ns);
      return a && pred(a) ? a : undefined;
    },
    45_000,
    `${name}: ${what}`,
  );
}

/** Sends a task (with more agent fields, e.g. templateRef) and waits for it to end; returns its events. */
export async function runTask(
  h: Harness,
  name: string,
  instructions: string,
  ns = 'default',
  fields: Record<string, unknown> = {},
): Promise<EventClient['events']> {
  const r = await h.api('POST', '/api/v1/agents', { name, namespace: ns, instructions, ...fields });
  expect([200, 201], JSON.stringify(r.body)).to.include(r.status);
  const ws = new EventClient(`${h.url}/api/v1/agents/${name}/ws?namespace=${ns}`);
  try {
    return await ws.untilTaskEnd();
  } finally {
    ws.close();
  }
}

/** An agent that has run one task and is now asleep (lifecycle Sleep). */
export async function sleepingAgent(h: Harness, name: string, ns = 'default'): Promise<void> {
  await runTask(h, name, `@bash echo ${name} > me.txt\n@say ready`, ns);
  const r = await h.api('PATCH', `/api/v1/agents/${name}?namespace=${ns}`, { lifecycle: 'Sleep' });
  expect(r.status).to.equal(200);
  await waitAgent(h, name, (a) => a.status === 'Sleeping', 'asleep', ns);
}

export interface SquadView {
  name: string;
  phase: string;
  members: { name: string; phase: string; taskStatus: string }[];
  orphanTTL: string;
  orphanedSince: string | null;
  breakUpRequested: boolean;
}

export const getSquad = async (h: Harness, name: string): Promise<SquadView | undefined> => {
  const r = await h.api('GET', `/api/v1/squads/${name}`);
  return r.status === 200 ? (r.body as SquadView) : undefined;
};

export function waitSquad(h: Harness, name: string, pred: (s: SquadView | undefined) => boolean, what = 'squad state'): Promise<true> {
  return eventually(async () => pred(await getSquad(h, name)) || undefined, 45_000, `squad ${name}: ${what}`);
}
