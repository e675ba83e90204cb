// The committed clients (clients/) are what hack/gen-clients.sh makes from the server's OpenAPI
// document today: regenerated into a scratch dir, every generated file must be the same, so the
// clients never drift from the API (a change to the API fails here until they are regenerated).
// And every operation of the document is in both clients.

import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { buildOpenApi } from '../../pkg/api/openapi.js';
import { REPO } from '../support/python-client.js';

const run = promisify(execFile);
/** The Python package's hand-written files (hack/gen-clients.sh keeps them). */
const HAND_WRITTEN = new Set(['events.py']);

function tree(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => f !== '__pycache__' && !HAND_WRITTEN.has(f))
    .flatMap((f) => (statSync(join(dir, f)).isDirectory() ? tree(join(dir, f)).map((g) => join(f, g)) : [f]))
    .sort();
}

const snake = (id: string): string => id.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

describe('typed clients: generated from the OpenAPI document, never drifting', function () {
  this.timeout(600_000); // a first run installs openapi-python-client from PyPI
  let out: string;

  before(async () => {
    out = mkdtempSync(join(tmpdir(), 'agentplane-gen-clients-'));
    await run('bash', [join(REPO, 'hack/gen-clients.sh'), out], { timeout: 540_000 });
  });
  after(() => out && rmSync(out, { recursive: true, force: true }));

  it('the TypeScript types are what openapi-typescript makes now', () => {
    const fresh = readFileSync(join(out, 'typescript/src/schema.ts'), 'utf8');
    const committed = readFileSync(join(REPO, 'clients/typescript/src/schema.ts'), 'utf8');
    expect(fresh === committed, 'clients/typescript/src/schema.ts is stale: run make build && bash hack/gen-clients.sh').to.equal(true);
  });

  it('the Python package is what openapi-python-client makes now, file for file', () => {
    const freshDir = join(out, 'python/agentplane_client');
    const committedDir = join(REPO, 'clients/python/agentplane_client');
    const fresh = tree(freshDir);
    expect(tree(committedDir), 'files of clients/python/agentplane_client').to.deep.equal(fresh);
    const stale = fresh.filter((f) => readFileSync(join(freshDir, f), 'utf8') !== readFileSync(join(committedDir, f), 'utf8'));
    expect(stale, 'stale generated files: run make build && bash hack/gen-clients.sh').to.deep.equal([]);
  });

  it('every operation of the document is in both clients', () => {
    const doc = buildOpenApi();
    const ids = Object.values(doc.paths).flatMap((item) =>
      (['get', 'put', 'post', 'patch', 'delete'] as const).flatMap((m) => (item?.[m]?.operationId ? [item[m].operationId] : [])),
    );
    expect(ids.length).to.be.greaterThan(70);
    const schema = readFileSync(join(REPO, 'clients/typescript/src/schema.ts'), 'utf8');
    const missingTs = ids.filter((id) => !schema.includes(`\n    ${id}: {`));
    const missingPy = ids.filter((id) => !existsSync(join(REPO, 'clients/python/agentplane_client/api/default', `${snake(id)}.py`)));
    expect({ missingTs, missingPy }).to.deep.equal({ missingTs: [], missingPy: [] });
  });
});
