// Lists that scale, on the embedded server: limit/continue in the aggregated API and in the REST
// mirror, pages of one snapshot, kube-apiserver's tokens and errors, resourceVersion rules.

import { expect } from 'chai';
import { decodeContinue, encodeContinue } from '../../pkg/registry/cache/continue-token.js';
import { type Harness, startHarness } from '../support/harness.js';

const GV = 'agentplane.io/v1alpha1';
const NS = `/apis/${GV}/namespaces/paging`;
const CONNECTORS = 12;

/** Connector names take no digits: 0 -> "c-a", 11 -> "c-l". */
const nameOf = (i: number): string => `c-${String.fromCharCode(97 + i)}`;

describe('list paging (integration, both APIs)', function () {
  this.timeout(60_000);
  let h: Harness;
  const names = (items: { metadata?: { name: string }; name?: string }[]): string[] => items.map((i) => i.metadata?.name ?? i.name!);

  before(async () => {
    h = await startHarness();
    for (let i = 0; i < CONNECTORS; i++) {
      const r = await h.api('POST', `${NS}/connectors`, {
        apiVersion: GV,
        kind: 'Connector',
        metadata: { name: nameOf(i) },
        spec: { url: 'http://127.0.0.1:9/mcp' },
      });
      expect(r.status).to.equal(201);
    }
  });
  after(async () => {
    await h?.close();
  });

  it('aggregated API: pages of one snapshot with remainingItemCount; changes between pages wait for the next list', async () => {
    const seen: string[] = [];
    const first = await h.api('GET', `${NS}/connectors?limit=5`);
    expect(first.status).to.equal(200);
    expect(first.body.metadata.remainingItemCount).to.equal(CONNECTORS - 5);
    const token = decodeContinue(first.body.metadata.continue);
    expect(token).to.deep.equal({ rv: Number(first.body.metadata.resourceVersion), start: `paging/${nameOf(4)}\u0000` });
    seen.push(...names(first.body.items));

    // Between pages: one deleted, one added after the token's key.
    expect((await h.api('DELETE', `${NS}/connectors/${nameOf(7)}`)).status).to.equal(200);
    expect(
      (await h.api('POST', `${NS}/connectors`, { apiVersion: GV, kind: 'Connector', metadata: { name: 'c-new' }, spec: { url: 'http://127.0.0.1:9/mcp' } }))
        .status,
    ).to.equal(201);

    let cont = first.body.metadata.continue as string | undefined;
    while (cont) {
      const page = await h.api('GET', `${NS}/connectors?limit=5&continue=${encodeURIComponent(cont)}`);
      expect(page.status).to.equal(200);
      expect(page.body.metadata.resourceVersion).to.equal(first.body.metadata.resourceVersion);
      seen.push(...names(page.body.items));
      cont = page.body.metadata.continue;
    }
    expect(seen).to.deep.equal(Array.from({ length: CONNECTORS }, (_, i) => nameOf(i)));

    const now = await h.api('GET', `${NS}/connectors`);
    expect(names(now.body.items)).to.include('c-new').and.not.include(nameOf(7));
    expect(now.body.metadata).to.not.have.property('continue');
  });

  it('aggregated API: errors as kube-apiserver words them', async () => {
    const badToken = await h.api('GET', `${NS}/connectors?limit=5&continue=garbage`);
    expect(badToken.status).to.equal(400);
    expect(badToken.body).to.include({ kind: 'Status', reason: 'BadRequest' });
    expect(badToken.body.message).to.match(/^invalid continue token/);

    const withRv = await h.api('GET', `${NS}/connectors?limit=5&resourceVersion=3&continue=${encodeContinue(3, 'paging/c-a\u0000')}`);
    expect([withRv.status, withRv.body.message]).to.deep.equal([400, 'specifying resource version is not allowed when using continue']);

    const matchOnly = await h.api('GET', `${NS}/connectors?resourceVersionMatch=NotOlderThan`);
    expect(matchOnly.status).to.equal(422);
    expect(matchOnly.body.details.causes[0]).to.include({ field: 'resourceVersionMatch', reason: 'FieldValueForbidden' });

    // A snapshot the history still holds is served as it was (410 for one it lost: unit-tested).
    const old = await h.api('GET', `${NS}/connectors?limit=100&continue=${encodeContinue(1, 'paging/c-a\u0000')}`);
    expect(old.status).to.equal(200);
    expect(names(old.body.items), 'only what existed at resourceVersion 1').to.deep.equal([]);

    const tooNew = await h.api('GET', `${NS}/connectors/${nameOf(0)}?resourceVersion=99999999`);
    expect(tooNew.status, 'one writer: nothing newer exists than what the cache holds').to.equal(200);
  });

  it('Table pages too (kubectl get --chunk-size)', async () => {
    const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';
    const t = await h.api('GET', `${NS}/connectors?limit=4`, undefined, { accept: TABLE });
    expect(t.body.kind).to.equal('Table');
    expect(t.body.rows).to.have.length(4);
    expect(t.body.metadata.continue).to.be.a('string');
    expect(t.body.metadata.remainingItemCount).to.be.greaterThan(0);
  });

  it('REST mirror: limit/continue on /api/v1 lists, with the same tokens', async () => {
    const seen: string[] = [];
    let page = await h.api('GET', '/api/v1/connectors?namespace=paging&limit=5');
    expect(page.status).to.equal(200);
    expect(page.body.connectors).to.have.length(5);
    expect(page.body.remainingItemCount).to.be.greaterThan(0);
    seen.push(...names(page.body.connectors));
    while (page.body.continue) {
      page = await h.api('GET', `/api/v1/connectors?namespace=paging&limit=5&continue=${encodeURIComponent(page.body.continue)}`);
      expect(page.status).to.equal(200);
      seen.push(...names(page.body.connectors));
    }
    const all = await h.api('GET', '/api/v1/connectors?namespace=paging');
    expect(all.body).to.not.have.property('continue');
    expect(seen).to.deep.equal(names(all.body.connectors));

    const agents = await h.api('GET', '/api/v1/agents?limit=1');
    expect(agents.status).to.equal(200);
    expect(agents.body.agents).to.be.an('array');
    const squads = await h.api('GET', '/api/v1/squads?limit=1');
    expect(squads.status).to.equal(200);

    const bad = await h.api('GET', '/api/v1/connectors?limit=0');
    expect(bad.status).to.equal(400);
  });
});
