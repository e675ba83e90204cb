// Where local workers' output goes: their stdout lines (already JSON, naming the agent) to the
// service's log sink, their stderr lines wrapped as warnings of the service's logger.

import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import type { Logger } from '../../observability/logger.js';

export interface LogTargets {
  logger: Logger;
  /** Where workers' JSON log lines go; default the service's stdout. */
  logSink?: (line: string) => void;
}

/** Where a solo worker's output lines go (relayed by the spawner). */
export function workerLogLines(t: LogTargets, fields: Record<string, string>): { stdout(l: string): void; stderr(l: string): void } {
  const sink = t.logSink ?? ((l: string) => process.stdout.write(`${l}\n`));
  const log = t.logger.child({ ...fields, stream: 'stderr' });
  return { stdout: sink, stderr: (l) => log.warn(l) };
}

/** Relays a child's output (a group supervisor's: its members' lines). */
export function forwardLogs(child: ChildProcess, t: LogTargets, fields: Record<string, string>): void {
  // Worker lines are already JSON with namespace/name; stderr lines are wrapped so they are too.
  const sink = t.logSink ?? ((l: string) => process.stdout.write(`${l}\n`));
  lines(child.stdout, sink);
  const log = t.logger.child({ ...fields, stream: 'stderr' });
  lines(child.stderr, (l) => log.warn(l));
}

function lines(stream: Readable | null, fn: (line: string) => void): void {
  if (stream) createInterface({ input: stream }).on('line', fn);
}
