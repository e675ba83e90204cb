// The local runtime's parts alone: a worker's command and environment (worker-env.ts) and its
// directories (workspaces.ts). The runtime at work is test/integration/runtime-local.test.ts.

import { mkdtempSync, mkdirSync, readlinkSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { NO_SANDBOX } from '../../pkg/runtime/local/sandbox.js';
import { clampNiceness, niced, WORKER_NICENESS, workerEnv, workerSecrets } from '../../pkg/runtime/local/worker-env.js';
import { Workspaces } from '../../pkg/runtime/local/workspaces.js';

describe('local runtime: a worker’s command and environment', () => {
  it('runs the command through nice(1) only when niced', () => {
    expect(niced(['node', 'w.js'], 10)).to.deep.equal(['nice', '-n', '10', 'node', 'w.js']);
    expect(niced(['node', 'w.js'], 0)).to.deep.equal(['node', 'w.js']);
    expect(clampNiceness(undefined)).to.equal(WORKER_NICENESS);
    expect(clampNiceness(40)).to.equal(19);
    expect(clampNiceness(-3)).to.equal(0);
  });

  it('puts no secret in the environment; a sandboxed worker reaches the server over its socket', () => {
    const spec = { ref: { namespace: 'ns', name: 'a' }, uid: 'u' };
    const tcp = workerEnv(spec, '/w', { socket: undefined, channelUrl: () => 'http://127.0.0.1:1', modelBaseUrl: 'http://127.0.0.1:1/model' });
    expect(tcp).to.include({
      AGENTPLANE_SERVER_URL: 'http://127.0.0.1:1',
      AGENTPLANE_SECRETS: 'ipc',
      AGENTPLANE_AGENT_NAME: 'a',
      ANTHROPIC_BASE_URL: 'http://127.0.0.1:1/model',
    });
    expect(Object.keys(tcp)).to.not.include.members(['ANTHROPIC_API_KEY', 'AGENTPLANE_AGENT_TOKEN']);
    const sock = workerEnv(undefined, '/w', { socket: '/s.sock', channelUrl: () => 'unused', modelBaseUrl: 'http://127.0.0.1:1/model' });
    expect(sock).to.include({ AGENTPLANE_SERVER_URL: 'http://agentplane', AGENTPLANE_SERVER_SOCKET: '/s.sock', ANTHROPIC_BASE_URL: 'http://agentplane/model' });
    expect(sock, 'a slot names no agent').to.not.have.property('AGENTPLANE_AGENT_NAME');
    expect(workerSecrets('t', 'k')).to.deep.equal({ AGENTPLANE_AGENT_TOKEN: 't', ANTHROPIC_API_KEY: 'k' });
  });
});

describe('local runtime: directories', () => {
  let dir: string;
  let ws: Workspaces;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'ap-ws-'));
    ws = new Workspaces(dir, () => NO_SANDBOX);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('runs a worker in its workspace, or in the slot directory its workspace links to', () => {
    const ref = { namespace: 'ns', name: 'a' };
    expect(ws.workspaceDir(ref)).to.equal(ws.workspace(ref));
    const slot = join(ws.poolDir, 'slot-1');
    mkdirSync(slot, { recursive: true });
    const b = { namespace: 'ns', name: 'b' };
    symlinkSync(slot, ws.workspace(b));
    expect(ws.workspaceDir(b)).to.equal(slot);
    expect([...ws.claimedSlotDirs()]).to.deep.equal([slot]);
  });

  it('links a group’s peers and drops the ones that left', () => {
    const g = ws.linkPeers('crew', 'ns', ['a', 'b']);
    expect(readlinkSync(join(g, 'a'))).to.equal(ws.workspace({ namespace: 'ns', name: 'a' }));
    ws.linkPeers('crew', 'ns', ['b']);
    expect(() => readlinkSync(join(g, 'a'))).to.throw();
  });
});
