// IPC between the local runtime and its spawner process (spawner-main.ts), which starts solo
// workers so that the server's event loop never blocks in fork/exec (spawner.ts says why).

export interface SpawnCommand {
  op: 'spawn';
  id: number;
  argv: string[];
  env: Record<string, string>;
  /** Sent to the worker as its first IPC message, never put in its environment. */
  secrets?: Record<string, string>;
  cwd: string;
  /** The niceness of the session the worker leads (session-niceness.ts says why). */
  niceness?: number;
}

export type SpawnerCommand = SpawnCommand;

export type SpawnerReport =
  | { op: 'spawned'; id: number; pid: number }
  | { op: 'line'; id: number; stream: 'stdout' | 'stderr'; line: string }
  | { op: 'exit'; id: number; code: number | null; signal: string | null };
