// Finalizers, owner references and deletion in the embedded home, through the aggregated API:
// both fields kept and validated as kube-apiserver validates them, a finalizer holds a deleted
// object (readable, watchable, no new task for an agent) until it is removed, and
// propagationPolicy changes nothing here (no garbage collector runs beside the embedded home).

import { expect } from 'chai';
import { busyFor, eventually, type Harness, type Reply, startHarness } from '../support/harness.js';
import { LineStream } from '../support/line-stream.js';

const GV = 'agentplane.io/v1alpha1';
const NS = `/apis/${GV}/namespaces/default`;
const MERGE = { 'content-type': 'application/merge-patch+json' };
const JSON_PATCH = { 'content-type': 'application/json-patch+json' };
const HOLD = 'example.com/hold';
const CLEANUP = 'agentplane.io/cleanup';
const owner = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  name,
  uid: `0b5e5d0e-1c1f-4a57-9a4f-${name.padEnd(12, '0').slice(0, 12)}`,
  ...extra,
});
const connector = (name: string, metadata: Record<string, unknown> = {}) => ({
  apiVersion: GV,
  kind: 'Connector',
  metadata: { name, ...metadata },
  spec: { url: 'http://127.0.0.1:9/mcp', service: 'github' },
});

describe('finalizers, owner references and deletion (embedded home)', function () {
  let h: Harness;
  const k = <T = any>(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Reply<T>> =>
    h.api<T>(method, path, body, headers);
  const causes = (r: Reply<any>): string[] => r.body.details.causes.map((c: { field: string }) => c.field);

  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h?.close();
  });

  it('keeps finalizers and owner references on create, update, merge and JSON patch and apply', async () => {
    const c = await k('POST', `${NS}/connectors`, connector('kept', { finalizers: [HOLD], ownerReferences: [owner('cm-a', { controller: true })] }));
    expect(c.status, c.text).to.equal(201);
    expect(c.body.metadata.finalizers).to.deep.equal([HOLD]);
    expect(c.body.metadata.ownerReferences).to.deep.equal([owner('cm-a', { controller: true })]);
    expect((await k('GET', `${NS}/connectors/kept`)).body.metadata.ownerReferences).to.have.length(1);

    // A merge patch that leaves them out keeps them; a JSON patch adds one; PUT replaces.
    const m = await k('PATCH', `${NS}/connectors/kept`, { metadata: { labels: { a: 'b' } } }, MERGE);
    expect(m.body.metadata.finalizers).to.deep.equal([HOLD]);
    const j = await k('PATCH', `${NS}/connectors/kept`, [{ op: 'add', path: '/metadata/ownerReferences/-', value: owner('cm-b') }], JSON_PATCH);
    expect(j.status, j.text).to.equal(200);
    expect(j.body.metadata.ownerReferences.map((r: { name: string }) => r.name)).to.deep.equal(['cm-a', 'cm-b']);
    const cur = j.body;
    const put = await k('PUT', `${NS}/connectors/kept`, { ...cur, metadata: { ...cur.metadata, finalizers: [], ownerReferences: [owner('cm-c')] } });
    expect(put.status, put.text).to.equal(200);
    expect(put.body.metadata.finalizers).to.equal(undefined);
    expect(put.body.metadata.ownerReferences).to.deep.equal([owner('cm-c')]);
    const applied = await k('PATCH', `${NS}/connectors/kept?fieldManager=test`, JSON.stringify(connector('kept', { finalizers: ['example.com/applied'] })), {
      'content-type': 'application/apply-patch+yaml',
    });
    expect(applied.status, applied.text).to.equal(200);
    expect(applied.body.metadata.finalizers).to.deep.equal(['example.com/applied']);
    await k('PATCH', `${NS}/connectors/kept`, { metadata: { finalizers: null } }, MERGE);
  });

  it('validates them as kube-apiserver does (422 naming each field)', async () => {
    const noUid = await k('POST', `${NS}/connectors`, connector('bad1', { ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'x' }] }));
    expect(noUid.status).to.equal(422);
    expect(causes(noUid)).to.deep.equal(['metadata.ownerReferences[0].uid']);
    const twoControllers = await k(
      'POST',
      `${NS}/connectors`,
      connector('bad2', { ownerReferences: [owner('one', { controller: true }), owner('two', { controller: true })] }),
    );
    expect(twoControllers.status).to.equal(422);
    expect(twoControllers.body.message).to.contain('only one reference can have controller set to true');
    const empty = await k('POST', `${NS}/connectors`, connector('bad3', { ownerReferences: [{ uid: 'u' }] }));
    expect(causes(empty)).to.deep.equal(['metadata.ownerReferences[0].apiVersion', 'metadata.ownerReferences[0].kind', 'metadata.ownerReferences[0].name']);
    const unqualified = await k('POST', `${NS}/connectors`, connector('bad4', { finalizers: ['hold', 'Not Valid/x'] }));
    expect(unqualified.status).to.equal(422);
    expect(causes(unqualified)).to.deep.equal(['metadata.finalizers[0]', 'metadata.finalizers[1]']);
    const both = await k('POST', `${NS}/connectors`, connector('bad5', { finalizers: ['orphan', 'foregroundDeletion'] }));
    expect(causes(both)).to.deep.equal(['metadata.finalizers']);
    const notList = await k('POST', `${NS}/connectors`, connector('bad6', { finalizers: 'example.com/x' }));
    expect(notList.status).to.equal(422);
    const standard = await k('POST', `${NS}/connectors`, connector('std', { finalizers: ['orphan'] }));
    expect(standard.status, standard.text).to.equal(201);
    await k('PATCH', `${NS}/connectors/std`, { metadata: { finalizers: null } }, MERGE);
    const policy = await k('DELETE', `${NS}/connectors/std`, { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Sideways' });
    expect(policy.status).to.equal(422);
    for (const n of ['bad1', 'bad2', 'bad3', 'bad4', 'bad5', 'bad6']) expect((await k('GET', `${NS}/connectors/${n}`)).status).to.equal(404);
  });

  it('a finalizer holds a deleted connector (readable, watchable) until removed; no new finalizer meanwhile', async () => {
    expect((await k('POST', `${NS}/connectors`, connector('held', { finalizers: [HOLD] }))).status).to.equal(201);
    const s = await LineStream.open(`${h.url}${NS}/connectors?watch=true&fieldSelector=metadata.name%3Dheld`);
    try {
      await s.until((e) => e.length >= 1, 10_000, 'ADDED');
      // Foreground is ignored in this home: nothing would remove foregroundDeletion.
      const d = await k('DELETE', `${NS}/connectors/held`, { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Foreground' });
      expect(d.status, d.text).to.equal(200);
      expect(d.body.metadata.deletionTimestamp).to.be.a('string');
      expect(d.body.metadata.finalizers).to.deep.equal([HOLD]);
      const got = await k('GET', `${NS}/connectors/held`);
      expect(got.status).to.equal(200);
      expect(got.body.metadata.deletionTimestamp).to.equal(d.body.metadata.deletionTimestamp);
      const again = await k('DELETE', `${NS}/connectors/held`);
      expect(again.body.metadata.deletionTimestamp).to.equal(d.body.metadata.deletionTimestamp);

      const add = await k('PATCH', `${NS}/connectors/held`, { metadata: { finalizers: [HOLD, 'example.com/more'] } }, MERGE);
      expect(add.status).to.equal(422);
      expect(add.body.message).to.contain('no new finalizers can be added while the object is being deleted');
      const label = await k('PATCH', `${NS}/connectors/held`, { metadata: { labels: { still: 'writable' } } }, MERGE);
      expect(label.status, label.text).to.equal(200);

      const rm = await k('PATCH', `${NS}/connectors/held`, { metadata: { finalizers: null } }, MERGE);
      expect(rm.status, rm.text).to.equal(200);
      const evs = await s.until((e) => e.some((x) => x.type === 'DELETED'), 10_000, 'DELETED');
      expect(evs.map((e) => e.type)).to.deep.equal(['ADDED', 'MODIFIED', 'MODIFIED', 'DELETED']);
      expect((await k('GET', `${NS}/connectors/held`)).status).to.equal(404);
    } finally {
      s.close();
    }
  });

  it('an agent held by a client finalizer: task cancelled, worker stopped, events readable, new tasks 409, gone once released', async () => {
    const c = await k('POST', `${NS}/agents`, {
      apiVersion: GV,
      kind: 'Agent',
      metadata: { name: 'held-agent', finalizers: [HOLD] },
      spec: { instructions: `@bash ${busyFor(60)}\n@say never` },
    });
    expect(c.status, c.text).to.equal(201);
    expect(c.body.metadata.finalizers).to.have.members([HOLD, CLEANUP]);
    const events = async (): Promise<{ type: string; payload: { reason?: string } }[]> =>
      (await k('GET', `${NS}/agents/held-agent/events?limit=200`)).body.items;
    await eventually(async () => (await events()).some((e) => e.type === 'tool_call'), 45_000, 'tool call');

    const d = await k('DELETE', `${NS}/agents/held-agent`);
    expect(d.status, d.text).to.equal(200);
    expect(d.body.metadata.deletionTimestamp).to.be.a('string');
    const cancelled = await eventually(async () => (await events()).find((e) => e.type === 'task_cancelled'), 20_000, 'task_cancelled');
    expect(cancelled.payload.reason).to.contain('being deleted');
    await eventually(async () => (await k('GET', `${NS}/agents/held-agent`)).body.status.taskStatus === 'Cancelled', 10_000, 'Cancelled');
    await eventually(async () => (await h.server.runtime.status({ namespace: 'default', name: 'held-agent' })).phase === 'Absent', 20_000, 'worker stopped');

    const held = await k('GET', `${NS}/agents/held-agent`);
    expect(held.status).to.equal(200);
    // agentplane's clean-up waits for the client's finalizer, so the events stay until then.
    expect(held.body.metadata.finalizers).to.have.members([HOLD, CLEANUP]);
    expect(await events()).to.not.have.lengthOf(0);
    const task = await k('PATCH', `${NS}/agents/held-agent`, { spec: { instructions: 'another' } }, MERGE);
    expect(task.status).to.equal(409);
    expect(task.body).to.include({ reason: 'Conflict' });
    expect(task.body.message).to.contain('being deleted');
    const rest = await k('POST', '/api/v1/agents', { name: 'held-agent', instructions: 'another' });
    expect(rest.status).to.equal(409);

    const rm = await k(
      'PATCH',
      `${NS}/agents/held-agent`,
      { metadata: { finalizers: held.body.metadata.finalizers.filter((f: string) => f !== HOLD) } },
      MERGE,
    );
    expect(rm.status, rm.text).to.equal(200);
    await eventually(async () => (await k('GET', `${NS}/agents/held-agent`)).status === 404, 20_000, 'agent gone');
    expect((await k('GET', `${NS}/agents/held-agent/events`)).status).to.equal(404);
  });

  it('a server restarted while an agent is being deleted finishes the clean-up', async () => {
    const c = await k('POST', `${NS}/agents`, {
      apiVersion: GV,
      kind: 'Agent',
      metadata: { name: 'restarted', finalizers: [HOLD] },
      spec: { instructions: '@say hi' },
    });
    expect(c.status, c.text).to.equal(201);
    await eventually(async () => (await k('GET', `${NS}/agents/restarted`)).body.status.taskStatus === 'Complete', 45_000, 'task complete');
    expect((await k('DELETE', `${NS}/agents/restarted`)).status).to.equal(200);
    await eventually(async () => (await h.server.runtime.status({ namespace: 'default', name: 'restarted' })).phase === 'Absent', 20_000, 'worker stopped');
    await h.restart();
    const after = await k('GET', `${NS}/agents/restarted`);
    expect(after.status).to.equal(200);
    expect(after.body.metadata.deletionTimestamp).to.be.a('string');
    expect((await k('GET', `${NS}/agents/restarted/events`)).body.items).to.not.have.lengthOf(0);
    await k(
      'PATCH',
      `${NS}/agents/restarted`,
      [
        { op: 'test', path: '/metadata/finalizers/0', value: HOLD },
        { op: 'remove', path: '/metadata/finalizers/0' },
      ],
      JSON_PATCH,
    );
    await eventually(async () => (await k('GET', `${NS}/agents/restarted`)).status === 404, 20_000, 'agent gone');
  });

  it("an agent without other finalizers goes after clean-up; a write cannot drop agentplane's finalizer before deletion", async () => {
    const c = await k('POST', `${NS}/agents`, { apiVersion: GV, kind: 'Agent', metadata: { name: 'plain' }, spec: { instructions: '@say hi' } });
    expect(c.body.metadata.finalizers).to.deep.equal([CLEANUP]);
    const drop = await k('PATCH', `${NS}/agents/plain`, { metadata: { finalizers: null } }, MERGE);
    expect(drop.status, drop.text).to.equal(200);
    expect(drop.body.metadata.finalizers).to.deep.equal([CLEANUP]);
    expect((await k('DELETE', `${NS}/agents/plain`)).status).to.equal(200);
    await eventually(async () => (await k('GET', `${NS}/agents/plain`)).status === 404, 20_000, 'agent gone');
  });
});
