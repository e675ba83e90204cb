// The audit log on a real server: every mutating request on the REST mirror and the aggregated
// API is one audit.k8s.io/v1 Event line (refusals included), reads and the workers' own
// requests are not, secret values never reach the log, level None writes nothing; a policy
// file's rules set the level per request, and a bad one stops start-up.

import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { expect } from 'chai';

import { type TestToken, tokenFileYaml } from '../support/tokens.js';
import { eventually, type Harness, startHarness } from '../support/harness.js';

const run = promisify(execFile);
const MAIN = fileURLToPath(new URL('../../cmd/agentplane/main.js', import.meta.url));
const B = '/apis/agentplane.io/v1alpha1';
const GV = 'agentplane.io/v1alpha1';
const SECRET_VALUE = 'audit-secret-value-7c1e9a3b5d';
const SECRET_VALUE_2 = 'audit-secret-value-2f8d0b4c6e';
const SECRET_VALUE_3 = 'audit-secret-value-9a7b5c3d1e';

type Ev = Record<string, any>;

/** Every line of the log, each parsed (a line that is not JSON fails the test). */
function linesOf(path: string): Ev[] {
  if (!existsSync(path)) return [];
  const text = readFileSync(path, 'utf8');
  if (text === '') return [];
  expect(text.endsWith('\n'), 'the log ends with a newline').to.equal(true);
  return text
    .slice(0, -1)
    .split('\n')
    .map((l) => JSON.parse(l) as Ev);
}

/** Waits for the event of `method path` (its requestURI), and returns it; there must be exactly one. */
async function eventFor(path: string, uri: string, verb: string): Promise<Ev> {
  const found = await eventually(
    async () => linesOf(path).filter((e) => e.requestURI === uri && e.verb === verb).length > 0 && true,
    10_000,
    `audit event ${verb} ${uri}`,
  );
  expect(found).to.equal(true);
  const matching = linesOf(path).filter((e) => e.requestURI === uri && e.verb === verb);
  expect(matching, `events for ${verb} ${uri}`).to.have.length(1);
  return matching[0];
}

const kubeAgent = (name: string, instructions: string) => ({ apiVersion: GV, kind: 'Agent', metadata: { name }, spec: { instructions } });
const auth = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

/** A fresh directory holding a token file with `tokens`, and where the audit log goes. */
function withTokens(prefix: string, tokens: TestToken[]): { dir: string; log: string; tokenFile: string } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const tokenFile = join(dir, 'tokens.yaml');
  writeFileSync(tokenFile, tokenFileYaml(tokens));
  return { dir, log: join(dir, 'audit.log'), tokenFile };
}

function expectShape(e: Ev): void {
  expect(e).to.include({ kind: 'Event', apiVersion: 'audit.k8s.io/v1', stage: 'ResponseComplete' });
  expect(e.auditID).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  expect(e.sourceIPs).to.include('127.0.0.1');
  expect(e.userAgent).to.be.a('string');
  const received = Date.parse(e.requestReceivedTimestamp);
  const done = Date.parse(e.stageTimestamp);
  expect(received).to.be.a('number');
  expect(Number.isNaN(received)).to.equal(false);
  expect(done).to.be.at.least(received);
  expect(Date.now() - done).to.be.below(120_000);
}

