// A sandbox for hack/go.sh: a copy of the script with its own go.env (a made-up pinned version
// and hash) and go.mod, a module proxy on disk (GOPROXY=file://...), a cache dir, and optionally
// a fake machine `go` of any version; everything else on PATH except any real go. What it serves
// are fake toolchains: a bin/go that answers `go env GOVERSION` like the real one.

import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { h1, zipArchive, type ZipEntry } from './zip.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));

export const PINNED = '1.99.1';
export const MODULE = `v0.0.1-go${PINNED}.linux-amd64`;
export const PREFIX = `golang.org/toolchain@${MODULE}/`;

const goScript = (version: string): string =>
  `#!/bin/sh\ncase "$*" in\n  "env GOVERSION") echo go${version} ;;\n  version) echo "go version go${version} linux/amd64" ;;\n  *) exit 2 ;;\nesac\n`;

/** The files of a fake golang.org/toolchain zip of the pinned version. */
export function fakeToolchain(): ZipEntry[] {
  return [
    { name: `${PREFIX}bin/go`, data: goScript(PINNED), mode: 0o100755 },
    { name: `${PREFIX}bin/gofmt`, data: '#!/bin/sh\n', mode: 0o100755 },
    // As in the real zips: the go command sets the execute bits of pkg/tool itself.
    { name: `${PREFIX}pkg/tool/linux_amd64/compile`, data: '#!/bin/sh\n' },
    { name: `${PREFIX}src/fmt/print.go`, data: 'package fmt\n' },
    { name: `${PREFIX}LICENSE`, data: 'BSD\n' },
  ];
}

export interface GoShRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

export class GoShSandbox {
  readonly root = mkdtempSync(join(tmpdir(), 'agentplane-gosh-'));
  readonly hack = join(this.root, 'hack');
  readonly proxy = join(this.root, 'proxy');
  readonly cacheHome = join(this.root, 'cache');
  readonly cached = join(this.cacheHome, 'agentplane', 'go', PINNED);
  private machineGoDir: string | undefined;

  /** hash: what go.env pins (default: the fake toolchain's); required: the go.mod's `go` line. */
  constructor(opts: { hash?: string; required?: string; toolchainLine?: string } = {}) {
    mkdirSync(join(this.hack, 'tools'), { recursive: true });
    copyFileSync(join(REPO, 'hack/go.sh'), join(this.hack, 'go.sh'));
    writeFileSync(join(this.hack, 'go.env'), `GO_VERSION=${PINNED}\nGO_H1_LINUX_AMD64=${opts.hash ?? h1(fakeToolchain())}\n`);
    writeFileSync(
      join(this.hack, 'tools', 'go.mod'),
      `module example.com/tools\n\ngo ${opts.required ?? '1.99.0'}\n${opts.toolchainLine ? `\ntoolchain ${opts.toolchainLine}\n` : ''}`,
    );
  }

  /** Serves these entries as the pinned toolchain's zip from dir (default: the sandbox's proxy). */
  serve(entries: ZipEntry[], dir = this.proxy): void {
    const file = join(dir, 'golang.org', 'toolchain', '@v', `${MODULE}.zip`);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, zipArchive(entries));
  }

  /** A machine go of this version first on PATH (null: none). */
  machineGo(version: string | null): string | undefined {
    if (version === null) {
      this.machineGoDir = undefined;
      return undefined;
    }
    this.machineGoDir = join(this.root, `machine-go-${version}`);
    mkdirSync(this.machineGoDir, { recursive: true });
    writeFileSync(join(this.machineGoDir, 'go'), goScript(version));
    chmodSync(join(this.machineGoDir, 'go'), 0o755);
    return this.machineGoDir;
  }

  run(env: Record<string, string> = {}): GoShRun {
    // The real PATH without any directory holding a go, as .ci/run does it.
    const path = (process.env.PATH ?? '/usr/bin:/bin').split(':').filter((d) => d && !existsSync(join(d, 'go')));
    if (this.machineGoDir) path.unshift(this.machineGoDir);
    const r = spawnSync('bash', [join(this.hack, 'go.sh')], {
      encoding: 'utf8',
      timeout: 30_000,
      env: {
        PATH: path.join(':'),
        HOME: this.root,
        XDG_CACHE_HOME: this.cacheHome,
        XDG_CONFIG_HOME: join(this.root, 'config'),
        TMPDIR: this.root,
        GOPROXY: `file://${this.proxy}`,
        ...env,
      },
    });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  }

  close(): void {
    rmSync(this.root, { recursive: true, force: true });
  }
}
