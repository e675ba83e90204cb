// A hostile or broken module proxy serving the Go toolchain that builds the test cluster
// (hack/go.sh): whatever it serves besides the exact pinned module is refused, before anything
// is cached, and a zip that would write outside its directory is refused before it is unpacked.
// Real script, real curl and unzip, against a proxy on disk.

import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { expect } from 'chai';

import { fakeToolchain, GoShSandbox, PREFIX } from '../support/go-toolchain.js';
import type { ZipEntry } from '../support/zip.js';

describe('security: the Go toolchain fetched from the module proxy', function () {
  this.timeout(60_000);
  let box: GoShSandbox;
  beforeEach(() => {
    box = new GoShSandbox();
  });
  afterEach(() => box.close());

  const refused = (entries: ZipEntry[], reason: RegExp): void => {
    box.serve(entries);
    const r = box.run();
    expect(r.status, r.stderr).to.equal(1);
    expect(r.stderr).to.match(reason);
    expect(r.stdout).to.equal('');
    expect(existsSync(box.cached), 'nothing cached').to.equal(false);
    expect(
      readdirSync(box.root).filter((f) => f.startsWith('tmp.')),
      'no scratch dir left',
    ).to.deep.equal([]);
    // A second run does not take anything left over for the toolchain either.
    expect(box.run().status).to.equal(1);
  };
  const hashMismatch = /has hash h1:\S+, expected h1:\S+ \(hack\/go\.env\)/;
  const badEntries = /holds entries outside golang\.org\/toolchain@v0\.0\.1-go1\.99\.1\.linux-amd64\/, twice, or that are not regular files/;

  it('refuses a toolchain whose go binary was changed', () => {
    const entries = fakeToolchain().map((e) => (e.name.endsWith('/bin/go') ? { ...e, data: `${String(e.data)}touch "$HOME/pwned"\n` } : e));
    refused(entries, hashMismatch);
    expect(existsSync(join(box.root, 'pwned')), 'the changed go never ran').to.equal(false);
  });

  it('refuses a toolchain with a file added, or one left out', () => {
    refused([...fakeToolchain(), { name: `${PREFIX}bin/go-helper`, data: '#!/bin/sh\n', mode: 0o100755 }], hashMismatch);
    refused(
      fakeToolchain().filter((e) => !e.name.endsWith('/src/fmt/print.go')),
      hashMismatch,
    );
  });

  it('refuses entries outside the module directory before unpacking (no file written there)', () => {
    const outside = join(box.root, 'outside');
    mkdirSync(outside);
    refused([...fakeToolchain(), { name: `${PREFIX}../../../outside/planted`, data: 'x' }], badEntries);
    refused([...fakeToolchain(), { name: 'planted.sh', data: 'x' }], badEntries);
    expect(readdirSync(outside)).to.deep.equal([]);
  });

  it('refuses a symlink entry before unpacking, so nothing is written through it', () => {
    const outside = join(box.root, 'outside');
    mkdirSync(outside);
    refused([...fakeToolchain(), { name: `${PREFIX}lib`, data: outside, mode: 0o120777 }, { name: `${PREFIX}lib/planted`, data: 'x' }], badEntries);
    expect(readdirSync(outside)).to.deep.equal([]);
  });

  it('refuses a name that appears twice (the second copy would replace the checked one)', () => {
    refused([...fakeToolchain(), { name: `${PREFIX}bin/go`, data: '#!/bin/sh\necho evil\n', mode: 0o100755 }], badEntries);
  });

  it('refuses what is not a zip at all', () => {
    box.serve([]);
    const file = join(box.proxy, 'golang.org/toolchain/@v');
    const zip = readdirSync(file)[0];
    writeFileSync(join(file, zip), '<html>proxy error</html>');
    const r = box.run();
    expect(r.status).to.equal(1);
    expect(r.stderr).to.match(/is not a zip/);
    expect(existsSync(box.cached)).to.equal(false);
  });
});
