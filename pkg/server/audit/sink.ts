// Where audit events go: one JSON line each, through a single append stream (a file opened
// once, mode 0600, or stdout for "-"). close() flushes what is buffered; the manager calls it
// after the HTTP server has stopped, so the last requests' lines are written.

import { closeSync, createWriteStream, openSync, type WriteStream } from 'node:fs';
import type { Logger } from '../../observability/logger.js';

export interface AuditSink {
  write(event: object): void;
  close(): Promise<void>;
}

/** Opens `path` for appending ("-" for stdout); throws at once when the file cannot be opened. */
export function openAuditSink(path: string, logger: Logger): AuditSink {
  if (path === '-') {
    return {
      write: (event) => void process.stdout.write(`${JSON.stringify(event)}\n`),
      close: async () => undefined,
    };
  }
  const fd = openSync(path, 'a', 0o600);
  let stream: WriteStream;
  try {
    stream = createWriteStream(path, { fd, flags: 'a' });
  } catch (err) {
    closeSync(fd);
    throw err;
  }
  let failed = false;
  stream.on('error', (err) => {
    if (!failed) logger.error({ err: err.message, path }, 'audit log: write failed; later events are lost');
    failed = true;
  });
  let closed: Promise<void> | undefined;
  return {
    write(event) {
      if (closed || failed) return;
      stream.write(`${JSON.stringify(event)}\n`);
    },
    close() {
      closed ??= new Promise<void>((resolve) => {
        if (failed) return resolve();
        stream.end(() => resolve());
        stream.once('error', () => resolve());
      });
      return closed;
    },
  };
}
