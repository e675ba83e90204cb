// GET /api/v1/agents/{name}/files on a real embedded server: a real agent writes its workspace
// through its tools, then the endpoint lists and reads it, and refuses every way out of it
// (`..`, symbolic links to the data directory or /etc, links swapped in for directories).

import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { expect } from 'chai';

import { WORKSPACE_FILE_MAX_BYTES } from '../../pkg/api/workspace.js';
import { EventClient, type Harness, startHarness } from '../support/harness.js';

describe('workspace files endpoint (integration)', function () {
  this.timeout(90_000);
  let h: Harness;
  let workspace: string;
  const files = (query: string, ns = ''): Promise<{ status: number; body: any }> => h.api('GET', `/api/v1/agents/writer/files?${ns}${query}`);

  before(async () => {
    h = await startHarness();
    const r = await h.api('POST', '/api/v1/agents', {
      name: 'writer',
      instructions: '@write notes/plan.md # Plan\\nstep one\n@write top.txt hello\n@say written',
    });
    expect(r.status).to.equal(201);
    const ws = new EventClient(`${h.url}/api/v1/agents/writer/ws`);
    await ws.untilTaskEnd(1);
    ws.close();
    workspace = h.server.local!.workspace({ namespace: 'default', name: 'writer' });
    // What an agent could plant: links out of its workspace, and one that stays inside.
    symlinkSync(h.dataDir, join(workspace, 'data-link'));
    symlinkSync('/etc/passwd', join(workspace, 'passwd-link'));
    symlinkSync('notes', join(workspace, 'notes-link'));
    symlinkSync('loop-b', join(workspace, 'loop-a'));
    symlinkSync('loop-a', join(workspace, 'loop-b'));
    mkdirSync(join(workspace, 'big'));
    writeFileSync(join(workspace, 'big', 'large.txt'), 'x'.repeat(WORKSPACE_FILE_MAX_BYTES + 10));
    writeFileSync(join(workspace, 'big', 'blob.bin'), Buffer.from([1, 0, 2, 0, 3]));
  });
  after(async () => h?.close());

  it("lists the workspace's root, sorted, with types and sizes", async () => {
    const r = await files('');
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(r.body).to.include({ agent: 'writer', namespace: 'default', path: '', type: 'directory', truncated: false });
    const byName = Object.fromEntries((r.body.entries as { name: string }[]).map((e) => [e.name, e]));
    expect(byName['top.txt']).to.deep.equal({ name: 'top.txt', type: 'file', size: 5 });
    expect(byName.notes).to.deep.equal({ name: 'notes', type: 'directory' });
    expect(byName['data-link']).to.deep.equal({ name: 'data-link', type: 'symlink' });
    const names = (r.body.entries as { name: string }[]).map((e) => e.name);
    expect(names).to.deep.equal([...names].sort());
  });

  it('reads a file the agent wrote, and a directory below the root', async () => {
    const f = await files('path=notes/plan.md');
    expect(f.status).to.equal(200);
    expect(f.body).to.deep.include({ path: 'notes/plan.md', type: 'file', content: '# Plan\nstep one', binary: false, truncated: false });
    const d = await files('path=/notes/');
    expect(d.body).to.deep.include({ path: 'notes', type: 'directory' });
    expect(d.body.entries.map((e: { name: string }) => e.name)).to.deep.equal(['plan.md']);
  });

  it('follows a link that stays inside the workspace', async () => {
    const r = await files('path=notes-link/plan.md');
    expect(r.status).to.equal(200);
    expect(r.body.content).to.contain('step one');
  });

  it('refuses ".." with 400 naming the path field', async () => {
    for (const p of ['..', '../writer/top.txt', 'notes/../../x', '%2e%2e/x']) {
      const r = await files(`path=${p}`);
      expect(r.status, p).to.equal(400);
      expect(r.body.reason).to.equal('BadRequest');
      expect(r.body.details.causes[0].field).to.equal('path');
    }
  });

  it('refuses symbolic links that lead out of the workspace (the data directory, /etc)', async () => {
    for (const p of ['data-link', 'data-link/state.db', 'passwd-link']) {
      const r = await files(`path=${p}`);
      expect(r.status, `${p}: ${JSON.stringify(r.body)}`).to.be.oneOf([400, 404]);
      expect(JSON.stringify(r.body)).to.not.contain('root:');
    }
    const direct = await files('path=passwd-link');
    expect(direct.status).to.equal(400);
    expect(direct.body.error).to.contain('outside the workspace');
  });

  it('caps a large file and marks it truncated; says binary for a file with NUL bytes', async () => {
    const large = await files('path=big/large.txt');
    expect(large.body).to.include({ type: 'file', size: WORKSPACE_FILE_MAX_BYTES + 10, truncated: true });
    expect(large.body.content).to.have.length(WORKSPACE_FILE_MAX_BYTES);
    const blob = await files('path=big/blob.bin');
    expect(blob.body).to.include({ type: 'file', binary: true, content: '', size: 5 });
  });

  it('answers 404 for a missing path and an unknown agent; 400 for a bad namespace, an over-long name, a link loop', async () => {
    const missing = await files('path=nope.txt');
    expect(missing.status).to.equal(404);
    expect(missing.body.reason).to.equal('NotFound');
    const ghost = await h.api('GET', '/api/v1/agents/ghost/files');
    expect(ghost.status).to.equal(404);
    expect(ghost.body.error).to.contain('ghost');
    expect((await files('', 'namespace=Bad_NS&')).status).to.equal(400);
    expect((await files('path=a&path=b')).status).to.equal(400);
    // Names the file system refuses are the client's mistake, not the server's.
    expect((await files(`path=${'a'.repeat(300)}`)).status).to.equal(400);
    // Deeper than PATH_MAX: its first missing directory answers first.
    expect((await files(`path=${'abcdefgh/'.repeat(600)}`)).status).to.be.oneOf([400, 404]);
    const loop = await files('path=loop-a');
    expect(loop.status).to.equal(400);
    expect(loop.body.error).to.contain('loop');
  });

  it('lists the workspace of an agent in another namespace only there', async () => {
    expect((await files('', 'namespace=team-x&')).status).to.equal(404);
  });
});
