// One list of what a fresh Debian or Ubuntu machine needs (hack/prerequisites.txt): the README's
// set-up shows it, one `apt-get install -y` line per make target in the list's order, and .ci/run
// installs it and nothing else.

import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { expect } from 'chai';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const read = (file: string): string => readFileSync(join(REPO, file), 'utf8');

interface Prerequisite {
  target: string;
  pkg: string;
  check: string;
}

function prerequisites(): Prerequisite[] {
  return read('hack/prerequisites.txt')
    .split('\n')
    .filter((l) => l.trim() !== '' && !l.trim().startsWith('#'))
    .map((l) => {
      const m = /^\s*(\S+)\s+(\S+)\s+(.+?)\s*$/.exec(l);
      expect(m, `hack/prerequisites.txt: "${l}" is not "<target> <package> <check>"`).to.not.equal(null);
      return { target: m![1], pkg: m![2], check: m![3] };
    });
}

/** The list as the README's lines: "# make <target>" then "apt-get install -y <packages>". */
function expectedLines(list: Prerequisite[]): string[] {
  const targets = [...new Set(list.map((p) => p.target))];
  return targets.flatMap((t) => [
    `# make ${t}`,
    `apt-get install -y ${list
      .filter((p) => p.target === t)
      .map((p) => p.pkg)
      .join(' ')}`,
  ]);
}

describe('prerequisites: hack/prerequisites.txt, the README and .ci/run', () => {
  it('lists Debian packages for make targets that exist, each with a check bash can parse', () => {
    const list = prerequisites();
    expect(list.length).to.be.greaterThan(0);
    const makefile = read('Makefile');
    for (const p of list) {
      expect(makefile, `no make target ${p.target}`).to.match(new RegExp(`^${p.target.replace(/[-]/g, '\\-')}:`, 'm'));
      expect(p.pkg, 'a Debian package name').to.match(/^[a-z0-9][a-z0-9+.-]+$/);
      const syntax = spawnSync('bash', ['-n', '-c', p.check], { encoding: 'utf8' });
      expect(syntax.status, `${p.pkg}: ${p.check}: ${syntax.stderr}`).to.equal(0);
    }
    const pkgs = list.map((p) => p.pkg);
    expect(
      pkgs.filter((p, i) => pkgs.indexOf(p) !== i),
      'listed twice',
    ).to.deep.equal([]);
  });

  it("the README's set-up shows exactly the list, one install line per target", () => {
    const readme = read('README.md');
    const setUp = /^## Set up\n([\s\S]*?)^## /m.exec(readme)?.[1] ?? '';
    const shown = setUp.split('\n').filter((l) => /^# make \S+$/.test(l) || /^apt-get install\b/.test(l));
    const want = expectedLines(prerequisites());
    expect(shown, `README.md "Set up" should show, in a sh block:\n${want.join('\n')}\n`).to.deep.equal(want);
  });

  it('.ci/run installs what the list says is missing, and nothing else', () => {
    const ci = read('.ci/run');
    const installs = ci.split('\n').filter((l) => /apt-get\s+install/.test(l));
    expect(installs.length).to.equal(1);
    expect(installs[0]).to.match(/apt-get install -y -qq \$missing >\/dev\/null/);
    // Its reading of the list, run on a list of our own: comments, blank lines, checks of several words.
    const reader = /^missing=\$\([\s\S]*?^done\)$/m.exec(ci)?.[0];
    expect(reader, '.ci/run sets $missing from the list').to.be.a('string');
    expect(reader).to.contain('hack/prerequisites.txt');
    const dir = mkdtempSync(join(tmpdir(), 'agentplane-prereq-'));
    try {
      mkdirSync(join(dir, 'hack'));
      writeFileSync(
        join(dir, 'hack/prerequisites.txt'),
        // A check that reads stdin must not eat the next line of the list.
        '# comment\n\nrun  present   test -d /\nrun  quiet  read -r x\n  # indented comment\ntest absent    test -e /no/such/file\ntest-pods  two-words  command -v no-such-command-here\n',
      );
      const r = spawnSync('bash', ['-c', `${reader}\nprintf '%s' "$missing"`], { cwd: dir, encoding: 'utf8', input: 'stdin is not for the checks\n' });
      expect(r.status, r.stderr).to.equal(0);
      expect(r.stdout).to.equal(' quiet absent two-words');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
