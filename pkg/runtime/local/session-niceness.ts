// Niceness orders processes only inside one scheduling group. With the kernel's autogroup on
// (/proc/sys/kernel/sched_autogroup_enabled: the default of most distributions), every session is
// a group of its own that weighs as much as one nice-0 process however nice its members are, and
// each local worker (and squad group supervisor) leads a session of its own (started detached, so
// that its process group is signalled as one). So `nice -n 10` gave the server nothing: 50
// starting agents were 50 groups each as heavy as the server's whole session, and the API's
// thread waited for a CPU most of the time (docs/performance.md "API under load"). Setting the
// niceness of the worker's session group as well restores the order niceness was meant to give.

import { readFileSync, writeFileSync } from 'node:fs';

const AUTOGROUP_ENABLED = '/proc/sys/kernel/sched_autogroup_enabled';
let enabled: boolean | undefined;

/** Whether the kernel puts each session in a scheduling group of its own. */
export function autogroupsEnabled(): boolean {
  try {
    enabled ??= readFileSync(AUTOGROUP_ENABLED, 'utf8').trim() === '1';
  } catch {
    enabled = false;
  }
  return enabled;
}

type Outcome = 'done' | 'again' | 'refused';

function trySet(pid: number, niceness: number, write: (path: string, data: string) => void): Outcome {
  try {
    write(`/proc/${pid}/autogroup`, String(niceness));
    return 'done';
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EAGAIN' ? 'again' : 'refused';
  }
}

/**
 * Gives the session `pid` leads (its autogroup) `niceness`; resolves false when the kernel has
 * no autogroups or refused (the process is gone, or no longer ours: a setuid bubblewrap). Only
 * ever makes it nicer. Without CAP_SYS_ADMIN the kernel takes one such write per 100 ms for the
 * whole machine and answers EAGAIN to others, so a write is tried again, 100 to 200 ms apart,
 * for up to `giveUpMs`: 50 workers starting at once are all niced within about 5 s.
 */
export function niceSession(
  pid: number | undefined,
  niceness: number,
  o: { giveUpMs?: number; write?: (path: string, data: string) => void } = {},
): Promise<boolean> {
  if (pid === undefined || niceness <= 0 || !autogroupsEnabled()) return Promise.resolve(false);
  const write = o.write ?? writeFileSync;
  const deadline = Date.now() + (o.giveUpMs ?? 10_000);
  return new Promise((resolve) => {
    const attempt = (): void => {
      const r = trySet(pid, niceness, write);
      if (r !== 'again' || Date.now() > deadline) return resolve(r === 'done');
      setTimeout(attempt, 100 + Math.random() * 100).unref();
    };
    attempt();
  });
}

/**
 * The niceness of the session group `pid` is in (`/proc/<pid>/autogroup`), if the kernel has them.
 * A process whose session never called setsid() since boot (init's, and what a container runtime
 * starts without a new session) is in no session group: the file is empty, and it weighs as its
 * own niceness alone, that is as a group of niceness 0.
 */
export function sessionNiceness(pid: number): number | undefined {
  try {
    return parseAutogroup(readFileSync(`/proc/${pid}/autogroup`, 'utf8'));
  } catch {
    return undefined;
  }
}

/** Reads `/autogroup-<id> nice <n>`; an empty file is the root group (niceness 0). */
export function parseAutogroup(text: string): number | undefined {
  if (text.trim() === '') return 0;
  const m = / nice (-?\d+)/.exec(text);
  return m ? Number(m[1]) : undefined;
}
