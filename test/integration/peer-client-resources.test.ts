// Clients written for the peer project work unchanged (peer-client.test.ts has the agents):
// komputer-ai's Python SDK, unchanged, with squads, connectors and secrets on a real server.
// Where the answer differs from the peer's on purpose, docs/decisions.md "Clients of the peer
// project" says why.

import { expect } from 'chai';
import { getSquad, waitAgent, waitSquad } from '../support/agents.js';
import { type Harness, startHarness } from '../support/harness.js';
import { createTestMcpServer, type TestMcpServer } from '../support/mcp-server.js';
import { errorOf, model, PEER_SDK_VERSION, type PeerClient, PeerClient as Peer, peerSdkPython } from '../support/peer-sdk.js';

const AGG = '/apis/agentplane.io/v1alpha1/namespaces/default';
const MERGE_CT = { 'content-type': 'application/merge-patch+json' };
const member = (name: string) => model('V1alpha1KomputerSquadMember', { ref: { name } });

describe(`clients of the peer project: komputer-ai-sdk ${PEER_SDK_VERSION}, squads, connectors and secrets (integration)`, function () {
  this.timeout(120_000);
  let h: Harness;
  let sdk: PeerClient;
  let bearerMcp: TestMcpServer;
  let headerMcp: TestMcpServer;

  before(async function () {
    this.timeout(600_000); // a first run installs the SDK from PyPI
    peerSdkPython();
    bearerMcp = createTestMcpServer({ token: 'peer-bearer-token' });
    headerMcp = createTestMcpServer({ token: 'peer-header-token', headerName: 'X-Api-Key' });
    await Promise.all([bearerMcp.start(), headerMcp.start()]);
    h = await startHarness();
    sdk = new Peer(h.url);
  });
  after(async () => {
    await sdk?.close();
    await h?.close();
    await Promise.all([bearerMcp?.close(), headerMcp?.close()]);
  });

  describe('squads', () => {
    before(async () => {
      // Agents that sleep after their first task, made with the SDK: lifecycle on create.
      for (const n of ['ps-1', 'ps-2', 'ps-3']) await sdk.ok('create_agent', [n, `@say ${n} ready`], { lifecycle: 'Sleep' });
      await sdk.ok('create_agent', ['ps-awake', '@say awake']);
      for (const n of ['ps-1', 'ps-2', 'ps-3']) await waitAgent(h, n, (a) => a.status === 'Sleeping', 'asleep');
      await waitAgent(h, 'ps-awake', (a) => a.taskStatus === 'Complete', 'done');
    });

    it('create_squad, get_squad, list_squads, add_squad_member and remove_squad_member', async () => {
      expect(await sdk.ok('create_squad', ['peer-squad', [member('ps-1'), member('ps-2')]])).to.equal(null); // 201, as create_agent
      const s = await sdk.ok('get_squad', ['peer-squad']);
      expect(s.members.map((m: { name: string }) => m.name)).to.deep.equal(['ps-1', 'ps-2']);
      expect(s.orphanTTL).to.equal('10m');
      expect((await sdk.ok('list_squads')).squads.map((x: { name: string }) => x.name)).to.include('peer-squad');
      const added = await sdk.ok('add_squad_member', ['peer-squad'], { ref: model('V1alpha1KomputerSquadMemberRef', { name: 'ps-3' }) });
      expect(added.members.map((m: { name: string }) => m.name)).to.deep.equal(['ps-1', 'ps-2', 'ps-3']);
      const removed = await sdk.ok('remove_squad_member', ['peer-squad', 'ps-3']);
      expect(removed.members.map((m: { name: string }) => m.name)).to.deep.equal(['ps-1', 'ps-2']);
    });

    it('patch_squad replaces the member list with the admission rules of add and remove, and sets orphanTTL', async () => {
      // An awake agent cannot join: the same refusal by PATCH as by add.
      const byAdd = await sdk.refused('add_squad_member', ['peer-squad'], { ref: model('V1alpha1KomputerSquadMemberRef', { name: 'ps-awake' }) });
      const byPatch = await sdk.refused('patch_squad', ['peer-squad'], { members: [member('ps-1'), member('ps-2'), member('ps-awake')] });
      expect(byPatch.status).to.equal(409);
      expect(byPatch.body).to.deep.equal(byAdd.body);
      expect(errorOf(byPatch)).to.contain('must be asleep in order to team up');
      expect((await getSquad(h, 'peer-squad'))!.members.map((m) => m.name)).to.deep.equal(['ps-1', 'ps-2']);

      const grown = await sdk.ok('patch_squad', ['peer-squad'], { members: [member('ps-1'), member('ps-2'), member('ps-3')] });
      expect(grown.members.map((m: { name: string }) => m.name)).to.deep.equal(['ps-1', 'ps-2', 'ps-3']);
      const shrunk = await sdk.ok('patch_squad', ['peer-squad'], { members: [member('ps-1'), member('ps-3')] });
      expect(shrunk.members.map((m: { name: string }) => m.name)).to.deep.equal(['ps-1', 'ps-3']);
      // ps-2 left: its claim is released, so another squad may take it.
      await waitAgent(h, 'ps-2', (a) => a.status === 'Sleeping', 'asleep, solo');
      expect(
        await sdk.ok('create_squad', [
          'peer-squad-2',
          [member('ps-2'), model('V1alpha1KomputerSquadMember', { name: 'ps-new', spec: { instructions: '@say new member' } })],
        ]),
      ).to.equal(null);

      const ttl = await sdk.ok('patch_squad', ['peer-squad'], { orphan_ttl: '30m' });
      expect(ttl).to.include({ orphanTTL: '30m' });
      expect(ttl.members.map((m: { name: string }) => m.name)).to.deep.equal(['ps-1', 'ps-3']);

      const badTtl = await sdk.refused('patch_squad', ['peer-squad'], { orphan_ttl: 'soon' });
      expect(badTtl.status).to.equal(400);
      expect(badTtl.body.details.causes[0]).to.include({ field: 'orphanTTL' });
      const twice = await sdk.refused('patch_squad', ['peer-squad'], { members: [member('ps-1'), member('ps-1')] });
      expect(twice.status).to.equal(400);
      expect(errorOf(twice)).to.contain('listed twice');
      const empty = await sdk.refused('patch_squad', ['peer-squad']);
      expect(empty.status).to.equal(400);
      expect(empty.body.details.causes[0]).to.include({ message: 'must set at least one field' });
      expect((await sdk.refused('patch_squad', ['peer-nosquad'], { orphan_ttl: '1m' })).status).to.equal(404);

      // The aggregated API refuses the awake agent in the same words.
      const k = await h.api('PATCH', `${AGG}/squads/peer-squad`, { spec: { members: [{ ref: { name: 'ps-1' } }, { ref: { name: 'ps-awake' } }] } }, MERGE_CT);
      expect(k.status, k.text).to.equal(409);
      expect(k.body.message).to.contain(errorOf(byPatch));
    });

    it('break_up_squad, then no new members (PATCH either), and delete_squad', async () => {
      const b = await sdk.ok('break_up_squad', ['peer-squad']);
      expect(b.breakUpRequested).to.equal(true);
      const late = await sdk.refused('patch_squad', ['peer-squad'], { members: [member('ps-1'), member('ps-3'), member('ps-awake')] });
      // Breaking up takes no new members (409), until the squad is gone (404) once its members are solo again.
      expect(late.status).to.be.oneOf([409, 404]);
      if (late.status === 409) expect(errorOf(late)).to.contain('is breaking up and takes no new members');
      await waitSquad(h, 'peer-squad', (x) => x === undefined, 'broken up');
      for (const n of ['ps-1', 'ps-3']) expect((await sdk.ok('get_agent', [n])).status).to.equal('Sleeping');
      const d = await sdk.ok('delete_squad', ['peer-squad-2']);
      expect(d).to.include({ name: 'peer-squad-2' });
      await waitSquad(h, 'peer-squad-2', (x) => x === undefined, 'deleted');
    });
  });

  describe('connectors and secrets', () => {
    it('create_secret (and again, which the SDK turns into update_secret), list_secrets, delete_secret', async () => {
      const s = await sdk.ok('create_secret', ['peer-bearer', { token: 'peer-bearer-token' }]);
      expect(s).to.include({ name: 'peer-bearer', namespace: 'default' });
      expect(s.keys).to.deep.equal(['token']);
      const again = await sdk.ok('create_secret', ['peer-bearer', { token: 'peer-bearer-token', other: 'x' }]); // 409 -> PATCH
      expect(again).to.include({ name: 'peer-bearer' });
      expect((await sdk.ok('list_secrets')).secrets.find((x: { name: string }) => x.name === 'peer-bearer').keys).to.have.members(['token', 'other']);
      await sdk.ok('create_secret', ['peer-gone', { k: 'v' }]);
      expect(await sdk.ok('delete_secret', ['peer-gone'])).to.include({ name: 'peer-gone' });
      expect((await sdk.refused('delete_secret', ['peer-gone'])).status).to.equal(404);
    });

    it('authType "token" is the bearer form: the MCP server gets Authorization: Bearer <token>', async () => {
      const c = await sdk.ok('create_connector', ['peer-bearer', 'echo', bearerMcp.url], {
        auth_type: 'token',
        auth_secret_name: 'peer-bearer',
        auth_secret_key: 'token',
        display_name: 'Peer echo',
      });
      expect(c).to.include({ name: 'peer-bearer', authType: 'bearer', service: 'echo', displayName: 'Peer echo' });
      const tools = await sdk.ok('list_connector_tools', ['peer-bearer']);
      expect(tools.tools.map((t: { name: string }) => t.name)).to.deep.equal(['echo']);
      expect(bearerMcp.tokensSeen).to.include('peer-bearer-token');
      expect(await sdk.ok('get_connector', ['peer-bearer'])).to.include({ name: 'peer-bearer', url: bearerMcp.url });
      expect((await sdk.ok('list_connectors')).connectors.map((x: { name: string }) => x.name)).to.include('peer-bearer');
    });

    it('authType "header" sends the token in the named header; without headerName it is 400 naming the field', async () => {
      await sdk.ok('create_secret', ['peer-header', { key: 'peer-header-token' }]);
      const c = await sdk.ok('connectors.create_connector', [
        model('CreateConnectorRequest', {
          name: 'peer-header',
          service: 'echo',
          url: headerMcp.url,
          authType: 'header',
          headerName: 'X-Api-Key',
          authSecretName: 'peer-header',
          authSecretKey: 'key',
        }),
      ]);
      expect(c).to.include({ name: 'peer-header', authType: 'header', headerName: 'X-Api-Key' });
      expect((await sdk.ok('list_connector_tools', ['peer-header'])).tools).to.have.length(1);
      expect(headerMcp.tokensSeen).to.include('peer-header-token');

      const noName = await sdk.refused('create_connector', ['peer-header-2', 'echo', headerMcp.url], {
        auth_type: 'header',
        auth_secret_name: 'peer-header',
        auth_secret_key: 'key',
      });
      expect(noName.status).to.equal(400);
      expect(noName.body.details.causes).to.deep.include({ field: 'headerName', message: 'is required when authType is "header"' });
    });

    it('authType "oauth" (and its client id) is a 400 saying it is not supported, on REST and the aggregated API', async () => {
      const r = await sdk.refused('create_connector', ['peer-oauth', 'github', 'https://mcp.example.com/mcp'], { auth_type: 'oauth' });
      expect(r.status).to.equal(400);
      expect(r.body.details.causes).to.have.length(1);
      expect(r.body.details.causes[0].field).to.equal('authType');
      expect(r.body.details.causes[0].message).to.contain('"oauth", which agentplane does not support yet');
      const id = await sdk.refused('create_connector', ['peer-oauth', 'github', 'https://mcp.example.com/mcp'], {
        oauth_client_id: 'id',
        oauth_client_secret: 'secret',
      });
      expect(id.status).to.equal(400);
      expect(id.body.details.causes.map((c: { field: string }) => c.field)).to.have.members(['oauthClientId', 'oauthClientSecret']);
      expect(id.body.details.causes[0].message).to.contain('OAuth connectors are not supported yet');
      const k = await h.api('POST', `${AGG}/connectors`, {
        apiVersion: 'agentplane.io/v1alpha1',
        kind: 'Connector',
        metadata: { name: 'peer-oauth-k' },
        spec: { url: 'https://mcp.example.com/mcp', authType: 'oauth' },
      });
      expect(k.status, k.text).to.equal(422);
      expect(k.body.message).to.contain('"oauth", which agentplane does not support yet');
    });

    it('update_connector and list_connector_templates are refused naming what is not supported; delete_connector deletes', async () => {
      const u = await sdk.refused('update_connector', ['peer-bearer', 'new-token']);
      expect(u.status).to.equal(405);
      expect(errorOf(u)).to.contain('agentplane does not support updating a connector');
      const t = await sdk.refused('list_connector_templates');
      expect(t.status).to.equal(404);
      expect(errorOf(t)).to.contain('agentplane does not support connector templates');
      expect(await sdk.ok('delete_connector', ['peer-header'])).to.include({ name: 'peer-header' });
      expect((await sdk.refused('get_connector', ['peer-header'])).status).to.equal(404);
    });
  });
});
