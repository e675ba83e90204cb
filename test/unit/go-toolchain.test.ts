// hack/go.sh: which go builds the test cluster. The machine's when it is new enough for
// hack/tools' go.mod files, else the pinned toolchain from the Go module proxy ($GOPROXY), checked
// and cached. Real script, real curl and unzip, against a proxy on disk serving fake toolchains.

import { accessSync, constants, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { expect } from 'chai';

import { fakeToolchain, GoShSandbox, PINNED } from '../support/go-toolchain.js';

describe('hack/go.sh: the Go toolchain for the control-plane build', function () {
  this.timeout(60_000);
  let box: GoShSandbox;
  beforeEach(() => {
    box = new GoShSandbox();
  });
  afterEach(() => box.close());

  const bin = (): string => join(box.cached, 'bin');

  it('uses the machine go when it is at least what the go.mod files need, without fetching anything', () => {
    const dir = box.machineGo('1.99.0');
    const r = box.run();
    expect(r.status, r.stderr).to.equal(0);
    expect(r.stdout.trim()).to.equal(dir);
    expect(readdirSync(box.root)).not.to.include('cache');
  });

  it('fetches, checks and caches the pinned toolchain when the machine go is older, then reuses the cache', () => {
    box.machineGo('1.98.9');
    box.serve(fakeToolchain());
    const r = box.run();
    expect(r.status, r.stderr).to.equal(0);
    expect(r.stdout.trim()).to.equal(bin());
    expect(r.stderr).to.match(/machine go 1\.98\.9 is older than 1\.99\.0; fetching golang\.org\/toolchain@v0\.0\.1-go1\.99\.1\.linux-amd64/);
    // The go command's own rule for a downloaded toolchain: pkg/tool is made executable.
    accessSync(join(box.cached, 'pkg/tool/linux_amd64/compile'), constants.X_OK);
    // No scratch dir left behind.
    expect(readdirSync(box.root).filter((f) => f.startsWith('tmp.'))).to.deep.equal([]);

    rmSync(box.proxy, { recursive: true });
    const again = box.run();
    expect(again.status, again.stderr).to.equal(0);
    expect(again.stdout.trim()).to.equal(bin());
    expect(again.stderr).to.equal('');
  });

  it('fetches the pinned toolchain when the machine has no go at all', () => {
    box.serve(fakeToolchain());
    const r = box.run();
    expect(r.status, r.stderr).to.equal(0);
    expect(r.stdout.trim()).to.equal(bin());
    expect(r.stderr).to.contain('machine go none is older than 1.99.0');
  });

  it('AGENTPLANE_GO=pinned uses the pinned toolchain even beside a new enough machine go', () => {
    box.machineGo('1.100.0');
    box.serve(fakeToolchain());
    const r = box.run({ AGENTPLANE_GO: 'pinned' });
    expect(r.status, r.stderr).to.equal(0);
    expect(r.stdout.trim()).to.equal(bin());
  });

  it("a go.mod's toolchain line counts too", () => {
    box.close();
    box = new GoShSandbox({ required: '1.99.0', toolchainLine: 'go1.99.1' });
    box.machineGo('1.99.0');
    box.serve(fakeToolchain());
    const r = box.run();
    expect(r.status, r.stderr).to.equal(0);
    expect(r.stdout.trim()).to.equal(bin());
  });

  it('tries each proxy of GOPROXY in turn, skipping "direct"', () => {
    box.serve(fakeToolchain(), join(box.root, 'second'));
    const r = box.run({ GOPROXY: `file://${box.root}/empty,direct|file://${box.root}/second/` });
    expect(r.status, r.stderr).to.equal(0);
    expect(r.stdout.trim()).to.equal(bin());
    expect(r.stderr).to.contain(`could not fetch it from file://${box.root}/empty`);
  });

  it('reads GOPROXY from the go env file when the environment has none', () => {
    box.serve(fakeToolchain(), join(box.root, 'configured'));
    const envFile = join(box.root, 'goenv');
    writeFileSync(envFile, `GOPROXY=file://${box.root}/configured\n`);
    const r = box.run({ GOPROXY: '', GOENV: envFile });
    expect(r.status, r.stderr).to.equal(0);
    expect(r.stdout.trim()).to.equal(bin());
  });

  it('stops with a clear error when no proxy serves it, and at GOPROXY=off', () => {
    for (const proxy of [`file://${box.root}/empty`, 'off']) {
      const r = box.run({ GOPROXY: proxy });
      expect(r.status).to.equal(1);
      expect(r.stderr).to.contain(`no proxy of GOPROXY=${proxy} served golang.org/toolchain@v0.0.1-go1.99.1.linux-amd64`);
      expect(r.stdout).to.equal('');
    }
  });

  it('refuses a pin older than the go.mod files need, naming what to raise', () => {
    box.close();
    box = new GoShSandbox({ required: '1.99.2' });
    box.serve(fakeToolchain());
    const r = box.run();
    expect(r.status).to.equal(1);
    expect(r.stderr).to.contain(`hack/go.env pins go ${PINNED} but hack/tools needs go >= 1.99.2: raise GO_VERSION`);
  });
});
