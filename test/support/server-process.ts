// A real embedded agentplane server as its own process (`agentplane serve`), for tests that kill
// it (SIGKILL, restart on the same data dir and port, and the process tree it leaves behind) and
// for benchmarks that read its memory (the PSS of its process tree) from /proc.

import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { procStat } from '../../pkg/runtime/local/process-group.js';

const MAIN = fileURLToPath(new URL('../../cmd/agentplane/main.js', import.meta.url));

/** A free loopback port (the kernel's pick, released again). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  /** stdout and stderr lines, for a failure's message. */
  output: string[];
  /** Resolves with the exit code or signal once the process is gone. */
  exited: Promise<number | string>;
  /** Milliseconds from spawn until /readyz answered 200. */
  readyMs: number;
}

export interface ServerProcessOptions {
  port: number;
  dataDir: string;
  model: { url: string; apiKey: string };
  args?: string[];
  /** Node options for the server process alone (before its script), e.g. `--inspect=127.0.0.1:0`. */
  nodeArgs?: string[];
  /** More environment for the server (OTEL_* for the trace tests); wins over the defaults. */
  env?: Record<string, string>;
}

/** Starts `agentplane serve` and waits until /readyz answers (or the process dies). */
export async function startServerProcess(o: ServerProcessOptions): Promise<ServerProcess> {
  const t0 = Date.now();
  const child = spawn(
    process.execPath,
    [...(o.nodeArgs ?? []), MAIN, 'serve', '--port', String(o.port), '--data-dir', o.dataDir, '--allow-private-connector-urls', ...(o.args ?? [])],
    {
      env: {
        ...process.env,
        ANTHROPIC_API_KEY: o.model.apiKey,
        ANTHROPIC_BASE_URL: o.model.url,
        AGENTPLANE_TOKEN_FILE: '',
        AGENTPLANE_LOG_LEVEL: 'warn',
        ...o.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const output: string[] = [];
  for (const s of [child.stdout, child.stderr]) s.on('data', (c: Buffer) => output.push(...String(c).split('\n').filter(Boolean)));
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  let gone = false;
  void exited.then(() => (gone = true));
  const url = `http://127.0.0.1:${o.port}`;
  for (;;) {
    if (gone) throw new Error(`agentplane serve exited before it was ready:\n${output.slice(-20).join('\n')}`);
    if (Date.now() - t0 > 60_000) {
      child.kill('SIGKILL');
      throw new Error(`agentplane serve not ready within 60 s:\n${output.slice(-20).join('\n')}`);
    }
    try {
      if ((await fetch(`${url}/readyz`)).status === 200) break;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  return { child, url, output, exited, readyMs: Date.now() - t0 };
}

/** A process as /proc shows it: its pid and start time (which tells a reused pid apart). */
export interface ProcessId {
  pid: number;
  start: string;
  cmd: string;
}

const statOf = (pid: number): { state: string; ppid: number; start: string } | undefined => {
  const f = procStat(pid);
  return f && { state: f[0], ppid: Number(f[1]), start: f[19] };
};

/** `root` and every process descended from it, as the kernel's parent links show now. */
export function processTree(root: number): ProcessId[] {
  const children = new Map<number, number[]>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    const s = statOf(Number(d));
    if (!s) continue;
    const list = children.get(s.ppid) ?? [];
    list.push(Number(d));
    children.set(s.ppid, list);
  }
  const out: ProcessId[] = [];
  const todo = [root];
  while (todo.length) {
    const pid = todo.pop()!;
    const s = statOf(pid);
    if (!s) continue;
    let cmd = '';
    try {
      cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim().slice(0, 160);
    } catch {
      // exited meanwhile
    }
    out.push({ pid, start: s.start, cmd });
    todo.push(...(children.get(pid) ?? []));
  }
  return out;
}

/**
 * Memory in MiB of `root`'s process tree (a server, its spawner, workers, engines and tools): the
 * sum of each process's PSS (proportional set size: a page shared by n processes counts 1/n in
 * each), so shared pages of the engine binary are not counted once per engine as RSS would.
 */
export function treeMemory(root: number): number {
  let kb = 0;
  for (const { pid } of processTree(root)) {
    try {
      kb += Number(/^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0);
    } catch {
      // gone meanwhile
    }
  }
  return kb / 1024;
}

/** The processes of `ids` still alive (same pid and start time), zombies excluded. */
export function stillAlive(ids: ProcessId[]): ProcessId[] {
  return ids.filter((p) => {
    const s = statOf(p.pid);
    return s !== undefined && s.start === p.start && s.state !== 'Z';
  });
}

/** Whether a process with this pid exists (signal 0 checks without signalling). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
