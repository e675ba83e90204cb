// Skills and memories (docs/skills-and-memories.md) with real workers, the real engine and the
// scripted model: a skill's SKILL.md reaches the engine (the model is told of it), a memory one
// task writes through its tool is what the next task reads, an update of a skill reaches the
// next task, and the workspace copies are read-only to the agent's tools.

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import type { AgentEvent } from '../../pkg/api/event.js';
import { EventClient, type Harness, startHarness } from '../support/harness.js';
import { cliFor } from '../support/cli.js';

const APIS = '/apis/agentplane.io/v1alpha1/namespaces/default';

const skillMd = (name: string, description: string, body = 'Follow the checklist in checklist.md.'): string =>
  `---\nname: ${name}\ndescription: ${description}\n---\n\n# ${name}\n\n${body}\n`;

const skillObject = (name: string, files: Record<string, string>, rv?: string) => ({
  apiVersion: 'agentplane.io/v1alpha1',
  kind: 'Skill',
  metadata: { name, ...(rv ? { resourceVersion: rv } : {}) },
  spec: { files },
});

const memoryObject = (name: string, text: string, description?: string) => ({
  apiVersion: 'agentplane.io/v1alpha1',
  kind: 'Memory',
  metadata: { name },
  spec: { text, ...(description ? { description } : {}) },
});

const resultOf = (evs: AgentEvent[], tool: string): string[] =>
  evs.filter((e) => e.type === 'tool_result' && (e.payload as { tool: string }).tool === tool).map((e) => (e.payload as { output: string }).output);

