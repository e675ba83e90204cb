// The local runtime's spawner: a small process that starts solo workers for the server and
// relays their output lines and exits over IPC. Each worker leads its own process group
// (detached), which the server signals directly by pid. Each worker keeps an IPC channel to this
// process; when the server goes, this process goes, and the workers see their channel close
// and shut down, as they did when the server was their parent.

import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { niceSession } from './session-niceness.js';
import type { SpawnerCommand, SpawnerReport } from './spawner-protocol.js';

const report = (r: SpawnerReport): void => {
  if (process.connected) process.send!(r);
};

process.on('message', (cmd: SpawnerCommand) => {
  if (cmd.op !== 'spawn') return;
  const [file, ...args] = cmd.argv;
  const child = spawn(file, args, { cwd: cmd.cwd, env: cmd.env, detached: true, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
  child.on('error', () => undefined); // reported as an exit
  if (cmd.niceness) void niceSession(child.pid, cmd.niceness);
  for (const stream of ['stdout', 'stderr'] as const) {
    const s = child[stream];
    if (s) createInterface({ input: s }).on('line', (line) => report({ op: 'line', id: cmd.id, stream, line }));
  }
  child.on('exit', (code, signal) => report({ op: 'exit', id: cmd.id, code, signal }));
  if (cmd.secrets) child.send({ type: 'secrets', env: cmd.secrets }, () => undefined);
  report({ op: 'spawned', id: cmd.id, pid: child.pid ?? -1 });
});

process.on('disconnect', () => process.exit(0));
