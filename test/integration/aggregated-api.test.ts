// The Kubernetes aggregated API (/apis/agentplane.io/v1alpha1) on the embedded server: discovery,
// OpenAPI, the verbs with Kubernetes semantics (Status errors, selectors, patches, server-side
// apply, dry run, watch), Table output, and the agent subresources; agents created here really
// run their task with the real engine and the scripted model.

import { expect } from 'chai';
import { agentSpecSchema } from '../../pkg/api/agent.js';
import { busyFor, eventually, type Harness, type Reply, startHarness } from '../support/harness.js';
import { LineStream } from '../support/line-stream.js';

const GV = 'agentplane.io/v1alpha1';
const B = `/apis/${GV}`;
const NS = `${B}/namespaces/default`;
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';
const MERGE = { 'content-type': 'application/merge-patch+json' };
const JSON_PATCH = { 'content-type': 'application/json-patch+json' };
const SMP = { 'content-type': 'application/strategic-merge-patch+json' };
const APPLY = { 'content-type': 'application/apply-patch+yaml' };

const agent = (name: string, instructions: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: GV,
  kind: 'Agent',
  metadata: { name, ...extra },
  spec: { instructions },
});

const connector = (name: string, labels: Record<string, string> = {}, service = 'github') => ({
  apiVersion: GV,
  kind: 'Connector',
  metadata: { name, labels },
  spec: { url: 'http://127.0.0.1:9/mcp', service },
});

/** Every $ref in `doc` points at an existing entry. */
function unresolvedRefs(doc: unknown, prefix: string, defs: Record<string, unknown>): string[] {
  const bad: string[] = [];
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        if (k === '$ref') {
          const s = String(x);
          if (!s.startsWith(prefix) || !(s.slice(prefix.length) in defs)) bad.push(s);
        } else walk(x);
      }
    }
  };
  walk(doc);
  return bad;
}