describe('skills and memories (integration)', function () {
  this.timeout(240_000);
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h?.close();
  });

  /** Sends a task and waits for its end (longer than the shared helper: a new agent's first task on a loaded machine). */
  async function runTask(_h: Harness, name: string, instructions: string, ns = 'default', fields: Record<string, unknown> = {}): Promise<AgentEvent[]> {
    const r = await h.api('POST', '/api/v1/agents', { name, namespace: ns, instructions, ...fields });
    expect([200, 201], JSON.stringify(r.body)).to.include(r.status);
    const ws = new EventClient(`${h.url}/api/v1/agents/${name}/ws?namespace=${ns}`);
    try {
      return await ws.until((evs) => evs.some((e) => ['task_completed', 'task_cancelled', 'error'].includes(e.type)), 120_000);
    } finally {
      ws.close();
    }
  }

  /** What the engine told the model besides the prompts (reminders, tool descriptions), in requests since `from`. */
  const notesSince = (from: number): string =>
    h.model.requests
      .slice(from)
      .flatMap((r) => r.notes)
      .join('\n');

  it('a skill reaches the engine: the model is told its name and description', async () => {
    const s = await h.api(
      'POST',
      `${APIS}/skills`,
      skillObject('review', { 'SKILL.md': skillMd('review', 'Use when reviewing diffs MARKER-REVIEW-ONE'), 'checklist.md': '- tests\n' }),
    );
    expect(s.status, JSON.stringify(s.body)).to.equal(201);
    const from = h.model.requests.length;
    const evs = await runTask(h, 'reviewer', '@bash find .agentplane -type f | sort\n@say done', 'default', { skills: ['review'] });
    expect(evs.at(-1)!.type, JSON.stringify(evs)).to.equal('task_completed');
    const notes = notesSince(from);
    // The engine lists it among the skills of its Skill tool, as its plugin's (docs/skills-and-memories.md).
    expect(notes).to.match(/agentplane-skills:review: Use when reviewing diffs MARKER-REVIEW-ONE/);
    expect(resultOf(evs, 'Bash')[0]).to.contain('.agentplane/skills/skills/review/SKILL.md').and.contain('.agentplane/skills/skills/review/checklist.md');
  });

  it("a skill's update reaches the agent's next task", async () => {
    const cur = await h.api('GET', `${APIS}/skills/review`);
    const md = skillMd('review', 'Use when reviewing diffs MARKER-REVIEW-TWO');
    const put = await h.api('PUT', `${APIS}/skills/review`, skillObject('review', { 'SKILL.md': md }, cur.body.metadata.resourceVersion));
    expect(put.status, JSON.stringify(put.body)).to.equal(200);
    const from = h.model.requests.length;
    const evs = await runTask(h, 'reviewer', '@bash cat .agentplane/skills/skills/review/SKILL.md; ls .agentplane/skills/skills/review\n@say done');
    expect(evs.at(-1)!.type).to.equal('task_completed');
    const notes = notesSince(from);
    // (Earlier listings stay in the resumed conversation; the new one names the new description.)
    expect(notes).to.match(/agentplane-skills:review: Use when reviewing diffs MARKER-REVIEW-TWO/);
    const out = resultOf(evs, 'Bash')[0];
    expect(out).to.contain('MARKER-REVIEW-TWO');
    expect(out, 'the file the update removed is gone').not.to.match(/^checklist\.md$/m);
    expect(out).to.match(/^SKILL\.md$/m);
  });

  it('a memory written by one task through its tool is what the next task reads', async () => {
    const m = await h.api('POST', `${APIS}/memories`, memoryObject('team-notes', 'NOTE-ALPHA\n', 'what the team learned'));
    expect(m.status, JSON.stringify(m.body)).to.equal(201);
    const from = h.model.requests.length;
    const write = '@tool mcp__memory__memory_write {"name": "team-notes", "text": "NOTE-BETA: the build needs make twice"}';
    const first = await runTask(h, 'scribe', `@bash cat .agentplane/memories/team-notes.md\n${write}\n@say noted`, 'default', { memories: ['team-notes'] });
    expect(first.at(-1)!.type, JSON.stringify(first)).to.equal('task_completed');
    expect(resultOf(first, 'Bash')[0]).to.contain('NOTE-ALPHA');
    const wrote = resultOf(first, 'mcp__memory__memory_write')[0];
    expect(wrote).to.match(/memory "team-notes" written/);
    // The system prompt names the memory and its file.
    const sys = h.model.requests
      .slice(from)
      .map((r) => r.system)
      .join('\n');
    expect(sys).to.contain('team-notes: .agentplane/memories/team-notes.md (what the team learned)');
    const stored = await h.api('GET', `${APIS}/memories/team-notes`);
    expect(stored.body.spec.text).to.equal('NOTE-BETA: the build needs make twice');
    expect(stored.body.status.lastWriter).to.equal('agent scribe');

    // Another agent that attaches it reads the new text, from the file and from its tool.
    const second = await runTask(
      h,
      'reader',
      '@bash cat .agentplane/memories/team-notes.md\n@tool mcp__memory__memory_read {"name": "team-notes"}\n@say read',
      'default',
      {
        memories: ['team-notes'],
      },
    );
    expect(second.at(-1)!.type).to.equal('task_completed');
    expect(resultOf(second, 'Bash')[0]).to.contain('NOTE-BETA');
    expect(resultOf(second, 'mcp__memory__memory_read')[0]).to.contain('NOTE-BETA');
  });

  it("an agent's tool may not write a memory it has not attached", async () => {
    const other = await h.api('POST', `${APIS}/memories`, memoryObject('private-notes', 'SECRET-PLAN'));
    expect(other.status).to.equal(201);
    const evs = await runTask(h, 'scribe', '@tool mcp__memory__memory_write {"name": "private-notes", "text": "overwritten"}\n@say tried');
    const out = resultOf(evs, 'mcp__memory__memory_write')[0];
    expect(out).to.contain('not attached to this agent');
    expect((await h.api('GET', `${APIS}/memories/private-notes`)).body.spec.text).to.equal('SECRET-PLAN');
  });

  it("the workspace copies are read-only to the agent's tools", async () => {
    const evs = await runTask(
      h,
      'scribe',
      [
        '@bash echo tampered >> .agentplane/memories/team-notes.md; echo "append rc=$?"; echo planted > .agentplane/memories/planted.md; echo "create rc=$?"',
        '@write .agentplane/memories/team-notes.md tampered',
        '@say tried',
      ].join('\n'),
    );
    const bash = resultOf(evs, 'Bash')[0];
    expect(bash).to.match(/Permission denied/);
    expect(bash).to.contain('append rc=1').and.contain('create rc=1');
    const write = evs.find((e) => e.type === 'tool_result' && (e.payload as { tool: string }).tool === 'Write')!.payload as { isError: boolean };
    expect(write.isError).to.equal(true);
    expect((await h.api('GET', `${APIS}/memories/team-notes`)).body.spec.text).to.equal('NOTE-BETA: the build needs make twice');
    // A chmod gets past it, for this copy only: the next task starts from the server's copy.
    await runTask(h, 'scribe', '@bash chmod u+w .agentplane/memories && echo planted > .agentplane/memories/planted.md\n@say planted');
    const next = await runTask(h, 'scribe', '@bash ls -A .agentplane/memories\n@say looked');
    expect(resultOf(next, 'Bash')[0]).to.equal('team-notes.md');
    // The workspace, read-only directories and all, is removed with the agent.
    expect((await h.api('DELETE', '/api/v1/agents/scribe')).status).to.equal(200);
  });

  it('the REST mirror creates, lists, gets, patches and deletes skills and memories', async () => {
    const md = skillMd('lint', 'Use before committing');
    const c = await h.api('POST', '/api/v1/skills', { name: 'lint', files: { 'SKILL.md': md, 'rules/eslint.md': 'no any' } });
    expect(c.status, c.text).to.equal(201);
    expect(c.body).to.include({ name: 'lint', namespace: 'default', description: 'Use before committing' });
    expect(c.body.files).to.deep.equal({ 'SKILL.md': md, 'rules/eslint.md': 'no any' });
    const list = await h.api('GET', '/api/v1/skills');
    expect(list.body.skills.map((x: { name: string }) => x.name)).to.include.members(['lint', 'review']);
    const p = await h.api('PATCH', '/api/v1/skills/lint', { description: 'Lint rules' });
    expect(p.status, p.text).to.equal(200);
    expect(p.body.description).to.equal('Lint rules');
    const bad = await h.api('PATCH', '/api/v1/skills/lint', { files: { 'SKILL.md': 'no frontmatter' } });
    expect(bad.status).to.equal(400);
    expect(bad.body.details.causes[0].field).to.equal('files["SKILL.md"]');

    const m = await h.api('POST', '/api/v1/memories', { name: 'rest-notes', text: 'one', description: 'notes' });
    expect(m.status, m.text).to.equal(201);
    expect(m.body).to.include({ name: 'rest-notes', text: 'one', description: 'notes' });
    const pm = await h.api('PATCH', '/api/v1/memories/rest-notes', { text: 'two', description: null });
    expect(pm.status, pm.text).to.equal(200);
    expect(pm.body.text).to.equal('two');
    expect(pm.body).not.to.have.property('description');
    expect((await h.api('GET', '/api/v1/memories/rest-notes')).body.text).to.equal('two');
    const attach = await h.api('PATCH', '/api/v1/agents/reviewer', { memories: ['rest-notes'], skills: [] });
    expect(attach.status, attach.text).to.equal(200);
    expect(attach.body.memories).to.deep.equal(['rest-notes']);
    expect(attach.body).not.to.have.property('skills');
    const d = await h.api('DELETE', '/api/v1/memories/rest-notes');
    expect(d.status).to.equal(200);
    expect((await h.api('GET', '/api/v1/memories/rest-notes')).status).to.equal(404);
    const big = await h.api('POST', '/api/v1/memories', { name: 'big', text: 'é'.repeat(40_000) });
    expect(big.status).to.equal(400);
    expect(big.body.details.causes[0]).to.include({ field: 'text' });
  });

  it('the CLI adds a skill from a directory, sets a memory, lists, gets and removes them', async () => {
    const cli = cliFor({ configDir: h.dataDir, server: h.url });
    const dir = join(h.dataDir, 'cli-skill');
    mkdirSync(join(dir, 'refs'), { recursive: true });
    writeFileSync(join(dir, 'SKILL.md'), skillMd('deploy', 'Use when shipping a release'));
    writeFileSync(join(dir, 'refs', 'steps.md'), '1. tag\n');
    const add = await cli('skill', 'add', dir);
    expect(add.code, add.stderr).to.equal(0);
    expect(add.stdout).to.contain('skill/deploy created (2 files)');
    expect((await h.api('GET', '/api/v1/skills/deploy')).body.files).to.have.keys('SKILL.md', 'refs/steps.md');
    const again = await cli('skill', 'add', join(dir, 'SKILL.md'));
    expect(again.stdout, again.stderr).to.contain('skill/deploy replaced (1 files)');
    const ls = await cli('skill', 'ls');
    expect(ls.stdout).to.match(/^NAME\s+DESCRIPTION\s+FILES\s+AGE/m);
    expect(ls.stdout).to.match(/^deploy\s+Use when shipping a release\s+1\s/m);
    expect((await cli('skill', 'get', 'deploy', '-o', 'yaml')).stdout).to.contain('name: deploy');
    const noMain = await cli('skill', 'add', join(dir, 'refs'));
    expect(noMain.code).to.equal(2);
    expect(noMain.stderr).to.contain('has no SKILL.md');

    expect((await cli('memory', 'set', 'cli-notes', '--text', 'first', '--description', 'from the CLI')).stdout).to.contain('memory/cli-notes created');
    expect((await cli('memory', 'set', 'cli-notes', '--text', 'second')).stdout).to.contain('memory/cli-notes updated');
    expect((await cli('memory', 'get', 'cli-notes')).stdout).to.equal('second\n');
    expect((await cli('memory', 'ls')).stdout).to.match(/^cli-notes\s+from the CLI\s+6\s/m);
    expect((await cli('memory', 'rm', 'cli-notes')).stdout).to.contain('memory/cli-notes deleted');
    expect((await cli('skill', 'rm', 'deploy')).stdout).to.contain('skill/deploy deleted');
    const gone = await cli('memory', 'get', 'cli-notes');
    expect(gone.code).to.not.equal(0);
    expect(gone.stderr).to.contain('not found');
  });

  it('refuses bad skills, memories and attachments, naming the field', async () => {
    const noMain = await h.api('POST', `${APIS}/skills`, skillObject('empty', { 'notes.md': 'x' }));
    expect(noMain.status).to.equal(422);
    expect(JSON.stringify(noMain.body)).to.contain('spec.files[\\"SKILL.md\\"]');
    const escape = await h.api('POST', `${APIS}/skills`, skillObject('escape', { 'SKILL.md': skillMd('escape', 'x'), '../evil.md': 'x' }));
    expect(escape.status).to.equal(422);
    expect(JSON.stringify(escape.body)).to.contain('the path must be a relative path');
    const misnamed = await h.api('POST', `${APIS}/skills`, skillObject('named', { 'SKILL.md': skillMd('other', 'x') }));
    expect(misnamed.status).to.equal(422);
    expect(JSON.stringify(misnamed.body)).to.contain('name: named');
    const noText = await h.api('POST', `${APIS}/memories`, { apiVersion: 'agentplane.io/v1alpha1', kind: 'Memory', metadata: { name: 'blank' }, spec: {} });
    expect(noText.status).to.equal(422);
    expect(JSON.stringify(noText.body)).to.contain('spec.text');
    const missing = await h.api('POST', '/api/v1/agents', { name: 'lost', instructions: '@say hi', skills: ['nope'], memories: ['none-such'] });
    expect(missing.status).to.equal(400);
    expect(JSON.stringify(missing.body)).to.contain('skill \\"nope\\" not found').and.contain('memory \\"none-such\\" not found');
  });
});
