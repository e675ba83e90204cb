// Server-side apply in the embedded home (its own SQLite storage, no Kubernetes): the
// differential suite's sequences must give what kube-apiserver gave for a CRD with the Agent's
// schema, as recorded in the fixture by test/e2e/server-side-apply.test.ts.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { REPO } from '../support/control-plane.js';
import { type Harness, startHarness } from '../support/harness.js';
import { createConnectors, FIXTURE, GROUP, type Outcome, OWNERS, runSequence, type Send, SEQUENCES } from '../support/ssa-differential.js';

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

  it('writes through the REST mirror are Updates by agentplane-rest, so an applier conflicts with them', async () => {
    const created = await h.api('POST', '/api/v1/agents?namespace=ssa', { name: 'rest-made', instructions: '@say hi', model: 'm-rest' });
    expect(created.status, created.text).to.equal(201);
    const patched = await h.api('PATCH', '/api/v1/agents/rest-made?namespace=ssa', { lifecycle: 'Sleep' });
    expect(patched.status, patched.text).to.equal(200);
    const agent = await send('GET', `/apis/${GROUP}/v1alpha1/namespaces/ssa/agents/rest-made`, {});
    const entries = agent.body.metadata.managedFields as { manager: string; operation: string; fieldsV1: { 'f:spec': Record<string, unknown> } }[];
    expect(entries.map((e) => `${e.manager}:${e.operation}`)).to.deep.equal(['agentplane-rest:Update']);
    expect(entries[0].fieldsV1['f:spec']).to.include.keys('f:model', 'f:instructions', 'f:lifecycle');
    const config = JSON.stringify({
      apiVersion: `${GROUP}/v1alpha1`,
      kind: 'Agent',
      metadata: { name: 'rest-made' },
      spec: { instructions: '@say hi', model: 'm-kubectl' },
    });
    const refused = await send(
      'PATCH',
      `/apis/${GROUP}/v1alpha1/namespaces/ssa/agents/rest-made?fieldManager=kubectl`,
      { 'content-type': 'application/apply-patch+yaml' },
      config,
    );
    expect(refused.status).to.equal(409);
    expect(refused.body.message).to.equal('Apply failed with 1 conflict: conflict with "agentplane-rest" using agentplane.io/v1alpha1: .spec.model');
  });

  it('a fieldManager over 128 characters is 422 naming it', async () => {
    const res = await send(
      'POST',
      `/apis/${GROUP}/v1alpha1/namespaces/ssa/agents?fieldManager=${'m'.repeat(129)}`,
      { 'content-type': 'application/json' },
      JSON.stringify({ apiVersion: `${GROUP}/v1alpha1`, kind: 'Agent', metadata: { name: 'long-manager' }, spec: { instructions: 'x', task: 0 } }),
    );
    expect(res.status).to.equal(422);
    expect(res.body.details.causes[0].field).to.equal('fieldManager');
  });

  for (const seq of SEQUENCES) {
    it(`${seq.name}: as kube-apiserver, step by step`, async () => {
      // No garbage collector here: any uid will do for the owners.
      const uids = Object.fromEntries(OWNERS.map((n, i) => [n, `0000000${i}-0000-4000-8000-00000000000${i}`]));
      const actual = await runSequence(seq, send, GROUP, uids);
      const expected = fixture.sequences[seq.name];
      expect(actual).to.have.length(expected.length);
      expected.forEach((e, i) => expect(actual[i], `step "${e.step}"`).to.deep.equal(e));
    });
  }
});
