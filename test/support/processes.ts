// What the machine's process table shows, as `ps -eww` would: for tests that look for secrets on
// command lines and for the processes a runtime started.

import { readdirSync, readFileSync } from 'node:fs';

/** Host processes (other than this one) whose command line contains `needle`. */
export function processesWith(needle: string): number[] {
  const found: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (readFileSync(`/proc/${d}/cmdline`, 'utf8').includes(needle)) found.push(Number(d));
    } catch {
      // exited meanwhile
    }
  }
  return found.filter((p) => p !== process.pid);
}
