// Squad operations under concurrency: two clients add and remove members, create squads and put
// agents to sleep or wake them, at once, for many rounds. After each round the service must
// settle into a consistent state, checked through the API and against where workers really run.

import { expect } from 'chai';
import { eventually, type Harness, startHarness } from '../support/harness.js';
import { sleepingAgent } from '../support/agents.js';
import { seeded } from '../support/random.js';

const AGENTS = ['ann', 'ben', 'cat', 'dan', 'eli'];
const SQUADS = ['red', 'blue'];
const ROUNDS = 25;

interface SquadView {
  name: string;
  phase: string;
  members: { name: string }[];
}

describe('squad operations under concurrency (integration)', function () {
  let h: Harness;
  const seed = Number(process.env.RACE_SEED ?? Date.now() % 100_000);

  before(async () => {
    h = await startHarness();
    for (const n of AGENTS) await sleepingAgent(h, n);
  });
  after(async () => {
    await h?.close();
  });

  /** One random operation; returns its HTTP status. */
  function operation(next: () => number): () => Promise<number> {
    const pick = <T>(xs: T[]): T => xs[Math.floor(next() * xs.length)];
    const agent = pick(AGENTS);
    const squad = pick(SQUADS);
    const other = pick(AGENTS.filter((a) => a !== agent));
    const ops: (() => Promise<number>)[] = [
      async () => (await h.api('POST', `/api/v1/squads/${squad}/members`, { ref: { name: agent } })).status,
      async () => (await h.api('DELETE', `/api/v1/squads/${squad}/members/${agent}`)).status,
      async () => (await h.api('PATCH', `/api/v1/agents/${agent}`, { lifecycle: 'Sleep' })).status,
      async () => (await h.api('PATCH', `/api/v1/agents/${agent}`, { lifecycle: 'Wake' })).status,
      async () => (await h.api('POST', '/api/v1/squads', { name: squad, members: [{ ref: { name: agent } }, { ref: { name: other } }] })).status,
    ];
    return pick(ops);
  }

  /** Returns what is inconsistent, or undefined when everything agrees. */
  async function violation(): Promise<string | undefined> {
    const squads = (await h.api('GET', '/api/v1/squads')).body.squads as SquadView[];
    const agents = new Map<string, string>(
      ((await h.api('GET', '/api/v1/agents')).body.agents as { name: string; status: string }[]).map((a) => [a.name, a.status]),
    );
    const owner = new Map<string, string>();
    for (const s of squads) {
      if (s.members.length === 1) return `squad ${s.name} has one member`;
      if (s.members.length === 0 && s.phase !== 'Orphaned') return `squad ${s.name} is empty but ${s.phase}`;
      for (const m of s.members) {
        if (owner.has(m.name)) return `${m.name} is in ${owner.get(m.name)} and ${s.name}`;
        owner.set(m.name, s.name);
      }
      const awake = s.members.some((m) => agents.get(m.name) !== 'Sleeping');
      if (s.members.length && (s.phase === 'Sleeping') === awake) return `squad ${s.name} phase ${s.phase} but awake=${awake}`;
    }
    for (const name of AGENTS) {
      const status = agents.get(name);
      if (!status) return `${name} is gone`;
      const where = h.server.local!.placement({ namespace: 'default', name });
      const squad = owner.get(name);
      let want: string | null | undefined;
      if (squad) {
        const s = squads.find((x) => x.name === squad)!;
        want = s.members.some((m) => agents.get(m.name) !== 'Sleeping') ? `squad:default/${squad}` : undefined;
      } else {
        want = status === 'Sleeping' ? undefined : null;
      }
      if (where !== want) return `${name} (${status}, squad ${squad ?? '-'}) runs at ${where} instead of ${want}`;
      if (want !== undefined && status !== 'Sleeping' && status !== 'Running') return `${name} is ${status}`;
    }
    const groups = h.server.local!.groups().sort();
    const wanted = squads
      .filter((s) => s.members.some((m) => agents.get(m.name) !== 'Sleeping'))
      .map((s) => `squad:default/${s.name}`)
      .sort();
    if (JSON.stringify(groups) !== JSON.stringify(wanted)) return `groups ${groups.join(',')} instead of ${wanted.join(',')}`;
    return undefined;
  }

  it(`settles into a consistent state after each of ${ROUNDS} rounds of racing clients (seed ${seed})`, async () => {
    const next = seeded(seed);
    const statuses = new Map<number, number>();
    for (let round = 0; round < ROUNDS; round++) {
      const clients = [0, 1].map(async () => {
        for (let i = 0; i < 4; i++) {
          const status = await operation(next)();
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
        }
      });
      await Promise.all(clients);
      let last: string | undefined;
      await eventually(
        async () => {
          last = await violation();
          return last === undefined;
        },
        20_000,
        `a consistent state after round ${round} (seed ${seed})`,
      ).catch((err: Error) => {
        throw new Error(`${err.message}: ${last}`);
      });
    }
    // Only success and client errors: never a 500, whatever the interleaving.
    for (const status of statuses.keys()) expect([200, 201, 404, 409], `status ${status}`).to.include(status);
    expect([...statuses.entries()].filter(([s]) => s < 300).length).to.be.greaterThan(0);
  });
});
