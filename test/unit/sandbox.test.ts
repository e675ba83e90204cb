// The tool sandbox's set-up: the --sandbox modes, and a real bubblewrap run of a wrapped command
// (the integration test covers a real worker inside it).

import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { createLogger } from '../../pkg/observability/logger.js';
import { resolveSandbox } from '../../pkg/runtime/local/sandbox.js';

const CLI = fileURLToPath(new URL('../../cmd/agentplane/main.js', import.meta.url));

function captured(): { logger: ReturnType<typeof createLogger>; lines: string[] } {
  const lines: string[] = [];
  const sink = new PassThrough();
  sink.on('data', (c: Buffer) => lines.push(...String(c).split('\n').filter(Boolean)));
  return { logger: createLogger({ level: 'info', destination: sink }), lines };
}

const flush = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('tool sandbox set-up', () => {
  let dataDir: string;
  before(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'agentplane-sandbox-'));
  });
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  it('bwrap: refuses to start when bubblewrap is unusable, saying why and how to install it', () => {
    const { logger } = captured();
    expect(() => resolveSandbox('bwrap', dataDir, logger, { PATH: '/nonexistent' })).to.throw(
      /--sandbox bwrap: bubblewrap is not usable \(bwrap not found on PATH\); install bubblewrap \(Debian\/Ubuntu: apt-get install bubblewrap/,
    );
  });

  const root = process.getuid?.() === 0;

  it('auto without bubblewrap: as root refuses to start, naming the fix; otherwise runs unconfined with one warning', async () => {
    const { logger, lines } = captured();
    if (root) {
      expect(() => resolveSandbox('auto', dataDir, logger, { PATH: '/nonexistent' })).to.throw(
        /--sandbox auto: the server runs as root and bubblewrap is not usable \(bwrap not found on PATH\), so agent tools would run as root on this host; install bubblewrap .*or pass --sandbox none/,
      );
      return;
    }
    expect(resolveSandbox('auto', dataDir, logger, { PATH: '/nonexistent' }).kind).to.equal('none');
    await flush();
    expect(lines).to.have.length(1);
    expect(JSON.parse(lines[0])).to.include({ level: 40, reason: 'bwrap not found on PATH' });
    expect(lines[0]).to.contain('NOT confined').and.to.contain('apt-get install bubblewrap');
  });

  it('none: unconfined, said once; auto and bwrap confine where bubblewrap works (here)', async () => {
    const { logger, lines } = captured();
    expect(resolveSandbox('none', dataDir, logger).kind).to.equal('none');
    expect(resolveSandbox('auto', dataDir, logger).kind).to.equal('bwrap');
    expect(resolveSandbox('bwrap', dataDir, logger).kind).to.equal('bwrap');
    await flush();
    expect(lines).to.have.length(3);
    expect(lines[0]).to.contain('--sandbox none');
    expect(lines[1]).to.contain('confined').and.to.contain('bubblewrap');
  });

  it('a wrapped command sees its workspace, read-only peers, no data directory and its own PIDs', () => {
    const ws = join(dataDir, 'workspaces', 'default', 'a');
    const peer = join(dataDir, 'workspaces', 'default', 'b');
    const other = join(dataDir, 'workspaces', 'default', 'c');
    for (const d of [ws, peer, other]) mkdirSync(d, { recursive: true });
    writeFileSync(join(peer, 'p.txt'), 'peer\n');
    writeFileSync(join(other, 'o.txt'), 'other');
    writeFileSync(join(dataDir, 'state.db'), 'state');
    const sandbox = resolveSandbox('bwrap', dataDir, captured().logger);
    for (const d of [ws, peer]) sandbox.prepare(d);
    const script = [
      'pwd',
      'echo mine > own.txt && cat own.txt',
      `cat ${peer}/p.txt`,
      `{ echo x > ${peer}/x.txt; } 2>/dev/null || echo peer-read-only`,
      `ls ${other} 2>/dev/null || echo no-other`,
      `ls -A ${dataDir}`,
      'tr "\\0" " " < /proc/1/cmdline; echo',
      'node -e "process.stdout.write(String(process.pid))"; echo',
      'id -u; grep -E "^(CapEff|CapBnd|NoNewPrivs|Seccomp):" /proc/self/status | tr -s "\\t " " "',
      `unshare -U true 2>/dev/null || echo no-unshare; { ls /root || echo no-root; } 2>/dev/null`,
    ].join('; ');
    const [cmd, ...args] = sandbox.wrap(['sh', '-c', script], { workspace: ws, peers: [peer] });
    const r = spawnSync(cmd, args, { encoding: 'utf8', env: { PATH: process.env.PATH! } });
    expect(r.stderr).to.equal('');
    const lines = r.stdout.trim().split('\n');
    expect(lines.slice(0, 6)).to.deep.equal([ws, 'mine', 'peer', 'peer-read-only', 'no-other', 'workspaces']);
    expect(lines[6]).to.match(/^\S*bwrap /);
    expect(Number(lines[7])).to.be.below(10);
    // An unprivileged user (nobody when the server is root), no capability, no way back.
    expect(Number(lines[8])).to.equal(root ? 65534 : process.getuid!());
    expect(lines.slice(9, 13)).to.deep.equal(['CapEff: 0000000000000000', 'CapBnd: 0000000000000000', 'NoNewPrivs: 1', 'Seccomp: 2']);
    expect(lines.slice(13)).to.deep.equal(['no-unshare', 'no-root']);
  });

  it('serve refuses an unknown --sandbox value', () => {
    const r = spawnSync(process.execPath, [CLI, 'serve', '--sandbox', 'docker'], { encoding: 'utf8' });
    expect(r.status).to.equal(2);
    expect(r.stderr).to.contain('--sandbox must be one of auto, bwrap, none, got "docker"');
  });
});