describe('aggregated API (integration)', function () {
  let h: Harness;
  const k = <T = any>(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Reply<T>> =>
    h.api<T>(method, path, body, headers);
  const watch = (path: string, headers: Record<string, string> = {}) => LineStream.open(`${h.url}${path}`, headers);
  const eventsOf = async (name: string): Promise<{ type: string; task: number }[]> => (await k('GET', `${NS}/agents/${name}/events?limit=200`)).body.items;
  const waitTaskEnd = (name: string, task: number, type = 'task_completed') =>
    eventually(async () => (await eventsOf(name)).some((e) => e.task === task && e.type === type), 45_000, `${name}: task ${task} ${type}`);

  before(async () => {
    // These tests count watch events and read an unchecked connector's status: the API machinery
    // alone, as envtest runs kube-apiserver without controllers. The connector controller's own
    // writes through this API are tested in connector-controller.test.ts.
    h = await startHarness({ connectorChecks: false });
  });
  after(async () => {
    await h?.close();
  });

  describe('discovery', () => {
    it('serves APIGroupList, APIGroup and the APIResourceList', async () => {
      const groups = await k('GET', '/apis');
      expect(groups.status).to.equal(200);
      expect(groups.body).to.deep.equal({
        kind: 'APIGroupList',
        apiVersion: 'v1',
        groups: [
          {
            name: 'agentplane.io',
            versions: [{ groupVersion: GV, version: 'v1alpha1' }],
            preferredVersion: { groupVersion: GV, version: 'v1alpha1' },
          },
        ],
      });
      const group = await k('GET', '/apis/agentplane.io');
      expect(group.body).to.include({ kind: 'APIGroup', apiVersion: 'v1', name: 'agentplane.io' });

      const list = await k('GET', B);
      expect(list.body).to.include({ kind: 'APIResourceList', apiVersion: 'v1', groupVersion: GV });
      const byName = Object.fromEntries(list.body.resources.map((r: { name: string }) => [r.name, r]));
      const verbs = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
      expect(byName.agents).to.deep.equal({
        name: 'agents',
        singularName: 'agent',
        namespaced: true,
        kind: 'Agent',
        verbs,
        shortNames: ['ag'],
        categories: ['agentplane', 'all'],
      });
      expect(byName.squads).to.include({ singularName: 'squad', kind: 'Squad', namespaced: true });
      expect(byName.squads.shortNames).to.deep.equal(['sq']);
      expect(byName.connectors).to.include({ singularName: 'connector', kind: 'Connector' });
      expect(byName.connectors.shortNames).to.deep.equal(['conn']);
      expect(byName.connectors.categories).to.deep.equal(['agentplane']);
      expect(byName['agents/events']).to.include({ kind: 'AgentEventList', namespaced: true });
      expect(byName['agents/events'].verbs).to.deep.equal(['get']);
      expect(byName['agents/cancel'].verbs).to.deep.equal(['create']);
      expect(byName['agents/cancel'].kind).to.equal('Agent');
      expect(byName['agents/log'].verbs).to.deep.equal(['get']);
    });

    it('answers a request for aggregated discovery (v2) with the legacy document, so clients fall back', async () => {
      const r = await k('GET', '/apis', undefined, {
        accept:
          'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList',
      });
      expect(r.status).to.equal(200);
      expect(r.body.kind).to.equal('APIGroupList');
      const res = await fetch(`${h.url}/apis`, { headers: { accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' } });
      expect(res.headers.get('content-type'))
        .to.match(/^application\/json/)
        .and.not.contain('apidiscovery');
      await res.text();
    });
  });

  describe('OpenAPI', () => {
    it('v2: Swagger 2.0 whose refs resolve, with GVK extensions and schemas from the validation schemas', async () => {
      const r = await k('GET', '/openapi/v2', undefined, { accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf' });
      expect(r.status).to.equal(200);
      const doc = r.body;
      expect(doc.swagger).to.equal('2.0');
      expect(unresolvedRefs(doc, '#/definitions/', doc.definitions)).to.deep.equal([]);
      for (const kind of ['Agent', 'AgentList', 'Squad', 'SquadList', 'Connector', 'ConnectorList']) {
        expect(doc.definitions[`io.agentplane.v1alpha1.${kind}`]['x-kubernetes-group-version-kind'], kind).to.deep.equal([
          { group: 'agentplane.io', kind, version: 'v1alpha1' },
        ]);
      }
      const agentDef = doc.definitions['io.agentplane.v1alpha1.Agent'];
      expect(agentDef.properties.metadata.$ref).to.equal('#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta');
      expect(Object.keys(agentDef.properties)).to.have.members(['apiVersion', 'kind', 'metadata', 'spec', 'status']);
      const spec = doc.definitions['io.agentplane.v1alpha1.AgentSpec'];
      expect(spec.properties.instructions.maxLength).to.equal(agentSpecSchema.properties.instructions.maxLength);
      expect(spec.properties.role.enum).to.deep.equal(['manager', 'worker']);
      expect(spec.required).to.deep.equal(['instructions']);
      for (const meta of ['ObjectMeta', 'ListMeta', 'Status', 'WatchEvent', 'DeleteOptions', 'Patch', 'Time']) {
        expect(doc.definitions, meta).to.have.property(`io.k8s.apimachinery.pkg.apis.meta.v1.${meta}`);
      }
      const item = doc.paths[`${B}/namespaces/{namespace}/agents/{name}`];
      expect(item.patch['x-kubernetes-group-version-kind']).to.deep.equal({ group: 'agentplane.io', version: 'v1alpha1', kind: 'Agent' });
      expect(item.patch['x-kubernetes-action']).to.equal('patch');
      expect(item.patch.parameters.map((p: { name: string }) => p.name)).to.include.members(['dryRun', 'fieldValidation', 'fieldManager', 'force']);
      expect(item.patch.consumes).to.include('application/apply-patch+yaml');
      expect(doc.paths).to.have.property(`${B}/agents`);
      expect(doc.paths).to.have.property(`${B}/namespaces/{namespace}/agents/{name}/log`);
    });

    it('v3: an index with a hashed URL, and a document whose refs resolve, with GVK extensions', async () => {
      const index = await k('GET', '/openapi/v3');
      expect(index.status).to.equal(200);
      const url = index.body.paths['apis/agentplane.io/v1alpha1'].serverRelativeURL as string;
      expect(url).to.match(/^\/openapi\/v3\/apis\/agentplane\.io\/v1alpha1\?hash=[0-9A-F]{128}$/);
      const res = await fetch(`${h.url}${url}`, { headers: { accept: 'application/json' } });
      expect(res.status).to.equal(200);
      expect(res.headers.get('cache-control')).to.contain('immutable');
      const doc = await res.json();
      expect(doc.openapi).to.match(/^3\./);
      expect(unresolvedRefs(doc, '#/components/schemas/', doc.components.schemas)).to.deep.equal([]);
      expect(doc.components.schemas['io.agentplane.v1alpha1.Agent']['x-kubernetes-group-version-kind']).to.deep.equal([
        { group: 'agentplane.io', kind: 'Agent', version: 'v1alpha1' },
      ]);
      const patch = doc.paths[`${B}/namespaces/{namespace}/agents/{name}`].patch;
      expect(patch.parameters.map((p: { name: string }) => p.name)).to.include.members(['dryRun', 'fieldValidation']);
      expect(Object.keys(patch.requestBody.content)).to.include.members(['application/merge-patch+json', 'application/apply-patch+yaml']);
      const etag = res.headers.get('etag')!;
      const again = await fetch(`${h.url}/openapi/v3/apis/agentplane.io/v1alpha1`, { headers: { 'if-none-match': etag } });
      expect(again.status).to.equal(304);
    });
  });

  describe('an agent created through this API', () => {
    let created: Reply<any>;
    before(async () => {
      created = await k('POST', `${NS}/agents`, agent('kube-agent', '@bash echo made by kubectl > kube.txt\n@say made it', { labels: { team: 'blue' } }));
    });

    it('is created (201) in Kubernetes shape with its first task assigned', () => {
      expect(created.status, created.text).to.equal(201);
      const a = created.body;
      expect(a).to.include({ apiVersion: GV, kind: 'Agent' });
      expect(a.metadata).to.include({ name: 'kube-agent', namespace: 'default', generation: 1 });
      expect(a.metadata.uid).to.match(/^[0-9a-f-]{36}$/);
      expect(a.metadata.resourceVersion).to.match(/^\d+$/);
      expect(Date.parse(a.metadata.creationTimestamp)).to.be.closeTo(Date.now(), 60_000);
      expect(a.metadata.labels).to.deep.equal({ team: 'blue' });
      expect(a.spec).to.include({ task: 1, model: 'claude-sonnet-4-5', role: 'manager', templateRef: 'default', lifecycle: '' });
      expect(a.status).to.include({ status: 'Pending', taskStatus: 'InProgress' });
    });

    it('really runs its task: the events subresource shows task_completed', async () => {
      await waitTaskEnd('kube-agent', 1);
      const ev = await k('GET', `${NS}/agents/kube-agent/events?limit=200`);
      expect(ev.body).to.include({ apiVersion: GV, kind: 'AgentEventList' });
      const types = ev.body.items.map((e: { type: string }) => e.type);
      expect(types[0]).to.equal('task_started');
      expect(types).to.include.members(['tool_call', 'tool_result', 'task_completed']);
      const limited = await k('GET', `${NS}/agents/kube-agent/events?limit=2`);
      expect(limited.body.items).to.have.length(2);
      expect(limited.body.items.at(-1).type).to.equal('task_completed');
      const before = await k('GET', `${NS}/agents/kube-agent/events?limit=200&before=2`);
      expect(before.body.items.map((e: { seq: number }) => e.seq)).to.deep.equal([1]);
      const clamped = await k('GET', `${NS}/agents/kube-agent/events?limit=500`);
      expect(clamped.status).to.equal(200); // above 200 is read as 200, as on REST
      expect(clamped.body.items).to.deep.equal(ev.body.items);
      const bad = await k('GET', `${NS}/agents/kube-agent/events?limit=0`);
      expect(bad.status).to.equal(400);
      expect(bad.body).to.include({ kind: 'Status', reason: 'BadRequest', code: 400 });
    });

    it('shows in the REST mirror too', async () => {
      const r = await k('GET', '/api/v1/agents/kube-agent');
      expect(r.status).to.equal(200);
      expect(r.body).to.include({ name: 'kube-agent', taskStatus: 'Complete', lastTaskMessage: 'made it' });
    });

    it('get returns the stored object; a missing one is a NotFound Status', async () => {
      const got = await k('GET', `${NS}/agents/kube-agent`);
      expect(got.status).to.equal(200);
      expect(got.body.status).to.include({ status: 'Running', taskStatus: 'Complete', lastTaskMessage: 'made it' });
      const missing = await k('GET', `${NS}/agents/nobody`);
      expect(missing.status).to.equal(404);
      expect(missing.body).to.deep.equal({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'agents.agentplane.io "nobody" not found',
        reason: 'NotFound',
        code: 404,
        details: { name: 'nobody', group: 'agentplane.io', kind: 'agents' },
      });
    });

    it('a second create is AlreadyExists (409)', async () => {
      const r = await k('POST', `${NS}/agents`, agent('kube-agent', '@say again'));
      expect(r.status).to.equal(409);
      expect(r.body).to.include({ kind: 'Status', reason: 'AlreadyExists', code: 409, message: 'agents.agentplane.io "kube-agent" already exists' });
    });

    it('changing spec.instructions by merge patch assigns a new task; while it runs, another is 409', async () => {
      const p = await k('PATCH', `${NS}/agents/kube-agent`, { spec: { instructions: `@bash ${busyFor(4)}\n@say second done` } }, MERGE);
      expect(p.status, p.text).to.equal(200);
      expect(p.body.spec.task).to.equal(2);
      expect(p.body.status.taskStatus).to.equal('InProgress');
      expect(p.body.metadata.generation).to.equal(2);
      const busy = await k('PATCH', `${NS}/agents/kube-agent`, { spec: { instructions: '@say third' } }, MERGE);
      expect(busy.status).to.equal(409);
      expect(busy.body).to.include({ kind: 'Status', reason: 'Conflict', code: 409 });
      expect(busy.body.message).to.match(/^Operation cannot be fulfilled on agents\.agentplane\.io "kube-agent": .*busy/);
      // A change that is not a new task is fine while busy.
      const labels = await k('PATCH', `${NS}/agents/kube-agent`, { metadata: { labels: { team: 'blue', tier: 'gold' } } }, MERGE);
      expect(labels.status).to.equal(200);
      expect(labels.body.metadata.labels).to.deep.equal({ team: 'blue', tier: 'gold' });
      expect(labels.body.spec.task).to.equal(2);
      await waitTaskEnd('kube-agent', 2);
    });

    it('update (PUT) with a stale resourceVersion is a Conflict; without one it applies; status is ignored', async () => {
      const cur = (await k('GET', `${NS}/agents/kube-agent`)).body;
      const stale = { ...cur, metadata: { ...cur.metadata, resourceVersion: '1' }, spec: { ...cur.spec, model: 'claude-opus-4-1' } };
      const r1 = await k('PUT', `${NS}/agents/kube-agent`, stale);
      expect(r1.status).to.equal(409);
      expect(r1.body).to.include({ reason: 'Conflict', code: 409 });
      const fresh = {
        ...cur,
        metadata: { name: 'kube-agent', labels: cur.metadata.labels },
        spec: { ...cur.spec, model: 'claude-opus-4-1' },
        status: { ...cur.status, taskStatus: 'Error' },
      };
      const r2 = await k('PUT', `${NS}/agents/kube-agent`, fresh);
      expect(r2.status, r2.text).to.equal(200);
      expect(r2.body.spec.model).to.equal('claude-opus-4-1');
      expect(r2.body.spec.task).to.equal(2); // same instructions: no new task
      expect(r2.body.status.taskStatus).to.equal('Complete');
      const withRv = { ...r2.body, spec: { ...r2.body.spec, model: 'claude-sonnet-4-5' } };
      const r3 = await k('PUT', `${NS}/agents/kube-agent`, withRv);
      expect(r3.status).to.equal(200);
      const mismatch = await k('PUT', `${NS}/agents/kube-agent`, { ...withRv, metadata: { ...withRv.metadata, name: 'other' } });
      expect(mismatch.status).to.equal(400);
      expect(mismatch.body).to.include({ kind: 'Status', reason: 'BadRequest' });
    });

    it('cancel (POST agents/<name>/cancel) stops the task in progress; with none it is 200 with a Warning (idempotent)', async () => {
      const p = await k('PATCH', `${NS}/agents/kube-agent`, { spec: { instructions: `@bash ${busyFor(60)}\n@say never` } }, MERGE);
      expect(p.status).to.equal(200);
      await eventually(async () => (await eventsOf('kube-agent')).some((e) => e.task === 3 && e.type === 'tool_call'), 45_000, 'tool call');
      const c = await k('POST', `${NS}/agents/kube-agent/cancel`);
      expect(c.status, c.text).to.equal(200);
      expect(c.body).to.include({ kind: 'Agent' });
      expect(c.body.status.taskStatus).to.equal('Cancelled');
      const again = await fetch(`${h.url}${NS}/agents/kube-agent/cancel`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(again.status).to.equal(200);
      expect(((await again.json()) as { kind: string; status: { taskStatus: string } }).status.taskStatus).to.equal('Cancelled');
      expect(again.headers.get('warning')).to.equal('299 - "nothing was running: agent \\"kube-agent\\" has no task in progress"');
    });

    it('log replays the current task, and with follow=true streams the next one live', async () => {
      const log = await k('GET', `${NS}/agents/kube-agent/log`);
      expect(log.status).to.equal(200);
      const lines = log.text
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(lines.map((e) => e.task)).to.satisfy((t: number[]) => t.every((x) => x === 3));
      expect(lines.at(-1).type).to.equal('task_cancelled');

      const follow = await watch(`${NS}/agents/kube-agent/log?follow=true`);
      expect(follow.status).to.equal(200);
      await follow.until((evs) => evs.some((e) => e.type === 'task_cancelled'), 10_000, 'replay');
      const p = await k('PATCH', `${NS}/agents/kube-agent`, [{ op: 'replace', path: '/spec/instructions', value: '@say fourth' }], JSON_PATCH);
      expect(p.status, p.text).to.equal(200);
      expect(p.body.spec.task).to.equal(4);
      const evs = await follow.until((e) => e.some((x) => x.task === 4 && x.type === 'task_completed'), 45_000, 'task 4 live');
      follow.close();
      const seqs = evs.map((e) => e.seq);
      expect(new Set(seqs).size).to.equal(seqs.length);
      expect(seqs).to.deep.equal([...seqs].sort((a, b) => a - b));
    });
  });

  describe('errors as metav1.Status', () => {
    it('Invalid is 422 with causes', async () => {
      const r = await k('POST', `${NS}/agents`, { apiVersion: GV, kind: 'Agent', metadata: { name: 'bad' }, spec: { instructions: 'x', role: 'boss' } });
      expect(r.status).to.equal(422);
      expect(r.body).to.include({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Invalid', code: 422 });
      expect(r.body.details).to.include({ name: 'bad', kind: 'Agent', group: 'agentplane.io' });
      expect(r.body.message).to.match(/^Agent\.agentplane\.io "bad" is invalid: spec\.role: /);
      expect(r.body.details.causes).to.deep.include({ reason: 'FieldValueNotSupported', message: 'must be one of "manager", "worker"', field: 'spec.role' });
      const name = await k('POST', `${NS}/agents`, agent('Bad_Name', 'x'));
      expect(name.status).to.equal(422);
      expect(name.body.details.causes[0]).to.include({ field: 'metadata.name', reason: 'FieldValueInvalid' });
      const unknown = await k('POST', `${NS}/agents`, { ...agent('bad', 'x'), spec: { instructions: 'x', modle: 'y' } });
      expect(unknown.status).to.equal(422);
      expect(unknown.body.details.causes[0]).to.include({ field: 'spec.modle' });
    });

    it('unknown top-level fields: 400 with fieldValidation=Strict, a Warning header by default', async () => {
      const strict = await k('POST', `${NS}/connectors?fieldValidation=Strict`, { ...connector('strictly'), extra: 1 });
      expect(strict.status).to.equal(400);
      expect(strict.body.message).to.contain('unknown field "extra"');
      const res = await fetch(`${h.url}${NS}/connectors`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...connector('warned'), extra: 1 }),
      });
      expect(res.status).to.equal(201);
      expect(res.headers.get('warning')).to.contain('unknown field \\"extra\\"');
      await res.text();
    });

    it('BadRequest for a malformed body or a namespace mismatch; 405, 404 and 415 as Kubernetes', async () => {
      const malformed = await k('POST', `${NS}/connectors`, '{"metadata":', { 'content-type': 'application/json' });
      expect(malformed.status).to.equal(400);
      expect(malformed.body).to.include({ kind: 'Status', reason: 'BadRequest' });
      const ns = await k('POST', `${NS}/connectors`, { ...connector('elsewhere'), metadata: { name: 'elsewhere', namespace: 'other' } });
      expect(ns.status).to.equal(400);
      const put = await k('PUT', `${NS}/connectors`, connector('x'));
      expect(put.status).to.equal(405);
      expect(put.body).to.include({ kind: 'Status', reason: 'MethodNotAllowed', code: 405 });
      const unknown = await k('GET', `${NS}/widgets`);
      expect(unknown.status).to.equal(404);
      expect(unknown.body).to.include({ kind: 'Status', reason: 'NotFound' });
      const patch = await k('PATCH', `${NS}/connectors/warned`, '{}', { 'content-type': 'text/plain' });
      expect(patch.status).to.equal(415);
      expect(patch.body).to.include({ kind: 'Status', reason: 'UnsupportedMediaType', code: 415 });
      const notAcceptable = await k('GET', `${NS}/connectors`, undefined, { accept: 'application/vnd.kubernetes.protobuf' });
      expect(notAcceptable.status).to.equal(406);
      const protoFirst = await k('GET', `${NS}/connectors`, undefined, { accept: 'application/vnd.kubernetes.protobuf,application/json' });
      expect(protoFirst.status).to.equal(200);
      expect(protoFirst.body.kind).to.equal('ConnectorList');
    });
  });

  describe('patches, server-side apply and dry run', () => {
    before(async () => {
      expect((await k('POST', `${NS}/connectors`, connector('patchy', { app: 'a' }))).status).to.equal(201);
    });

    it('merge patch sets and removes (null) fields; strategic merge patch is 415, as for custom resources', async () => {
      const r = await k('PATCH', `${NS}/connectors/patchy`, { metadata: { labels: { env: 'dev' } }, spec: { displayName: 'Patchy' } }, MERGE);
      expect(r.status, r.text).to.equal(200);
      expect(r.body.metadata.labels).to.deep.equal({ app: 'a', env: 'dev' });
      expect(r.body.spec.displayName).to.equal('Patchy');
      const smp = await k('PATCH', `${NS}/connectors/patchy`, { metadata: { labels: { env: null } } }, SMP);
      expect(smp.status).to.equal(415);
      expect(smp.body).to.include({ kind: 'Status', reason: 'UnsupportedMediaType', code: 415 });
      const s = await k('PATCH', `${NS}/connectors/patchy`, { metadata: { labels: { env: null } } }, MERGE);
      expect(s.status).to.equal(200);
      expect(s.body.metadata.labels).to.deep.equal({ app: 'a' });
      const bad = await k('PATCH', `${NS}/connectors/patchy`, { spec: { url: 'ftp://nope' } }, MERGE);
      expect(bad.status).to.equal(422);
      expect(bad.body.details.causes.map((c: { field: string }) => c.field)).to.include('spec.url');
    });

    it('JSON patch applies operations; a failed test is 422; a missing object is 404', async () => {
      const r = await k(
        'PATCH',
        `${NS}/connectors/patchy`,
        [
          { op: 'test', path: '/spec/service', value: 'github' },
          { op: 'replace', path: '/spec/service', value: 'gitlab' },
          { op: 'add', path: '/metadata/annotations', value: { note: 'patched' } },
        ],
        JSON_PATCH,
      );
      expect(r.status, r.text).to.equal(200);
      expect(r.body.spec.service).to.equal('gitlab');
      expect(r.body.metadata.annotations).to.deep.equal({ note: 'patched' });
      const failed = await k('PATCH', `${NS}/connectors/patchy`, [{ op: 'test', path: '/spec/service', value: 'github' }], JSON_PATCH);
      expect(failed.status).to.equal(422);
      expect(failed.body.reason).to.equal('Invalid');
      const missing = await k('PATCH', `${NS}/connectors/ghost`, { spec: {} }, MERGE);
      expect(missing.status).to.equal(404);
    });

    it('a resourceVersion in a patch is a precondition', async () => {
      const r = await k('PATCH', `${NS}/connectors/patchy`, { metadata: { resourceVersion: '1' }, spec: { service: 'x' } }, MERGE);
      expect(r.status).to.equal(409);
      expect(r.body.reason).to.equal('Conflict');
    });

    it('server-side apply creates when absent (201), then merges into the object (200); fieldManager is required', async () => {
      const yaml = [
        'apiVersion: agentplane.io/v1alpha1',
        'kind: Connector',
        'metadata:',
        '  name: applied',
        '  labels: {via: apply}',
        'spec:',
        '  url: http://127.0.0.1:9/mcp',
        '  service: jira',
        '',
      ].join('\n');
      const noManager = await k('PATCH', `${NS}/connectors/applied`, yaml, APPLY);
      expect(noManager.status).to.equal(422);
      const created = await k('PATCH', `${NS}/connectors/applied?fieldManager=kubectl`, yaml, APPLY);
      expect(created.status, created.text).to.equal(201);
      expect(created.body.spec).to.include({ service: 'jira', displayName: 'applied' });
      const changed = await k('PATCH', `${NS}/connectors/applied?fieldManager=kubectl&force=true`, yaml.replace('service: jira', 'service: linear'), APPLY);
      expect(changed.status).to.equal(200);
      expect(changed.body.spec.service).to.equal('linear');
      expect(changed.body.metadata.uid).to.equal(created.body.metadata.uid);
      const unchanged = await k('PATCH', `${NS}/connectors/applied?fieldManager=kubectl`, yaml.replace('service: jira', 'service: linear'), APPLY);
      expect(unchanged.body.metadata.resourceVersion).to.equal(changed.body.metadata.resourceVersion);
      const badYaml = await k('PATCH', `${NS}/connectors/applied?fieldManager=kubectl`, 'spec: [unclosed', APPLY);
      expect(badYaml.status).to.equal(400);
    });

    it('server-side apply of an agent starts its task, and a changed instruction assigns the next', async () => {
      const yaml = (say: string) => `apiVersion: agentplane.io/v1alpha1\nkind: Agent\nmetadata:\n  name: applied-agent\nspec:\n  instructions: "@say ${say}"\n`;
      const c = await k('PATCH', `${NS}/agents/applied-agent?fieldManager=kubectl`, yaml('one'), APPLY);
      expect(c.status, c.text).to.equal(201);
      expect(c.body.spec.task).to.equal(1);
      await waitTaskEnd('applied-agent', 1);
      const same = await k('PATCH', `${NS}/agents/applied-agent?fieldManager=kubectl`, yaml('one'), APPLY);
      expect(same.body.spec.task).to.equal(1);
      const next = await k('PATCH', `${NS}/agents/applied-agent?fieldManager=kubectl`, yaml('two'), APPLY);
      expect(next.status).to.equal(200);
      expect(next.body.spec.task).to.equal(2);
      await waitTaskEnd('applied-agent', 2);
    });

    it('dryRun=All validates and answers without storing (create, update, patch, delete)', async () => {
      const c = await k('POST', `${NS}/connectors?dryRun=All`, connector('dry'));
      expect(c.status).to.equal(201);
      expect(c.body.metadata.name).to.equal('dry');
      expect((await k('GET', `${NS}/connectors/dry`)).status).to.equal(404);
      const invalid = await k('POST', `${NS}/connectors?dryRun=All`, { ...connector('dry'), spec: { url: 'nope' } });
      expect(invalid.status).to.equal(422);
      const dupe = await k('POST', `${NS}/connectors?dryRun=All`, connector('patchy'));
      expect(dupe.status).to.equal(409);
      const before = (await k('GET', `${NS}/connectors/patchy`)).body;
      const p = await k('PATCH', `${NS}/connectors/patchy?dryRun=All`, { spec: { service: 'dry-run' } }, MERGE);
      expect(p.body.spec.service).to.equal('dry-run');
      const applied = await k('PATCH', `${NS}/connectors/never?dryRun=All&fieldManager=kubectl`, JSON.stringify(connector('never')), APPLY);
      expect(applied.status).to.equal(201);
      expect((await k('GET', `${NS}/connectors/never`)).status).to.equal(404);
      const d = await k('DELETE', `${NS}/connectors/patchy?dryRun=All`);
      expect(d.status).to.equal(200);
      const after = (await k('GET', `${NS}/connectors/patchy`)).body;
      expect(after).to.deep.equal(before);
      const agentDry = await k('POST', `${NS}/agents?dryRun=All`, agent('dry-agent', '@say never'));
      expect(agentDry.status).to.equal(201);
      expect(agentDry.body.spec.task).to.equal(1);
      expect((await k('GET', `${NS}/agents/dry-agent`)).status).to.equal(404);
      const badDry = await k('POST', `${NS}/connectors?dryRun=Some`, connector('dry'));
      expect(badDry.status).to.equal(400);
    });
  });

  describe('list: selectors and Table', () => {
    before(async () => {
      for (const [name, labels, service] of [
        ['sel-a', { tier: 'front', env: 'prod' }, 'github'],
        ['sel-b', { tier: 'back', env: 'prod' }, 'slack'],
        ['sel-c', { tier: 'back' }, 'github'],
      ] as const) {
        expect((await k('POST', `${NS}/connectors`, connector(name, { ...labels, group: 'sel' }, service))).status).to.equal(201);
      }
      const other = await k('POST', `${B}/namespaces/team-b/connectors`, connector('sel-a', { group: 'sel', tier: 'front' }));
      expect(other.status).to.equal(201);
    });
    const names = async (query: string, path = `${NS}/connectors`): Promise<string[]> => {
      const r = await k('GET', `${path}?${query}`);
      expect(r.status, r.text).to.equal(200);
      return r.body.items.map((c: { metadata: { name: string; namespace: string } }) =>
        path === `${B}/connectors` ? `${c.metadata.namespace}/${c.metadata.name}` : c.metadata.name,
      );
    };
    const sel = (s: string): string => `labelSelector=${encodeURIComponent(`group=sel,${s}`)}`;

    it('label selectors: =, ==, !=, in, notin, exists, !exists', async () => {
      expect(await names(sel('tier=back'))).to.deep.equal(['sel-b', 'sel-c']);
      expect(await names(sel('tier==front'))).to.deep.equal(['sel-a']);
      expect(await names(sel('env!=prod'))).to.deep.equal(['sel-c']);
      expect(await names(sel('tier in (front, back),env'))).to.deep.equal(['sel-a', 'sel-b']);
      expect(await names(sel('tier notin (front)'))).to.deep.equal(['sel-b', 'sel-c']);
      expect(await names(sel('!env'))).to.deep.equal(['sel-c']);
      const bad = await k('GET', `${NS}/connectors?labelSelector=${encodeURIComponent('tier in (front')}`);
      expect(bad.status).to.equal(400);
      expect(bad.body).to.include({ kind: 'Status', reason: 'BadRequest' });
    });

    it('field selectors: metadata.name, metadata.namespace and the strategy fields; unknown fields are 400', async () => {
      expect(await names('fieldSelector=metadata.name%3Dsel-b')).to.deep.equal(['sel-b']);
      expect(await names(`${sel('tier=front')}`, `${B}/connectors`)).to.deep.equal(['default/sel-a', 'team-b/sel-a']);
      expect(await names(`${sel('tier=front')}&fieldSelector=metadata.namespace%3Dteam-b`, `${B}/connectors`)).to.deep.equal(['team-b/sel-a']);
      expect(await names(`${sel('tier')}&fieldSelector=metadata.namespace!%3Dteam-b`, `${B}/connectors`)).to.deep.equal([
        'default/sel-a',
        'default/sel-b',
        'default/sel-c',
      ]);
      expect(await names(`${sel('tier')}&fieldSelector=spec.service%3D%3Dgithub,metadata.name!%3Dsel-a`)).to.deep.equal(['sel-c']);
      const bad = await k('GET', `${NS}/connectors?fieldSelector=spec.nope%3Dx`);
      expect(bad.status).to.equal(400);
      expect(bad.body.message).to.contain('field label not supported: spec.nope');
    });

    it('lists are Kubernetes lists with a resourceVersion, paged by limit/continue', async () => {
      const r = await k('GET', `${NS}/connectors?limit=2&${sel('tier')}`);
      expect(r.body).to.include({ apiVersion: GV, kind: 'ConnectorList' });
      expect(r.body.metadata.resourceVersion).to.match(/^\d+$/);
      expect(r.body.items.map((i: { metadata: { name: string } }) => i.metadata.name)).to.deep.equal(['sel-a', 'sel-b']);
      expect(r.body.metadata.remainingItemCount).to.equal(1);
      const rest = await k('GET', `${NS}/connectors?limit=2&${sel('tier')}&continue=${r.body.metadata.continue}`);
      expect(rest.body.items.map((i: { metadata: { name: string } }) => i.metadata.name)).to.deep.equal(['sel-c']);
      expect(rest.body.metadata).to.not.have.property('continue');
      expect(rest.body.metadata.resourceVersion).to.equal(r.body.metadata.resourceVersion);
    });

    it('Table for list and get (kubectl get), -o wide columns at priority 1, includeObject', async () => {
      const list = await k('GET', `${NS}/agents`, undefined, { accept: TABLE });
      expect(list.status).to.equal(200);
      expect(list.body).to.include({ kind: 'Table', apiVersion: 'meta.k8s.io/v1' });
      expect(list.body.metadata.resourceVersion).to.match(/^\d+$/);
      const cols = list.body.columnDefinitions.map((c: { name: string; priority: number }) => `${c.name}:${c.priority}`);
      expect(cols).to.deep.equal(['Name:0', 'Status:0', 'Task:0', 'Model:0', 'Age:0', 'Message:1']);
      expect(list.body.columnDefinitions[0]).to.include({ type: 'string', format: 'name' });
      const row = list.body.rows.find((r: { cells: unknown[] }) => r.cells[0] === 'applied-agent');
      expect(row.cells.slice(0, 4)).to.deep.equal(['applied-agent', 'Running', 'Complete', 'claude-sonnet-4-5']);
      expect(row.cells[4]).to.match(/^\d+(s|m\d*s?)$/);
      expect(row.cells[5]).to.equal('two');
      expect(row.object).to.include({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1' });
      expect(row.object.metadata).to.include({ name: 'applied-agent', namespace: 'default' });

      const one = await k('GET', `${NS}/agents/applied-agent?includeObject=Object`, undefined, { accept: TABLE });
      expect(one.body.kind).to.equal('Table');
      expect(one.body.rows).to.have.length(1);
      expect(one.body.rows[0].object).to.include({ kind: 'Agent', apiVersion: GV });
      const none = await k('GET', `${NS}/agents/applied-agent?includeObject=None`, undefined, { accept: TABLE });
      expect(none.body.rows[0]).to.not.have.property('object');
      const beta = await k('GET', `${NS}/squads`, undefined, { accept: 'application/json;as=Table;v=v1beta1;g=meta.k8s.io' });
      expect(beta.body).to.include({ kind: 'Table', apiVersion: 'meta.k8s.io/v1beta1' });
      const conn = await k('GET', `${NS}/connectors/sel-a`, undefined, { accept: TABLE });
      expect(conn.body.rows[0].cells.slice(0, 4)).to.deep.equal(['sel-a', 'github', 'http://127.0.0.1:9/mcp', 'Unknown']);
      const meta = await k('GET', `${NS}/connectors`, undefined, { accept: 'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io' });
      expect(meta.body.kind).to.equal('PartialObjectMetadataList');
      expect(meta.body.items[0]).to.have.keys(['kind', 'apiVersion', 'metadata']);
    });

    it('deletecollection deletes what the selectors select and returns it', async () => {
      const r = await k('DELETE', `${NS}/connectors?${sel('env=prod')}`);
      expect(r.status, r.text).to.equal(200);
      expect(r.body.kind).to.equal('ConnectorList');
      expect(r.body.items.map((c: { metadata: { name: string } }) => c.metadata.name)).to.deep.equal(['sel-a', 'sel-b']);
      expect(await names(sel('tier'))).to.deep.equal(['sel-c']);
      expect(await names(sel('tier'), `${B}/connectors`)).to.deep.equal(['default/sel-c', 'team-b/sel-a']);
    });
  });

  describe('watch', () => {
    it('starts with synthetic ADDED (resourceVersion unset or 0), then MODIFIED and DELETED as they happen', async () => {
      await k('POST', `${NS}/connectors`, connector('w-one', { w: 'x' }));
      for (const rv of ['', '&resourceVersion=0']) {
        const s = await watch(`${NS}/connectors?watch=true&labelSelector=w${rv}`);
        expect(s.status).to.equal(200);
        expect(s.headers!.get('content-type')).to.match(/^application\/json/);
        await s.until((evs) => evs.length >= 1, 10_000, 'initial ADDED');
        expect(s.items[0]).to.deep.include({ type: 'ADDED' });
        expect(s.items[0].object.metadata.name).to.equal('w-one');
        s.close();
      }
      const s = await watch(`${NS}/connectors?watch=1&labelSelector=w`);
      await s.until((evs) => evs.length >= 1, 10_000, 'ADDED');
      await k('PATCH', `${NS}/connectors/w-one`, { spec: { service: 'changed' } }, MERGE);
      await k('POST', `${NS}/connectors`, connector('w-two', { w: 'y' }));
      await k('DELETE', `${NS}/connectors/w-two`);
      const evs = await s.until((e) => e.length >= 4, 10_000, 'MODIFIED, ADDED, DELETED');
      s.close();
      expect(evs.map((e) => `${e.type}:${e.object.metadata.name}`)).to.deep.equal(['ADDED:w-one', 'MODIFIED:w-one', 'ADDED:w-two', 'DELETED:w-two']);
      expect(evs[1].object.spec.service).to.equal('changed');
    });

    it('resumes after a resourceVersion: only later changes, nothing before', async () => {
      const list = await k('GET', `${NS}/connectors?labelSelector=w`);
      const rv = list.body.metadata.resourceVersion;
      await k('PATCH', `${NS}/connectors/w-one`, { metadata: { labels: { w: 'x', n: '1' } } }, MERGE);
      await k('PATCH', `${NS}/connectors/w-one`, { metadata: { labels: { w: 'x', n: '2' } } }, MERGE);
      const s = await watch(`${NS}/connectors?watch=true&labelSelector=w&resourceVersion=${rv}`);
      await k('PATCH', `${NS}/connectors/w-one`, { metadata: { labels: { w: 'x', n: '3' } } }, MERGE);
      const evs = await s.until((e) => e.length >= 3, 10_000, 'three MODIFIED');
      s.close();
      expect(evs.map((e) => `${e.type}:${e.object.metadata.labels.n}`)).to.deep.equal(['MODIFIED:1', 'MODIFIED:2', 'MODIFIED:3']);
    });

    it('an object that stops matching the selector leaves as DELETED', async () => {
      const s = await watch(`${NS}/connectors?watch=true&labelSelector=w%3Dx`);
      await s.until((e) => e.length >= 1, 10_000, 'ADDED');
      await k('PATCH', `${NS}/connectors/w-one`, { metadata: { labels: { w: 'z' } } }, MERGE);
      const evs = await s.until((e) => e.length >= 2, 10_000, 'DELETED');
      s.close();
      expect(evs.map((e) => e.type)).to.deep.equal(['ADDED', 'DELETED']);
    });

    it('timeoutSeconds ends the stream, with a BOOKMARK before when bookmarks are allowed', async () => {
      const started = Date.now();
      const s = await watch(`${NS}/connectors?watch=true&labelSelector=w&timeoutSeconds=1&allowWatchBookmarks=true`);
      const evs = await s.end(10_000);
      expect(Date.now() - started).to.be.within(900, 5000);
      const bookmark = evs.at(-1);
      expect(bookmark.type).to.equal('BOOKMARK');
      expect(bookmark.object).to.include({ kind: 'Connector', apiVersion: GV });
      expect(bookmark.object.metadata.resourceVersion).to.match(/^\d+$/);
      const plain = await watch(`${NS}/connectors?watch=true&labelSelector=w&timeoutSeconds=1`);
      expect((await plain.end(10_000)).every((e) => e.type !== 'BOOKMARK')).to.equal(true);
    });

    it('WatchList: sendInitialEvents=true gives ADDED then a BOOKMARK marking the end of the initial events', async () => {
      const bad = await k('GET', `${NS}/connectors?watch=true&sendInitialEvents=true`);
      expect(bad.status).to.equal(422);
      const s = await watch(`${NS}/connectors?watch=true&labelSelector=w&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`);
      const evs = await s.until((e) => e.some((x) => x.type === 'BOOKMARK'), 10_000, 'initial-events-end bookmark');
      s.close();
      expect(evs.map((e) => e.type)).to.deep.equal(['ADDED', 'BOOKMARK']);
      expect(evs[1].object.metadata.annotations).to.deep.equal({ 'k8s.io/initial-events-end': 'true' });
      const list = await k('GET', `${NS}/connectors?sendInitialEvents=true`);
      expect(list.status).to.equal(422);
    });

    it('with a Table Accept (kubectl get -w), events carry Tables; only the first has column definitions', async () => {
      const s = await watch(`${NS}/agents?watch=true`, { accept: TABLE });
      const initial = await s.until((e) => e.length >= 2, 10_000, 'initial rows');
      expect(initial[0].type).to.equal('ADDED');
      expect(initial[0].object).to.include({ kind: 'Table', apiVersion: 'meta.k8s.io/v1' });
      expect(initial[0].object.columnDefinitions.map((c: { name: string }) => c.name)).to.include.members(['Name', 'Status', 'Task', 'Model', 'Age']);
      expect(initial[0].object.rows).to.have.length(1);
      expect(initial[1].object.columnDefinitions).to.deep.equal([]);
      const n = s.items.length;
      await k('PATCH', `${NS}/agents/applied-agent`, { metadata: { labels: { watched: 'yes' } } }, MERGE);
      const evs = await s.until((e) => e.length > n, 10_000, 'MODIFIED');
      s.close();
      const mod = evs[n];
      expect(mod.type).to.equal('MODIFIED');
      expect(mod.object.rows[0].cells[0]).to.equal('applied-agent');
      expect(mod.object.rows[0].object.metadata.labels).to.deep.equal({ watched: 'yes' });
    });

    it('a watch of one object (/watch/.../name) sees only it', async () => {
      const s = await watch(`${B}/watch/namespaces/default/connectors/w-one`);
      await s.until((e) => e.length >= 1, 10_000, 'ADDED');
      await k('PATCH', `${NS}/connectors/sel-c`, { spec: { service: 'x' } }, MERGE);
      await k('PATCH', `${NS}/connectors/w-one`, { spec: { service: 'y' } }, MERGE);
      const evs = await s.until((e) => e.length >= 2, 10_000, 'MODIFIED');
      s.close();
      expect(evs.map((e) => `${e.type}:${e.object.metadata.name}`)).to.deep.equal(['ADDED:w-one', 'MODIFIED:w-one']);
    });
  });

  describe('delete', () => {
    it('an agent stays visible with deletionTimestamp until it is finalized; watch then sees DELETED', async () => {
      const c = await k('POST', `${NS}/agents`, agent('doomed', '@say bye'));
      expect(c.status).to.equal(201);
      await waitTaskEnd('doomed', 1);
      const s = await watch(`${NS}/agents?watch=true&fieldSelector=metadata.name%3Ddoomed`);
      await s.until((e) => e.length >= 1, 10_000, 'ADDED');
      const d = await k('DELETE', `${NS}/agents/doomed`, { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background' });
      expect(d.status, d.text).to.equal(200);
      expect(d.body.kind).to.equal('Agent');
      expect(d.body.metadata.deletionTimestamp).to.be.a('string');
      const evs = await s.until((e) => e.some((x) => x.type === 'DELETED'), 30_000, 'DELETED');
      s.close();
      expect(evs.filter((e) => e.type === 'MODIFIED')[0]?.object.metadata.deletionTimestamp).to.be.a('string');
      expect((await k('GET', `${NS}/agents/doomed`)).status).to.equal(404);
      expect((await k('GET', '/api/v1/agents/doomed')).status).to.equal(404);
      const again = await k('DELETE', `${NS}/agents/doomed`);
      expect(again.status).to.equal(404);
    });

    it('preconditions in DeleteOptions are checked', async () => {
      await k('POST', `${NS}/connectors`, connector('guarded'));
      const r = await k('DELETE', `${NS}/connectors/guarded`, { preconditions: { uid: '00000000-0000-0000-0000-000000000000' } });
      expect(r.status).to.equal(409);
      const ok = await k('DELETE', `${NS}/connectors/guarded`, '', { 'content-type': 'application/json' });
      expect(ok.status).to.equal(200);
      expect(ok.body.metadata.name).to.equal('guarded');
    });

    it('a connector an agent uses cannot be deleted (409), as in the REST mirror', async () => {
      await k('POST', `${NS}/connectors`, connector('in-use'));
      const p = await k('PATCH', `${NS}/agents/applied-agent`, { spec: { connectors: ['in-use'] } }, MERGE);
      expect(p.status, p.text).to.equal(200);
      const unknownConn = await k('PATCH', `${NS}/agents/applied-agent`, { spec: { connectors: ['missing'] } }, MERGE);
      expect(unknownConn.status).to.equal(422);
      expect(unknownConn.body.details.causes[0].field).to.equal('spec.connectors[0]');
      const d = await k('DELETE', `${NS}/connectors/in-use`);
      expect(d.status).to.equal(409);
      expect(d.body.message).to.contain('applied-agent');
      await k('PATCH', `${NS}/agents/applied-agent`, { spec: { connectors: [] } }, MERGE);
      expect((await k('DELETE', `${NS}/connectors/in-use`)).status).to.equal(200);
    });
  });

  describe('squads', () => {
    it('membership rules apply: a ref must name a sleeping agent', async () => {
      const r = await k('POST', `${NS}/squads`, {
        apiVersion: GV,
        kind: 'Squad',
        metadata: { name: 'crew' },
        spec: { members: [{ ref: { name: 'applied-agent' } }, { name: 'crew-b', spec: { instructions: '@say b' } }] },
      });
      expect(r.status).to.equal(409);
      expect(r.body.message).to.contain('must be asleep');
      const invalid = await k('POST', `${NS}/squads`, {
        apiVersion: GV,
        kind: 'Squad',
        metadata: { name: 'crew' },
        spec: { members: [{ ref: {} }], orphanTTL: 'soon' },
      });
      expect(invalid.status).to.equal(422);
    });
  });

  describe('a watch from a version older than the store holds', () => {
    it('gets an in-stream 410 Expired Status and the stream ends', async () => {
      const rv = (await k('GET', `${NS}/connectors`)).body.metadata.resourceVersion;
      await k('PATCH', `${NS}/connectors/w-one`, { spec: { service: 'before-restart' } }, MERGE);
      // After a restart the store keeps no changes from before it: rv is now too old.
      await h.restart();
      const s = await watch(`${NS}/connectors?watch=true&resourceVersion=${rv}`);
      expect(s.status).to.equal(200);
      const evs = await s.end(10_000);
      expect(evs).to.have.length(1);
      expect(evs[0].type).to.equal('ERROR');
      expect(evs[0].object).to.include({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Expired', code: 410 });
    });
  });
});
