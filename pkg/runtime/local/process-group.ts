// Signals to a worker's process group, made safe against pid reuse. A worker leads a process
// group of its own and is signalled by pid (`kill(-pid)`), but the server learns of its exit only
// later (the spawner reaps it and reports over IPC), and once reaped its pid is free unless
// members of its group remain. On a busy machine the kernel hands that pid to a new process,
// which may lead a group of its own: another agent's worker. A stop or a clean-up sent in that
// window would hit it (seen once in a 1,000-agent benchmark: a task ended by SIGTERM). So the
// start time of each leader is noted when its pid is known, and a group is signalled only while
// its pid is still that process's, or no process has the pid (members of the group may remain:
// a group id keeps its pid from being reused).

import { readFileSync } from 'node:fs';

/** A process the runtime started; `pid` is known once it was spawned. */
export interface Leader {
  readonly pid?: number | undefined;
}

const startTimes = new WeakMap<Leader, string>();

/**
 * The fields of `/proc/<pid>/stat` after the command (which is in parentheses and may hold
 * spaces): [0] state, [1] ppid, [2] process group, ..., [19] start time. Undefined when no
 * process has the pid.
 */
export function procStat(pid: number | string): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** The kernel's start time of process `pid` (clock ticks since boot), or undefined when there is none. */
export function processStartTime(pid: number): string | undefined {
  return procStat(pid)?.[19];
}

/** Notes when the leader started: call as soon as its pid is known. */
export function noteStarted(leader: Leader): void {
  const t = leader.pid ? processStartTime(leader.pid) : undefined;
  if (t !== undefined) startTimes.set(leader, t);
}

/** Signals the leader's process group, unless its pid now belongs to another process. */
export function signalGroup(leader: Leader, sig: NodeJS.Signals): void {
  const pid = leader.pid;
  if (!pid) return;
  const then = startTimes.get(leader);
  if (then !== undefined) {
    const now = processStartTime(pid);
    if (now !== undefined && now !== then) return; // reused: the group is gone, and this is not ours
  }
  try {
    process.kill(-pid, sig);
  } catch {
    // already gone
  }
}
