// Every relative link in README.md and docs/ leads to a file of the repository: a file moved or
// renamed without its docs fails here, not in a reader's browser.

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';

const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../..');
const DOCS = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => join('docs', f)),
];

/** The targets of a document's markdown links that are paths in the repository. */
function localLinks(doc: string): string[] {
  const text = readFileSync(join(ROOT, doc), 'utf8').replace(/```[\s\S]*?```/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1].split('#')[0]).filter((t) => t && !/^[a-z][a-z0-9+.-]*:/i.test(t));
}

describe('documentation links', () => {
  it('finds links to check', () => {
    expect(localLinks('docs/architecture.md').length).to.be.greaterThan(20);
  });

  for (const doc of DOCS) {
    it(`${doc}: every relative link leads to a file or folder`, () => {
      const broken = localLinks(doc).filter((t) => !existsSync(resolve(ROOT, dirname(doc), decodeURIComponent(t))));
      expect(broken).to.deep.equal([]);
    });
  }
});
