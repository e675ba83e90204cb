// Ending a worker and what it started: its process group (SIGTERM, then SIGKILL after a grace
// period), and, unsandboxed, the tool processes that left the group, found by a credential only
// that worker had in its environment.

import { type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { signalGroup } from './process-group.js';

/** A worker or group supervisor process, whether this process or the spawner started it. */
export type Proc = Pick<ChildProcess, 'pid' | 'exitCode' | 'signalCode'> & { once(event: 'exit', fn: () => void): unknown };

/** SIGTERMs the process's group, SIGKILLs it after `graceMs`; resolves once the leader exited. */
/** How often SIGTERM is sent again while the group's leader has not exited. */
const TERM_REPEAT_MS = 250;

export function killGroup(child: Proc, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || !child.pid) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => signalGroup(child, 'SIGKILL'), graceMs);
    // Sent again until the group leader exits: the sandbox's bubblewrap ignores SIGTERM so that
    // it reaches the worker, and a worker still being started (bubblewrap, then node loading)
    // was not there to receive the first one.
    const again = setInterval(() => signalGroup(child, 'SIGTERM'), TERM_REPEAT_MS);
    child.once('exit', () => {
      clearTimeout(timer);
      clearInterval(again);
      // The group may hold tool processes that outlived the worker.
      signalGroup(child, 'SIGKILL');
      resolve();
    });
    signalGroup(child, 'SIGTERM');
  });
}

/** SIGKILLs every process whose environment holds `entry` (NAME=value), as /proc shows them. */
export function killByEnvironment(entry: string): void {
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d) || Number(d) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${d}/environ`, 'utf8').split('\0').includes(entry)) process.kill(Number(d), 'SIGKILL');
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
}
