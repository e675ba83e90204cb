// Skills and memories in the dashboard, in Chromium against a real embedded server: the page
// lists the namespace's skills (description, files) and memories (text, last writer), and a
// memory edited there is stored (docs/skills-and-memories.md).

import { expect } from 'chai';
import { eventually, shot, useDashboard } from '../support/browser.js';

describe('dashboard: skills and memories (integration)', function () {
  this.timeout(120_000);
  const d = useDashboard();

  it('lists skills and memories; a memory edited on the page is stored', async () => {
    const md = '---\nname: review\ndescription: Use when reviewing diffs\n---\nRead the diff.\n';
    expect((await d.h.api('POST', '/api/v1/skills', { name: 'review', files: { 'SKILL.md': md, 'checklist.md': '- tests' } })).status).to.equal(201);
    expect((await d.h.api('POST', '/api/v1/memories', { name: 'team-notes', text: 'first notes', description: 'what the team learned' })).status).to.equal(201);
    await d.page.goto(`${d.h.url}/ui/#/knowledge`);
    const skill = d.page.locator('[data-skill=review]');
    await skill.waitFor({ timeout: 20_000 });
    expect(await skill.textContent())
      .to.contain('Use when reviewing diffs')
      .and.contain('Files: SKILL.md, checklist.md');
    const memory = d.page.locator('[data-memory=team-notes]');
    expect(await memory.getByTestId('memory-text').textContent()).to.equal('first notes');
    expect(await memory.textContent()).to.contain('what the team learned');
    await shot(d.page, 'knowledge-01-list');

    await memory.getByRole('button', { name: 'Edit' }).click();
    await memory.locator('textarea[name=text]').fill('edited in the dashboard');
    await memory.getByRole('button', { name: 'Save' }).click();
    await eventually(
      async () => expect(await d.page.locator('[data-memory=team-notes]').getByTestId('memory-text').textContent()).to.equal('edited in the dashboard'),
      {
        timeoutMs: 20_000,
      },
    );
    expect((await d.h.api('GET', '/api/v1/memories/team-notes')).body.text).to.equal('edited in the dashboard');
    await shot(d.page, 'knowledge-02-edited');
    expect(d.errors).to.deep.equal([]);
  });
});
