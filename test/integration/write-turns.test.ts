// Writes take turns between namespaces (pkg/server/write-turns.ts): through a real server, a
// burst of writes in one namespace does not hold back another namespace's write, and every
// write of the burst is still done.

import { expect } from 'chai';
import { type Harness, startHarness } from '../support/harness.js';

const GV = 'agentplane.io/v1alpha1';
const BURST = 60;

/** An agent created asleep and without a task: a write that starts no worker. */
const asleep = (name: string): unknown => ({
  apiVersion: GV,
  kind: 'Agent',
  metadata: { name },
  spec: { instructions: '@say hi', lifecycle: 'Sleep', task: 0 },
});

describe('writes in turn (integration)', function () {
  this.timeout(60_000);
  let h: Harness;

  before(async () => {
    // One write a turn: the rotation decides every order below.
    h = await startHarness({ writesPerTurn: 1 });
  });
  after(async () => {
    await h?.close();
  });

  it("another namespace's create is answered while a burst of creates in one namespace is still in line; none is lost", async () => {
    const answered: string[] = [];
    const create = async (ns: string, name: string): Promise<void> => {
      const r = await h.api('POST', `/apis/${GV}/namespaces/${ns}/agents`, asleep(name));
      expect(r.status, r.text.slice(0, 300)).to.equal(201);
      answered.push(`${ns}/${name}`);
    };
    const burst = Array.from({ length: BURST }, (_, i) => create('burst', `b-${i}`));
    // Once the server has started on the burst, one create in another namespace.
    while (answered.length === 0) await new Promise((r) => setTimeout(r, 1));
    await create('other', 'o-1');
    const before = answered.indexOf('other/o-1');
    await Promise.all(burst);
    expect(before, `answered before it: ${before} of the burst's ${BURST}`).to.be.below(BURST / 2);
    const listed = await h.api('GET', `/apis/${GV}/namespaces/burst/agents`);
    expect((listed.body.items as unknown[]).length).to.equal(BURST);
  });

  it('counts the wait of writes, not of reads, in agentplane_http_write_wait_seconds', async () => {
    const count = async (): Promise<number> => {
      const text = (await h.api('GET', '/metrics')).text;
      return Number(/^agentplane_http_write_wait_seconds_count (\d+)/m.exec(text)?.[1] ?? NaN);
    };
    const start = await count();
    await h.api('GET', '/api/v1/agents?namespace=other');
    expect(await count()).to.equal(start);
    await h.api('POST', `/apis/${GV}/namespaces/other/agents`, asleep('o-2'));
    expect(await count()).to.equal(start + 1);
  });
});
