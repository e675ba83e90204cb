// IPC between the local runtime and its spawner process (spawner-main.ts), which starts solo
// workers so that the server's event loop never blocks in fork/exec (spawner.ts says why).

export interface SpawnCommand {
  op: 'spawn';
  id: number;
  argv: string[];
  env: Record<string, string>;
  cwd: string;
}

export type SpawnerCommand = SpawnCommand;

export type SpawnerReport =
  | { op: 'spawned'; id: number; pid: number }
  | { op: 'line'; id: number; stream: 'stdout' | 'stderr'; line: string }
  | { op: 'exit'; id: number; code: number | null; signal: string | null };
