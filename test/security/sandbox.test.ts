// The tool sandbox against a tool that attacks it (docs/security.md, threat model): the steps
// that broke out as root before (issue "A tool is an adversary"), run by a real agent's real
// Bash tool on a real server. `make test-security` runs this file twice: as root (as CI and
// containers run the server) and as nobody (hack/as-unprivileged.sh); every attack must fail
// both times.

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import type { AgentEvent } from '../../pkg/api/event.js';
import { runTask } from '../support/agents.js';
import { type Harness, startHarness, TEST_API_KEY } from '../support/harness.js';

const root = process.getuid!() === 0;
const SIBLING_MARKER = 'sibling-marker-security-71c4';
const SECRET_VALUE = 'stored-secret-security-9e2a41';
const CANARY = 'neighbour-canary-security-3f88';

const outputs = (evs: AgentEvent[]): string[] => evs.filter((e) => e.type === 'tool_result').map((e) => (e.payload as { output: string }).output);

describe(`security: a tool attacks its sandbox (server as ${root ? 'root' : `uid ${process.getuid!()}`})`, function () {
  this.timeout(180_000);
  let h: Harness;
  let neighbour: ChildProcess;
  let out: string[];
  const planted = [`/tmp/planted-${process.pid}`, `/etc/planted-${process.pid}`];

  before(async () => {
    // A host process holding the model key and a canary in its environment and command line.
    neighbour = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 600000)', CANARY], {
      env: { ...process.env, ANTHROPIC_API_KEY: TEST_API_KEY, CANARY },
      stdio: 'ignore',
    });
    h = await startHarness({ sandbox: 'bwrap' });
    const secret = await h.api('POST', '/api/v1/secrets', { name: 'probe', data: { token: SECRET_VALUE } });
    expect(secret.status, secret.text).to.equal(201);
    await runTask(h, 'sibling', `@bash echo ${SIBLING_MARKER} > private.txt\n@say done`);
    const d = h.dataDir;
    const step = (cmd: string): string => `@bash { ${cmd}; } 2>&1; echo "exit=$?"`;
    const evs = await runTask(
      h,
      'attacker',
      [
        step('id -u; grep -E "^(CapEff|CapBnd|NoNewPrivs|Seccomp):" /proc/self/status; cat /proc/self/uid_map'),
        step('unshare -m true'),
        step('unshare -Urm sh -c "umount -l /proc && ls /"'),
        step('mount -o remount,rw,bind / /'),
        step('umount -l /proc'),
        // The pattern goes through files so that no command line holds it.
        step(
          `printf '%s' ${TEST_API_KEY.slice(0, 6)} > /tmp/p1; printf '%s' ${TEST_API_KEY.slice(6)} >> /tmp/p1; printf 'apm''c_\\nAGENTPLANE_AGENT''_TOKEN=\\n${CANARY.slice(0, 8)}' > /tmp/p2; printf '%s' ${CANARY.slice(8)} >> /tmp/p2; cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' '\\n' | grep -c -a -F -f /tmp/p1 -f /tmp/p2`,
        ),
        step(`ls -A ${d} | tr '\\n' ' '; echo; cat ${join(d, 'secrets.key')} ${join(d, 'state.db')} | head -c 16`),
        step(`cat ${join(d, 'workspaces', 'default', 'sibling', 'private.txt')}`),
        step(`touch ${planted.join(' ')} ${join(d, 'planted')}; ls /root`),
        step(`node -e "fetch('${h.url}/api/v1/agents').then((r) => console.log('reached', r.status), (e) => console.log('unreachable', e.cause?.code))"`),
        // Through the worker's relay and the egress proxy, which refuses loopback.
        step(
          `node -e "require('http').get({ host: '127.0.0.1', port: new URL(process.env.HTTP_PROXY).port, path: '${h.url}/api/v1/agents' }, (r) => console.log('proxied', r.statusCode))"`,
        ),
        '@say probed',
      ].join('\n'),
    );
    out = outputs(evs);
    expect(out, JSON.stringify(out)).to.have.length(11);
  });
  after(async () => {
    neighbour?.kill('SIGKILL');
    await h?.close();
  });

  it('runs tools as an unprivileged user, in a user namespace mapping it alone, with no capability, no_new_privs and the seccomp filter', () => {
    const lines = out[0].split('\n');
    expect(Number(lines[0])).to.equal(root ? 65534 : process.getuid!());
    expect(lines.slice(1, 5).map((l) => l.replace(/\s+/g, ' '))).to.deep.equal([
      'CapEff: 0000000000000000',
      'CapBnd: 0000000000000000',
      'NoNewPrivs: 1',
      'Seccomp: 2',
    ]);
    // In a user namespace that maps that user alone (as root: nobody to nobody, so root is mapped
    // nowhere a tool is; unprivileged: to bubblewrap's own namespace, which maps the server's user).
    const uid = root ? 65534 : process.getuid!();
    const [inside, outside, count] = lines[5].trim().split(/\s+/);
    expect([inside, count]).to.deep.equal([String(uid), '1']);
    if (root) expect(outside).to.equal('65534');
  });

  it('refuses new namespaces, mounts and unmounts', () => {
    expect(out[1])
      .to.match(/unshare failed: Operation not permitted/)
      .and.to.match(/exit=1$/);
    expect(out[2])
      .to.match(/unshare failed: Operation not permitted/)
      .and.not.to.contain('exit=0');
    expect(out[3])
      .to.match(/must be superuser|Operation not permitted|permission denied/i)
      .and.not.to.contain('exit=0');
    expect(out[4])
      .to.match(/must be superuser|Operation not permitted|not mounted|permission denied/i)
      .and.not.to.contain('exit=0');
  });

  it('finds no model key, credential, control token or host process in any environment or command line it can read', () => {
    expect(readFileSync(`/proc/${neighbour.pid}/environ`, 'utf8')).to.contain(TEST_API_KEY); // it is there
    expect(out[5].trim().split('\n')).to.deep.equal(['0', 'exit=1']);
  });

  it('sees no data directory: no state, no key, no other workspace', () => {
    expect(out[6])
      .to.match(/No such file/)
      .and.not.to.contain('SQLite');
    expect(out[6].split('\n')[0].trim().split(/\s+/).sort()).to.deep.equal(['run', 'workspaces']);
    expect(existsSync(join(h.dataDir, 'state.db'))).to.equal(true);
    expect(out[7]).to.contain('No such file').and.not.to.contain(SIBLING_MARKER);
  });

  it('writes nothing outside its workspace that the host sees', () => {
    expect(out[8]).to.match(/Permission denied|Read-only file system/);
    for (const p of planted) expect(existsSync(p), p).to.equal(false);
    expect(readdirSync(h.dataDir)).not.to.include('planted');
    expect(out[8]).to.match(/ls: cannot access '\/root': No such file/);
  });

  it('cannot reach the server’s API: its network is its own, and the egress proxy refuses loopback', () => {
    expect(out[9])
      .to.match(/^unreachable ECONNREFUSED/)
      .and.not.to.contain('reached');
    expect(out[10]).to.match(/^proxied 403/);
  });
});
