// A squad's group supervisor in the local runtime: a process that leads its own process group
// and runs one worker per member (as, in the cluster home, a squad's pod runs one container per
// member). Members are added and removed over IPC without touching the others; when the runtime
// goes away, so does the group.

import { type ChildProcess, spawn } from 'node:child_process';
import type { GroupCommand, GroupReport } from './group-protocol.js';

const STOP_GRACE_MS = 5000;

const members = new Map<string, ChildProcess>();
const stopping = new Set<ChildProcess>();

const report = (r: GroupReport): void => {
  if (process.connected) process.send!(r);
};

function start(member: string, argv: string[], env: Record<string, string>, cwd: string, secrets?: Record<string, string>): void {
  if (members.has(member)) return;
  // Not detached: the worker joins this supervisor's process group, so stopping the group stops it. The
  // IPC channel is how one member is asked to stop: a sandboxed worker's bwrap ignores SIGTERM.
  const [cmd, ...args] = argv;
  const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  members.set(member, child);
  if (secrets) child.send({ type: 'secrets', env: secrets }, () => undefined);
  report({ op: 'started', member, pid: child.pid ?? -1 });
  child.on('exit', (code, signal) => {
    if (members.get(member) === child) members.delete(member);
    report({ op: 'exited', member, code, signal, requested: stopping.delete(child) });
  });
}

function stop(member: string): void {
  const child = members.get(member);
  if (!child) return;
  members.delete(member);
  stopping.add(child);
  if (child.connected) child.disconnect();
  child.kill('SIGTERM');
  setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS).unref();
}

process.on('message', (cmd: GroupCommand) => {
  if (cmd.op === 'start') start(cmd.member, cmd.argv, cmd.env, cmd.cwd, cmd.secrets);
  else if (cmd.op === 'stop') stop(cmd.member);
});

const shutdown = (): void => {
  for (const m of [...members.keys()]) stop(m);
  setTimeout(() => process.exit(0), 100).unref();
};
process.on('disconnect', shutdown);
process.on('SIGTERM', shutdown);