describe('audit log (integration)', function () {
  this.timeout(120_000);

  describe('embedded home without authentication, level Request', () => {
    let h: Harness;
    let dir: string;
    let log: string;
    let mutations = 0;
    const api = async (method: string, path: string, body?: unknown) => {
      const r = await h.api(method, path, body);
      if (!['GET', 'HEAD'].includes(method)) mutations++;
      return r;
    };

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'agentplane-audit-'));
      log = join(dir, 'audit.log');
      h = await startHarness({ audit: { path: log, level: 'Request' } });
    });
    after(async () => {
      await h?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('a REST create is one event: verb, user, objectRef, code, and the request body', async () => {
      const r = await api('POST', '/api/v1/agents', { name: 'a1', namespace: 'team-a', instructions: '@say audited hello' });
      expect(r.status, r.text).to.equal(201);
      const e = await eventFor(log, '/api/v1/agents', 'create');
      expectShape(e);
      expect(e.level).to.equal('Request');
      expect(e.user).to.deep.equal({ username: 'system:anonymous', groups: ['system:unauthenticated'] });
      expect(e.objectRef).to.deep.equal({ resource: 'agents', namespace: 'team-a', name: 'a1', apiGroup: 'agentplane.io', apiVersion: 'v1alpha1' });
      expect(e.responseStatus).to.deep.equal({ metadata: {}, code: 201 });
      expect(e.requestObject).to.include({ name: 'a1', instructions: '@say audited hello' });
    });

    it("reads and the workers' own requests (control channel, model proxy) are not written", async () => {
      // The task of a1 runs: its worker dials the control channel and calls the model proxy.
      await eventually(async () => (await api('GET', '/api/v1/agents/a1?namespace=team-a')).body.taskStatus === 'Complete', 60_000, 'a1 completed');
      expect((await api('GET', '/api/v1/agents')).status).to.equal(200);
      expect((await api('GET', `${B}/namespaces/team-a/agents`)).status).to.equal(200);
      expect((await api('GET', `${B}/namespaces/team-a/agents/a1`)).status).to.equal(200);
      const lines = linesOf(log);
      expect(lines.map((e) => e.verb)).to.deep.equal(['create']);
      expect(lines.some((e) => String(e.requestURI).startsWith('/internal'))).to.equal(false);
    });

    it('a REST task for an existing agent is an update; steering is a patch; cancel is create agents/cancel (a refused one too)', async () => {
      const again = await api('POST', '/api/v1/agents?namespace=team-a', { name: 'a1', instructions: '@say second' });
      expect(again.status, again.text).to.equal(200);
      const upd = await eventFor(log, '/api/v1/agents?namespace=team-a', 'update');
      expect(upd.objectRef).to.include({ resource: 'agents', namespace: 'team-a', name: 'a1' });
      expect(upd.responseStatus.code).to.equal(200);

      await eventually(async () => (await h.api('GET', '/api/v1/agents/a1?namespace=team-a')).body.taskStatus === 'Complete', 60_000, 'a1 second task');
      const steer = await api('PATCH', '/api/v1/agents/a1?namespace=team-a', { instructions: '@say third' });
      const pe = await eventFor(log, '/api/v1/agents/a1?namespace=team-a', 'patch');
      expect(pe.objectRef).to.include({ resource: 'agents', namespace: 'team-a', name: 'a1' });
      expect(pe.responseStatus.code).to.equal(steer.status);

      await eventually(async () => (await h.api('GET', '/api/v1/agents/a1?namespace=team-a')).body.taskStatus === 'Complete', 60_000, 'a1 third task');
      const cancel = await api('POST', '/api/v1/agents/a1/cancel?namespace=team-a');
      expect(cancel.status, cancel.text).to.equal(200); // nothing running: an idempotent success
      expect(cancel.body.cancelled).to.equal(false);
      const ce = await eventFor(log, '/api/v1/agents/a1/cancel?namespace=team-a', 'create');
      expect(ce.objectRef).to.deep.equal({
        resource: 'agents',
        namespace: 'team-a',
        name: 'a1',
        subresource: 'cancel',
        apiGroup: 'agentplane.io',
        apiVersion: 'v1alpha1',
      });
      expect(ce.responseStatus).to.deep.equal({ metadata: {}, code: 200 });
    });

    it('aggregated API: create, a refused second create (409) and delete are each one event', async () => {
      const uri = `${B}/namespaces/default/agents`;
      expect((await api('POST', uri, kubeAgent('k1', '@say kube'))).status).to.equal(201);
      const created = await eventFor(log, uri, 'create');
      expect(created.objectRef).to.deep.equal({ resource: 'agents', namespace: 'default', name: 'k1', apiGroup: 'agentplane.io', apiVersion: 'v1alpha1' });
      expect(created.responseStatus.code).to.equal(201);

      expect((await api('POST', uri, kubeAgent('k1', '@say again'))).status).to.equal(409);
      await eventually(async () => linesOf(log).filter((e) => e.requestURI === uri).length === 2, 10_000, 'second create event');
      const [first, second] = linesOf(log).filter((e) => e.requestURI === uri);
      expect(first.auditID).not.to.equal(second.auditID);
      expect(second.verb).to.equal('create');
      expect(second.objectRef).to.include({ name: 'k1', namespace: 'default' });
      expect(second.responseStatus).to.include({ code: 409, status: 'Failure' });

      const del = await api('DELETE', `${uri}/k1`);
      expect(del.status).to.be.oneOf([200, 202]);
      const de = await eventFor(log, `${uri}/k1`, 'delete');
      expect(de.objectRef).to.include({ resource: 'agents', namespace: 'default', name: 'k1' });
      expect(de.responseStatus.code).to.equal(del.status);
    });

    it('a malformed create (400) is audited with its verb and resource', async () => {
      const r = await api('POST', '/api/v1/squads?namespace=team-b', '{"name": ');
      expect(r.status).to.equal(400);
      const e = await eventFor(log, '/api/v1/squads?namespace=team-b', 'create');
      expect(e.objectRef).to.include({ resource: 'squads', namespace: 'team-b', apiGroup: 'agentplane.io' });
      expect(e.responseStatus.code).to.equal(400);
    });

    it('secret writes at level Request never log a value', async () => {
      const c = await api('POST', '/api/v1/secrets', { name: 's1', namespace: 'team-a', data: { token: SECRET_VALUE } });
      expect(c.status, c.text).to.equal(201);
      const u = await api('PUT', '/api/v1/secrets/s1?namespace=team-a', { data: { token: SECRET_VALUE_2, other: SECRET_VALUE_3 } });
      expect(u.status, u.text).to.equal(200);
      const p = await api('PATCH', '/api/v1/secrets/s1?namespace=team-a', { data: { token: SECRET_VALUE_3, other: null } });
      expect(p.status, p.text).to.equal(200);
      const d = await api('DELETE', '/api/v1/secrets/s1?namespace=team-a');
      expect(d.status, d.text).to.equal(200);

      const ce = await eventFor(log, '/api/v1/secrets', 'create');
      expect(ce.objectRef).to.deep.equal({ resource: 'secrets', namespace: 'team-a', name: 's1', apiVersion: 'v1' });
      expect(ce.requestObject).to.deep.equal({ name: 's1', namespace: 'team-a', data: { token: '<redacted>' } });
      const ue = await eventFor(log, '/api/v1/secrets/s1?namespace=team-a', 'update');
      expect(ue.requestObject).to.deep.equal({ data: { token: '<redacted>', other: '<redacted>' } });
      const pe = await eventFor(log, '/api/v1/secrets/s1?namespace=team-a', 'patch');
      expect(pe.requestObject).to.deep.equal({ data: { token: '<redacted>', other: null } });
      const de = await eventFor(log, '/api/v1/secrets/s1?namespace=team-a', 'delete');
      expect(de.objectRef).to.include({ resource: 'secrets', name: 's1' });

      const text = readFileSync(log, 'utf8');
      for (const v of [SECRET_VALUE, SECRET_VALUE_2, SECRET_VALUE_3]) expect(text).not.to.include(v);
    });

    it('writes exactly one valid JSON line per mutating request, and none for reads', async () => {
      // A last write, whose line comes after every earlier one (one append stream, in order).
      expect((await api('DELETE', '/api/v1/squads/nosuch?namespace=team-a')).status).to.equal(404);
      await eventFor(log, '/api/v1/squads/nosuch?namespace=team-a', 'delete');
      const lines = linesOf(log);
      expect(lines).to.have.length(mutations);
      expect(new Set(lines.map((e) => e.auditID)).size).to.equal(mutations);
      for (const e of lines) {
        expectShape(e);
        expect(['create', 'update', 'patch', 'delete', 'deletecollection']).to.include(e.verb);
      }
    });

    it('level None writes nothing', async () => {
      const before = readFileSync(log, 'utf8');
      await h.restart({ audit: { path: log, level: 'None' } });
      expect((await h.api('POST', '/api/v1/agents', { name: 'quiet', instructions: '@say nothing' })).status).to.equal(201);
      expect((await h.api('POST', '/api/v1/secrets', { name: 's2', data: { token: SECRET_VALUE } })).status).to.equal(201);
      expect((await h.api('DELETE', '/api/v1/agents/quiet')).status).to.be.oneOf([200, 202]);
      await new Promise((r) => setTimeout(r, 300));
      expect(readFileSync(log, 'utf8')).to.equal(before);
    });
  });

  describe('embedded home with a token file, level Metadata (the default)', () => {
    let h: Harness;
    let dir: string;
    let log: string;
    const alice = 'alice-audit-1a2b3c4d5e6f7a8b';
    const reader = 'reader-audit-9f8e7d6c5b4a3928';
    const approver = 'approver-audit-4c3b2a1f0e9d8c7b';
    const editor = 'editor-audit-7b8c9d0e1f2a3b4c';

    before(async () => {
      let tokenFile: string;
      ({ dir, log, tokenFile } = withTokens('agentplane-audit-auth-', [
        { user: 'alice', token: alice, namespaces: ['team-a'] },
        { user: 'reader', token: reader, namespaces: ['team-a'], verbs: ['get', 'list', 'watch'] },
        { user: 'approver', token: approver, namespaces: ['team-a'], verbs: ['get', 'approve'] },
        { user: 'editor', token: editor, namespaces: ['team-a'], verbs: ['get', 'create', 'update', 'patch'] },
      ]));
      h = await startHarness({ tokenFile, audit: { path: log } });
    });
    after(async () => {
      await h?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it("names the token's user, and never writes a body at Metadata", async () => {
      const r = await h.api('POST', '/api/v1/agents?namespace=team-a', { name: 'b1', instructions: '@say from alice' }, auth(alice));
      expect(r.status, r.text).to.equal(201);
      const e = await eventFor(log, '/api/v1/agents?namespace=team-a', 'create');
      expectShape(e);
      expect(e.level).to.equal('Metadata');
      expect(e.user.username).to.equal('alice');
      expect(e.user.groups).to.include('system:authenticated');
      expect(e.objectRef).to.include({ resource: 'agents', namespace: 'team-a', name: 'b1' });
      expect(e).not.to.have.property('requestObject');
      expect(readFileSync(log, 'utf8')).not.to.include('from alice');

      const s = await h.api('POST', '/api/v1/secrets?namespace=team-a', { name: 'sa', data: { token: SECRET_VALUE } }, auth(alice));
      expect(s.status, s.text).to.equal(201);
      const se = await eventFor(log, '/api/v1/secrets?namespace=team-a', 'create');
      expect(se.user.username).to.equal('alice');
      expect(readFileSync(log, 'utf8')).not.to.include(SECRET_VALUE);
    });

    it('a tool-call approval is decided only with the token verb approve; the decision, its id and the decider are audited', async () => {
      const r = await h.api(
        'POST',
        '/api/v1/agents?namespace=team-a',
        { name: 'gated', instructions: '@bash echo audited\n@say ok', approval: { tools: ['Bash'] } },
        auth(alice),
      );
      expect(r.status, r.text).to.equal(201);
      const id = await eventually(
        async () => {
          const list = await h.api('GET', '/api/v1/agents/gated/approvals?namespace=team-a', undefined, auth(approver));
          return list.status === 200 ? (list.body.approvals[0]?.id as string | undefined) : undefined;
        },
        60_000,
        'the approval request',
      );
      const uri = `/api/v1/agents/gated/approvals/${id}?namespace=team-a`;
      const refused = await h.api('POST', uri, { decision: 'allow' }, auth(editor));
      expect(refused.status).to.equal(403);
      expect(refused.body.error).to.contain('allows the verbs get, create, update, patch');
      const ok = await h.api('POST', uri, { decision: 'deny', reason: 'audited reason' }, auth(approver));
      expect(ok.status, ok.text).to.equal(200);
      expect(ok.body.decidedBy).to.equal('approver');
      // The sink writes after the response: wait for both lines.
      const events = await eventually(
        async () => {
          const found = linesOf(log).filter((e) => e.requestURI === uri);
          return found.length >= 2 ? found : undefined;
        },
        10_000,
        'both decisions audited',
      );
      expect(events.map((e) => [e.user.username, e.responseStatus.code])).to.deep.equal([
        ['editor', 403],
        ['approver', 200],
      ]);
      for (const e of events) {
        expect(e.objectRef).to.include({ resource: 'agents', subresource: 'approvals', namespace: 'team-a', name: 'gated' });
        expect(e).not.to.have.property('requestObject');
      }
      expect(events[1].annotations).to.deep.equal({ 'agentplane.io/approval-decision': 'deny', 'agentplane.io/approval-id': id });
      expect(readFileSync(log, 'utf8')).not.to.include('audited reason');
    });

    it('audits refusals: 403 with the user refused, 401 as system:anonymous', async () => {
      const forbidden = await h.api('DELETE', `${B}/namespaces/team-a/agents/b1`, undefined, auth(reader));
      expect(forbidden.status).to.equal(403);
      const fe = await eventFor(log, `${B}/namespaces/team-a/agents/b1`, 'delete');
      expect(fe.user.username).to.equal('reader');
      expect(fe.objectRef).to.include({ resource: 'agents', namespace: 'team-a', name: 'b1' });
      expect(fe.responseStatus).to.include({ code: 403, status: 'Failure' });

      const other = await h.api('POST', '/api/v1/agents/b1/cancel?namespace=team-b', undefined, auth(alice));
      expect(other.status).to.equal(403);
      const oe = await eventFor(log, '/api/v1/agents/b1/cancel?namespace=team-b', 'create');
      expect(oe.user.username).to.equal('alice');
      expect(oe.objectRef).to.include({ namespace: 'team-b', subresource: 'cancel' });

      const anon = await h.api('PATCH', '/api/v1/agents/b1?namespace=team-a', { instructions: 'x' }, auth('not-a-token'));
      expect(anon.status).to.equal(401);
      const ae = await eventFor(log, '/api/v1/agents/b1?namespace=team-a', 'patch');
      expect(ae.user.username).to.equal('system:anonymous');
      expect(ae.responseStatus.code).to.equal(401);
      // Nothing about the token reaches the log.
      expect(readFileSync(log, 'utf8')).not.to.include('not-a-token');

      // Reads (allowed or not) are not written.
      const count = linesOf(log).length;
      expect((await h.api('GET', '/api/v1/agents?namespace=team-a', undefined, auth(reader))).status).to.equal(200);
      expect((await h.api('GET', '/api/v1/agents?namespace=team-b', undefined, auth(reader))).status).to.equal(403);
      expect((await h.api('DELETE', '/api/v1/secrets/sa?namespace=team-a', undefined, auth(alice))).status).to.equal(200);
      await eventFor(log, '/api/v1/secrets/sa?namespace=team-a', 'delete');
      expect(linesOf(log)).to.have.length(count + 1);
    });
  });

  describe('embedded home with a token file and a policy file (rules, then --audit-level Request as the default)', () => {
    let h: Harness;
    let dir: string;
    let log: string;
    const alice = 'alice-policy-3c4d5e6f7a8b9c0d';
    const bob = 'bob-policy-0d9c8b7a6f5e4d3c';

    before(async () => {
      let tokenFile: string;
      ({ dir, log, tokenFile } = withTokens('agentplane-audit-policy-', [
        { user: 'alice', token: alice },
        { user: 'bob', token: bob },
      ]));
      const policyFile = join(dir, 'policy.yaml');
      writeFileSync(
        policyFile,
        [
          'apiVersion: audit.k8s.io/v1',
          'kind: Policy',
          'omitStages: [RequestReceived]',
          'rules:',
          '  # Cancels are noise: never written.',
          '  - level: None',
          '    resources: [{group: agentplane.io, resources: [agents/cancel]}]',
          '  # Secrets at the most, which is Request here: values still redacted.',
          '  - level: RequestResponse',
          '    resources: [{group: "", resources: [secrets]}]',
          "  # Alice's connectors in team-a: metadata only.",
          '  - level: Metadata',
          '    users: [alice]',
          '    namespaces: [team-a]',
          '    resources: [{group: agentplane.io, resources: [connectors]}]',
          '  # Deletes by bob: nothing.',
          '  - level: None',
          '    users: [bob]',
          '    verbs: [delete]',
          '',
        ].join('\n'),
      );
      h = await startHarness({ tokenFile, audit: { path: log, level: 'Request', policyFile } });
    });
    after(async () => {
      await h?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('the first matching rule sets the level, by resource, user, namespace and verb; no match takes the default', async () => {
      const conn = { name: 'c1', url: 'http://127.0.0.1:9/mcp' };
      expect((await h.api('POST', '/api/v1/connectors?namespace=team-a', conn, auth(alice))).status).to.equal(201);
      const ac = await eventFor(log, '/api/v1/connectors?namespace=team-a', 'create');
      expect(ac.level).to.equal('Metadata');
      expect(ac.user.username).to.equal('alice');
      expect(ac).not.to.have.property('requestObject');

      // Same resource, another user (or another namespace): no rule, the default (Request).
      expect((await h.api('POST', '/api/v1/connectors?namespace=team-b', conn, auth(bob))).status).to.equal(201);
      const bc = await eventFor(log, '/api/v1/connectors?namespace=team-b', 'create');
      expect(bc.level).to.equal('Request');
      expect(bc.user.username).to.equal('bob');
      expect(bc.requestObject).to.deep.equal(conn);
      expect((await h.api('POST', '/api/v1/connectors?namespace=team-c', conn, auth(alice))).status).to.equal(201);
      expect((await eventFor(log, '/api/v1/connectors?namespace=team-c', 'create')).level).to.equal('Request');

      // RequestResponse is written as Request, and a secret's values stay redacted.
      const s = await h.api('POST', '/api/v1/secrets?namespace=team-a', { name: 'ps', data: { token: SECRET_VALUE } }, auth(bob));
      expect(s.status, s.text).to.equal(201);
      const se = await eventFor(log, '/api/v1/secrets?namespace=team-a', 'create');
      expect(se.level).to.equal('Request');
      expect(se.requestObject).to.deep.equal({ name: 'ps', data: { token: '<redacted>' } });
      expect(readFileSync(log, 'utf8')).not.to.include(SECRET_VALUE);
    });

    it('a None rule writes nothing: a cancel (a subresource), and deletes by bob but not by alice', async () => {
      const before = linesOf(log).length;
      const cancel = await h.api('POST', '/api/v1/agents/nosuch/cancel?namespace=team-a', undefined, auth(alice));
      expect(cancel.status).to.equal(404);
      expect((await h.api('DELETE', '/api/v1/connectors/c1?namespace=team-b', undefined, auth(bob))).status).to.equal(200);
      // A last request that is written: every line before it is in the log by then (one stream, in order).
      expect((await h.api('DELETE', '/api/v1/connectors/c1?namespace=team-c', undefined, auth(alice))).status).to.equal(200);
      const de = await eventFor(log, '/api/v1/connectors/c1?namespace=team-c', 'delete');
      expect(de.level).to.equal('Request');
      const lines = linesOf(log);
      expect(lines).to.have.length(before + 1);
      expect(lines.some((e) => String(e.requestURI).includes('/cancel') || e.requestURI === '/api/v1/connectors/c1?namespace=team-b')).to.equal(false);
    });
  });

  it('a bad policy file stops start-up with a message naming the place; --audit-policy-file needs --audit-log', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'agentplane-audit-policy-cli-'));
    const serve = (args: string[]) =>
      run(process.execPath, [MAIN, 'serve', '--port', '0', '--data-dir', join(dataDir, 'data'), ...args], {
        env: { ...process.env, AGENTPLANE_AUDIT_LOG: '' },
      }).then(
        () => ({ code: 0, stderr: '' }),
        (e: { code: number; stderr: string }) => e,
      );
    const head = 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n';
    try {
      for (const [name, text, message] of [
        ['level.yaml', `${head}  - level: Everything\n`, 'rules[0].level: must be one of None, Metadata, Request, RequestResponse, got "Everything"'],
        ['field.yaml', `${head}  - level: None\n  - level: Metadata\n    verb: [create]\n`, 'rules[1]: unknown field "verb"'],
        ['kind.json', '{"apiVersion": "audit.k8s.io/v1beta1", "kind": "Policy", "rules": []}', 'expected apiVersion: audit.k8s.io/v1 and kind: Policy'],
        [
          'stage.yaml',
          `${head}  - level: None\n    omitStages: [Done]\n`,
          'rules[0].omitStages[0]: must be one of RequestReceived, ResponseStarted, ResponseComplete, Panic',
        ],
      ] as const) {
        const file = join(dataDir, name);
        writeFileSync(file, text);
        const r = await serve(['--audit-log', join(dataDir, 'a.log'), '--audit-policy-file', file]);
        expect(r.code, name).to.equal(2);
        expect(r.stderr).to.include(`audit policy ${file}: ${message}`);
      }
      const missing = await serve(['--audit-log', join(dataDir, 'a.log'), '--audit-policy-file', join(dataDir, 'nosuch.yaml')]);
      expect(missing.code).to.equal(2);
      expect(missing.stderr).to.include(`audit policy ${join(dataDir, 'nosuch.yaml')}: cannot read`);
      const noLog = await serve(['--audit-policy-file', join(dataDir, 'level.yaml')]);
      expect(noLog.code).to.equal(2);
      expect(noLog.stderr).to.include('--audit-policy-file needs --audit-log');
      // Start-up stopped before the data directory was made.
      expect(existsSync(join(dataDir, 'data'))).to.equal(false);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('the CLI validates --audit-level and lists the audit flags in --help', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'agentplane-audit-cli-'));
    try {
      const bad = await run(process.execPath, [
        MAIN,
        'serve',
        '--port',
        '0',
        '--data-dir',
        dataDir,
        '--audit-log',
        join(dataDir, 'a.log'),
        '--audit-level',
        'RequestResponse',
      ]).then(
        () => ({ code: 0, stderr: '' }),
        (e: { code: number; stderr: string }) => e,
      );
      expect(bad.code).to.equal(2);
      expect(bad.stderr).to.include('--audit-level must be one of None, Metadata, Request');
      const noLog = await run(process.execPath, [MAIN, 'serve', '--port', '0', '--data-dir', dataDir, '--audit-level', 'Request'], {
        env: { ...process.env, AGENTPLANE_AUDIT_LOG: '' },
      }).then(
        () => ({ code: 0, stderr: '' }),
        (e: { code: number; stderr: string }) => e,
      );
      expect(noLog.code).to.equal(2);
      expect(noLog.stderr).to.include('--audit-level needs --audit-log');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
    const help = (await run(process.execPath, [MAIN, 'serve', '--help'])).stdout;
    for (const flag of [
      '--audit-log',
      'AGENTPLANE_AUDIT_LOG',
      '--audit-level',
      'AGENTPLANE_AUDIT_LEVEL',
      '"auditLog"',
      '--audit-policy-file',
      'AGENTPLANE_AUDIT_POLICY_FILE',
      '"auditPolicyFile"',
    ])
      expect(help).to.include(flag);
  });
});
