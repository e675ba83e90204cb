// What the machine's process table shows, as `ps -eww` would: for tests that look for secrets on
// command lines and for the processes a runtime started.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

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

/**
 * The environment the agent's local worker was started with, read from the host as any process
 * of the same user could (`/proc/<pid>/environ` of a process whose environment names the agent
 * and its workspace under `dataDir`, so another server's agent of that name does not count).
 */
export function agentEnvironment(dataDir: string, name: string, namespace = 'default'): Record<string, string> {
  const marks = [`AGENTPLANE_AGENT_NAME=${name}`, `AGENTPLANE_NAMESPACE=${namespace}`, `AGENTPLANE_WORKSPACE=${join(dataDir, 'workspaces', namespace, name)}`];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    let entries: string[];
    try {
      entries = readFileSync(`/proc/${d}/environ`, 'utf8').split('\0');
    } catch {
      continue; // exited meanwhile, or not ours
    }
    if (!marks.every((m) => entries.includes(m))) continue;
    return Object.fromEntries(entries.filter(Boolean).map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]));
  }
  throw new Error(`no process with the environment of agent ${namespace}/${name}`);
}
