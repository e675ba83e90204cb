import { expect } from 'chai';

import { autogroupsEnabled, sessionNiceness } from '../../pkg/runtime/local/session-niceness.js';
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
      expect(sessionNiceness(niced.pid!)).to.equal(10);
      expect(sessionNiceness(plain.pid!)).to.equal(0);
      expect(sessionNiceness(process.pid)).to.equal(0);
    } finally {
      for (const p of [niced, plain]) if (p.pid) process.kill(p.pid, 'SIGKILL');
      spawner.close();
    }
  });
});
