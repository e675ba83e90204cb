// Structured JSON-line logging. Agent-scoped loggers carry namespace/name on every line.
// Lines written inside a span carry its trace_id and span_id. Secrets never reach a log: callers log refs and reasons, and `redact` guards known paths.

import { pino, type Logger as PinoLogger } from 'pino';
import { logIds } from './tracing.js';

export type Logger = PinoLogger;

export interface LoggerOptions {
  level?: string;
  /** Where lines go; default stdout. */
  destination?: NodeJS.WritableStream;
}

export function createLogger(opts: LoggerOptions = {}): Logger {
  return pino(
    {
      level: opts.level ?? process.env.AGENTPLANE_LOG_LEVEL ?? 'info',
      base: { service: 'agentplane' },
      timestamp: pino.stdTimeFunctions.isoTime,
      // trace_id and span_id of the active span, when tracing is on and one is (tracing.ts).
      mixin: logIds,
      redact: {
        paths: ['req.headers.authorization', 'req.headers["x-api-key"]', '*.apiKey', '*.token', '*.headers.Authorization'],
        censor: '[redacted]',
      },
    },
    opts.destination ?? process.stdout,
  );
}

/**
 * `log` with `bindings` added once: pino writes a key bound twice twice on every line, so keys the
 * chain already binds to the same value are left out.
 */
function bindOnce(log: Logger, bindings: Record<string, unknown>): Logger {
  const bound = log.bindings();
  return log.child(Object.fromEntries(Object.entries(bindings).filter(([k, v]) => bound[k] !== v)));
}

export const agentLogger = (log: Logger, namespace: string, name: string): Logger => bindOnce(log, { namespace, name });

/**
 * The logger of one part of the service (`component`); a part inside another (the runtime's
 * hub) keeps its parent's `component` and is named by `subcomponent`, so each key is on a line
 * once.
 */
export function componentLogger(log: Logger, component: string, bindings: Record<string, unknown> = {}): Logger {
  const parent = log.bindings().component as string | undefined;
  if (parent === undefined || parent === component) return bindOnce(log, { component, ...bindings });
  if (log.bindings().subcomponent !== undefined) throw new Error(`logger "${parent}" already has a subcomponent; "${component}" would repeat the key`);
  return bindOnce(log, { subcomponent: component, ...bindings });
}
