// Server-side apply in the embedded home (its own SQLite storage, no Kubernetes): the
// differential suite's sequences must give what kube-apiserver gave for a CRD with the Agent's
// schema, as recorded in the fixture by test/e2e/server-side-apply.test.ts.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { REPO } from '../support/control-plane.js';
import { type Harness, startHarness } from '../support/harness.js';
import { createConnectors, FIXTURE, GROUP, type Outcome, runSequence, type Send, SEQUENCES } from '../support/ssa-differential.js';

describe('server-side apply in the embedded home, against the recorded oracle', function () {
  this.timeout(60_000);
  let h: Harness;
  let send: Send;
  const fixture = JSON.parse(readFileSync(join(REPO, FIXTURE), 'utf8')) as { sequences: Record<string, Outcome[]> };

  before(async () => {
    h = await startHarness();
    send = async (method, path, headers, body) => {
      const res = await h.api(method, path, body, headers);
      return { status: res.status, body: res.body };
    };
    await createConnectors(send);
  });

  after(async () => {
    await h?.close();
  });

  it('the fixture holds every sequence', () => {
    expect(Object.keys(fixture.sequences)).to.deep.equal(SEQUENCES.map((s) => s.name));
  });

  for (const seq of SEQUENCES) {
    it(`${seq.name}: as kube-apiserver, step by step`, async () => {
      const actual = await runSequence(seq, send, GROUP);
      const expected = fixture.sequences[seq.name]!;
      expect(actual).to.have.length(expected.length);
      expected.forEach((e, i) => expect(actual[i], `step "${e.step}"`).to.deep.equal(e));
    });
  }
});
