// What the machine's process table shows, as `ps -eww` would: for tests that look for secrets on
// command lines and environments, and for the processes a runtime started.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Each host process's pid and its `/proc/<pid>/<file>` (cmdline, environ), skipping those that exited or are not readable. */
function* procFiles(file: 'cmdline' | 'environ'): Generator<{ pid: number; text: string }> {
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    let text: string;
    try {
      text = readFileSync(`/proc/${d}/${file}`, 'utf8');
    } catch {
      continue; // exited meanwhile, or not ours
    }
    yield { pid: Number(d), text };
  }
}

/** Host processes (other than this one) whose command line contains `needle`. */
export function processesWith(needle: string): number[] {
  const found: number[] = [];
  for (const { pid, text } of procFiles('cmdline')) if (pid !== process.pid && text.includes(needle)) found.push(pid);
  return found;
}

/**
 * The environment the agent's local worker was started with, read from the host as any process
 * of the same user could (`/proc/<pid>/environ` of a process whose environment names the agent
 * and its workspace under `dataDir`, so another server's agent of that name does not count).
 */
export function agentEnvironment(dataDir: string, name: string, namespace = 'default'): Record<string, string> {
  const marks = [`AGENTPLANE_AGENT_NAME=${name}`, `AGENTPLANE_NAMESPACE=${namespace}`, `AGENTPLANE_WORKSPACE=${join(dataDir, 'workspaces', namespace, name)}`];
  for (const { text } of procFiles('environ')) {
    const entries = text.split('\0');
    if (!marks.every((m) => entries.includes(m))) continue;
    return Object.fromEntries(entries.filter(Boolean).map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]));
  }
  throw new Error(`no process with the environment of agent ${namespace}/${name}`);
}
