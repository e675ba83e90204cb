// The serve flags are declared once (cmd/agentplane/serve-flags.ts): README.md's "Serve flags"
// names every one, the docs' flag tables name only declared ones, and --help lists each with its
// variable and config key. So adding, renaming or dropping a flag fails here until the docs follow.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { lookup } from '../../cmd/agentplane/flag.js';
import { SERVE_FLAG_LIST, SERVE_FLAGS } from '../../cmd/agentplane/serve-flags.js';
import { serveHelp } from '../../cmd/agentplane/serve-help.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const read = (file: string): string => readFileSync(join(REPO, file), 'utf8');

/** The flags a text names, as `--name` (a `--no-<boolean>` counts as its flag). */
function flagsIn(text: string): Set<string> {
  const booleans = new Set(SERVE_FLAG_LIST.filter((f) => f.type === 'boolean').map((f) => f.name));
  const names = [...text.matchAll(/(?<![\w-])--([a-z][a-z0-9-]*[a-z0-9])/g)].map((m) => m[1]);
  return new Set(names.map((n) => (n.startsWith('no-') && booleans.has(n.slice(3)) ? n.slice(3) : n)));
}

function section(markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n${heading}\n`);
  expect(start, `README.md has no "${heading}" section`).to.be.greaterThan(-1);
  const end = markdown.indexOf('\n## ', start + 1);
  return markdown.slice(start, end === -1 ? undefined : end);
}

describe('serve flags: declared once, documented from the declaration', () => {
  const declared = new Set(SERVE_FLAG_LIST.map((f) => f.name));

  it('README.md "## Serve flags" names every declared flag, and no other', () => {
    const named = flagsIn(section(read('README.md'), '## Serve flags'));
    const missing = [...declared].filter((n) => !named.has(n));
    const unknown = [...named].filter((n) => !declared.has(n) && n !== 'help');
    expect(missing, 'declared flags README.md "Serve flags" does not name').to.deep.equal([]);
    expect(unknown, 'flags README.md "Serve flags" names that serve does not take').to.deep.equal([]);
  });

  it('every docs table that lists serve flags names only declared ones', () => {
    const docs = readdirSync(join(REPO, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`);
    // The tables of serve flags: those in pages that name --events-per-agent, a serve-only flag.
    const pages = docs.filter((f) => read(f).includes('--events-per-agent'));
    expect(pages.length, 'no docs page names --events-per-agent').to.be.greaterThan(0);
    for (const page of pages) {
      const rows = read(page)
        .split('\n')
        .filter((l) => l.startsWith('|'))
        .join('\n');
      const unknown = [...flagsIn(rows.replace(/[^`]*(`[^`]*`)?/g, '$1'))].filter((n) => !declared.has(n));
      expect(unknown, `${page}: table cells naming flags serve does not take`).to.deep.equal([]);
    }
  });

  it('--help lists every flag with its environment variable and config key', () => {
    const help = serveHelp();
    for (const f of SERVE_FLAG_LIST) {
      expect(help, `--${f.name}`).to.match(new RegExp(`^  --${f.name}\\b`, 'm'));
      if (f.env) expect(help.replace(/\s+/g, ' '), `${f.name}: ${f.env}`).to.include(f.env);
      if (f.config) expect(help.replace(/\s+/g, ' '), `${f.name}: config "${f.config}"`).to.include(`config "${f.config}"`);
    }
  });

  it('looks a flag up in the flag, the environment, the config file, then the default', () => {
    const src = (values: Record<string, string>, env: Record<string, string>, config: Record<string, unknown>) => ({ values, env, config });
    expect(lookup(SERVE_FLAGS.eventsPerAgent, src({ 'events-per-agent': '5' }, { AGENTPLANE_EVENTS_PER_AGENT: '6' }, { eventsPerAgent: 7 }))).to.equal(5);
    expect(lookup(SERVE_FLAGS.eventsPerAgent, src({}, { AGENTPLANE_EVENTS_PER_AGENT: '6' }, { eventsPerAgent: 7 }))).to.equal(6);
    expect(lookup(SERVE_FLAGS.eventsPerAgent, src({}, {}, { eventsPerAgent: 7 }))).to.equal(7);
    expect(lookup(SERVE_FLAGS.eventsPerAgent, src({}, {}, {}))).to.equal(undefined);
    expect(lookup(SERVE_FLAGS.port, src({}, {}, {}))).to.equal(8080);
    expect(lookup(SERVE_FLAGS.oidcClientId, src({}, {}, { oidc: { clientId: 'c' } }))).to.equal('c');
    expect(lookup(SERVE_FLAGS.workerNiceness, src({}, { AGENTPLANE_WORKER_NICENESS: '0' }, {}))).to.equal(0);
    expect(lookup(SERVE_FLAGS.workerNiceness, src({}, {}, { workerNiceness: 19 }))).to.equal(19);
    expect(() => lookup(SERVE_FLAGS.workerNiceness, src({ 'worker-niceness': '20' }, {}, {}))).to.throw(
      '--worker-niceness must be a whole number from 0 to 19, got "20"',
    );
    expect(() => lookup(SERVE_FLAGS.rateLimitBurst, src({ 'rate-limit-burst': '0' }, {}, {}))).to.throw(
      '--rate-limit-burst must be a whole number of at least 1, got "0"',
    );
  });
});
