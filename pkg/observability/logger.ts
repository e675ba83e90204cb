// Structured JSON-line logging. Agent-scoped loggers carry namespace/name on every line.
// Secrets never reach a log: callers log refs and reasons, and `redact` guards known paths.

import { pino, type Logger as PinoLogger } from 'pino';

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
      redact: {
        paths: [
          'req.headers.authorization',
          'req.headers["x-api-key"]',
          '*.apiKey',
          '*.token',
          '*.headers.Authorization',
        ],
        censor: '[redacted]',
      },
    },
    opts.destination ?? process.stdout,
  ) as Logger;
}

export const agentLogger = (log: Logger, namespace: string, name: string): Logger =>
  log.child({ namespace, name });
