import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { expect } from 'chai';

import { noteStarted, procStat, processStartTime, signalGroup } from '../../pkg/runtime/local/process-group.js';

/** A process leading a group of its own, as the runtime starts workers. */
const leader = (): ChildProcess => spawn('sleep', ['30'], { detached: true, stdio: 'ignore' });
/** Running, not a zombie: an orphan's exit is reaped by whatever adopted it, maybe late. */
const alive = (pid: number): boolean => {
  const state = procStat(pid)?.[0];
  return state !== undefined && state !== 'Z';
};

describe('process groups (pid reuse)', () => {
  const started: ChildProcess[] = [];
  afterEach(() => {
    for (const c of started.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  });
  const start = (): ChildProcess => {
    const c = leader();
    started.push(c);
    return c;
  };

  it('reads a live process start time, and none for a pid no process has', () => {
    expect(processStartTime(process.pid)).to.match(/^\d+$/);
    expect(processStartTime(2 ** 22 + 1)).to.equal(undefined); // above any pid_max
  });

  it("signals the group of a noted leader while the pid is the leader's", async () => {
    const a = start();
    await once(a, 'spawn');
    noteStarted(a);
    signalGroup(a, 'SIGTERM');
    const [, signal] = (await once(a, 'exit')) as [number | null, NodeJS.Signals | null];
    expect(signal).to.equal('SIGTERM');
  });

  it('does not signal the group of another process that took the pid', async () => {
    const a = start();
    await once(a, 'spawn');
    const stale = { pid: a.pid };
    noteStarted(stale);
    a.kill('SIGKILL');
    await once(a, 'exit');
    // Start times count clock ticks (10 ms): a pid comes round again only after the kernel has
    // handed out all the others, far later than one tick.
    await new Promise((r) => setTimeout(r, 50));
    // Another worker now leads a group under that pid (here: a live leader's pid, as the kernel
    // would hand the freed one out again).
    const b = start();
    await once(b, 'spawn');
    Object.assign(stale, { pid: b.pid });
    signalGroup(stale, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 200));
    expect(alive(b.pid!), 'the other group is left alone').to.equal(true);
  });

  it('signals the group when no process has the pid any more (its members may remain)', async () => {
    // A leader whose group outlives it: `sh` starts a member in its group and exits.
    const sh = spawn('sh', ['-c', 'sleep 30 & echo $!'], { detached: true, stdio: ['ignore', 'pipe', 'ignore'] });
    started.push(sh);
    await once(sh, 'spawn');
    noteStarted(sh);
    const [out] = (await once(sh.stdout, 'data')) as [Buffer];
    const member = Number(String(out).trim());
    await once(sh, 'exit');
    expect(alive(member)).to.equal(true);
    signalGroup(sh, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 200));
    expect(alive(member), 'the member left in the group').to.equal(false);
  });
});
