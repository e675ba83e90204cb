import { expect } from 'chai';
import { setTimeout as sleep } from 'node:timers/promises';

import { autogroupsEnabled, niceSession, parseAutogroup, sessionNiceness } from '../../pkg/runtime/local/session-niceness.js';
import { Spawner } from '../../pkg/runtime/local/spawner.js';

describe('workers lead a session as nice as they are (kernel autogroups)', function () {
  this.timeout(20_000);

  it("the spawner gives a worker's session the niceness asked for, and leaves the server's alone", async function () {
    if (!autogroupsEnabled()) this.skip(); // without autogroups, nice(1) alone orders the processes
    const spawner = new Spawner();
    const lines = { stdout: () => undefined, stderr: () => undefined };
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
    const niced = spawner.spawn(['sleep', '30'], { env, cwd: '/', niceness: 10 }, lines);
    const plain = spawner.spawn(['sleep', '30'], { env, cwd: '/' }, lines);
    try {
      await Promise.all([niced.started, plain.started]);
      // Another process may have taken the kernel's one write per 100 ms: the spawner tries again.
      for (let t = Date.now(); sessionNiceness(niced.pid!) !== 10 && Date.now() - t < 3_000;) await sleep(50);
      expect(sessionNiceness(niced.pid!)).to.equal(10);
      expect(sessionNiceness(plain.pid!)).to.equal(0);
      expect(sessionNiceness(process.pid)).to.equal(0);
    } finally {
      for (const p of [niced, plain]) if (p.pid) process.kill(p.pid, 'SIGKILL');
      spawner.close();
    }
  });
});

describe('parseAutogroup', () => {
  it("reads a session group's niceness, and the root group (a session that never called setsid) as 0", () => {
    expect(parseAutogroup('/autogroup-24782 nice 10\n')).to.equal(10);
    expect(parseAutogroup('/autogroup-7 nice -5\n')).to.equal(-5);
    // CI's runner starts the tests in no session group of their own: the file is empty.
    expect(parseAutogroup('')).to.equal(0);
    expect(parseAutogroup('garbage')).to.equal(undefined);
  });
});

describe('niceSession', () => {
  it('tries again while the kernel answers EAGAIN (one write per 100 ms without CAP_SYS_ADMIN), and stops at a refusal', async function () {
    if (!autogroupsEnabled()) this.skip();
    const errno = (code: string) => Object.assign(new Error(code), { code });
    const writes: string[] = [];
    let busy = 2;
    const ok = await niceSession(1234, 10, {
      write: (path, data) => {
        writes.push(`${path} ${data}`);
        if (busy-- > 0) throw errno('EAGAIN');
      },
    });
    expect(ok).to.equal(true);
    expect(writes).to.deep.equal(Array(3).fill('/proc/1234/autogroup 10'));

    let tries = 0;
    const refused = await niceSession(1234, 10, {
      write: () => {
        tries++;
        throw errno('EACCES');
      },
    });
    expect([refused, tries]).to.deep.equal([false, 1]);
    expect(await niceSession(1234, 0, { write: () => expect.fail('niceness 0 is no change') })).to.equal(false);
  });
});
