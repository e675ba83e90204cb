// Starts solo workers through one helper process (spawner-main.ts) instead of from the server.
// child_process.spawn blocks the caller's event loop until the child has exec'ed: measured 10 ms
// per spawn from a 150 MB process on an idle 2-core machine and about 50 ms while agents start,
// so 50 agents starting held every API request for seconds. The spawner is small, so its forks
// are cheap, and its blocking is its own.

import { type ChildProcess, spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { fileURLToPath } from 'node:url';
import { noteStarted } from './process-group.js';
import type { SpawnerCommand, SpawnerReport } from './spawner-protocol.js';

const SPAWNER_MAIN = fileURLToPath(new URL('./spawner-main.js', import.meta.url));

/** A worker process started by the spawner: what the runtime needs of a ChildProcess. */
export class RemoteProcess extends EventEmitter {
  pid: number | undefined;
  exitCode: number | null = null;
  signalCode: NodeJS.Signals | null = null;

  /** Resolves once the pid is known, or the process is gone. */
  readonly started = new Promise<void>((resolve) => {
    this.once('spawn', resolve);
    this.once('exit', resolve);
  });

  exited(code: number | null, signal: string | null): void {
    if (this.exitCode !== null || this.signalCode !== null) return;
    this.exitCode = code;
    this.signalCode = (signal as NodeJS.Signals | null) ?? (code === null ? 'SIGKILL' : null);
    this.emit('exit', code, signal);
  }
}

export interface SpawnedLines {
  stdout(line: string): void;
  stderr(line: string): void;
}

export class Spawner {
  private child?: ChildProcess;
  private nextId = 1;
  private readonly procs = new Map<number, { proc: RemoteProcess; lines: SpawnedLines }>();

  /** Starts `argv` detached (its own process group) with an IPC channel to the spawner. */
  spawn(
    argv: string[],
    opts: { env: Record<string, string>; cwd: string; secrets?: Record<string, string>; niceness?: number },
    lines: SpawnedLines,
  ): RemoteProcess {
    const child = this.ensure();
    const id = this.nextId++;
    const proc = new RemoteProcess();
    this.procs.set(id, { proc, lines });
    const cmd: SpawnerCommand = {
      op: 'spawn',
      id,
      argv,
      env: opts.env,
      cwd: opts.cwd,
      ...(opts.secrets ? { secrets: opts.secrets } : {}),
      ...(opts.niceness ? { niceness: opts.niceness } : {}),
    };
    child.send(cmd);
    return proc;
  }

  /** Stops the spawner; workers still running see their channel close and shut down. */
  close(): void {
    const child = this.child;
    this.child = undefined;
    if (child?.connected) child.disconnect();
  }

  private ensure(): ChildProcess {
    if (this.child?.connected) return this.child;
    const child = spawn(process.execPath, [SPAWNER_MAIN], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    child.on('message', (r: SpawnerReport) => this.onReport(r));
    child.on('exit', () => {
      if (this.child === child) this.child = undefined;
      // Its workers lost their channel and are going: tell the runtime they are gone.
      for (const [id, { proc }] of this.procs) {
        this.procs.delete(id);
        proc.exited(null, 'SIGKILL');
      }
    });
    this.child = child;
    return child;
  }

  private onReport(r: SpawnerReport): void {
    const p = this.procs.get(r.id);
    if (!p) return;
    if (r.op === 'spawned') {
      p.proc.pid = r.pid > 0 ? r.pid : undefined;
      noteStarted(p.proc); // to tell it from a later process given its pid (process-group.ts)
      p.proc.emit('spawn');
    } else if (r.op === 'line') p.lines[r.stream](r.line);
    else {
      this.procs.delete(r.id);
      p.proc.exited(r.code, r.signal);
    }
  }
}
