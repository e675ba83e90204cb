// How many workers the machine holds. A worker with its warm engine costs about 150 MB of private
// memory (docs/performance.md "Memory"); a tool it runs takes more. The default limit leaves a
// quarter of the memory to the server, the tools and everything else on the machine.

import { totalmem } from 'node:os';

/** Budgeted per worker: its engine and itself, with headroom for the tools it runs. */
export const WORKER_MEMORY_BYTES = 192 * 1024 * 1024;

/** The machine's memory, or the cgroup's limit when that is lower (a container). */
export function usableMemory(): number {
  const total = totalmem();
  const limit = process.constrainedMemory?.() ?? 0;
  return limit > 0 && limit < total ? limit : total;
}

/** `--max-workers` by default: three quarters of the memory, a WORKER_MEMORY_BYTES each; at least 2. */
export function defaultMaxWorkers(memory = usableMemory()): number {
  return Math.max(2, Math.floor((memory * 0.75) / WORKER_MEMORY_BYTES));
}
