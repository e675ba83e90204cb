// A real redis-server for tests (the Debian package's /usr/bin/redis-server): on a free loopback
// port, in its own temp dir, without persistence unless asked; stopped (and its dir removed) by
// close(). restart() stops it and starts it again on the same port and dir (with `persist`, the
// append-only file brings the data back).

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const REDIS_SERVER = process.env.REDIS_SERVER ?? '/usr/bin/redis-server';

export interface RedisServerOptions {
  /** Keep data across restart(): append-only file, fsync on every write. Default off. */
  persist?: boolean;
  /** requirepass: the default user's password. */
  password?: string;
  /** Serve TLS only (no plain port), with these PEM files; clients need no certificate. */
  tls?: { certFile: string; keyFile: string; caFile: string };
  /** More redis-server arguments (e.g. ['--user', 'alice', 'on', '>pw', '~*', '&*', '+@all']). */
  args?: string[];
}

export interface RedisServer {
  port: number;
  /** redis://127.0.0.1:<port> (rediss:// with TLS). */
  url: string;
  dir: string;
  /** Its log lines so far. */
  log: string[];
  /** Stops it (SIGTERM, or SIGKILL when `kill`) and starts it again on the same port and dir. */
  restart(opts?: { kill?: boolean; downMs?: number }): Promise<void>;
  /** Stops it; restart() brings it back. */
  stop(opts?: { kill?: boolean }): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

export async function startRedisServer(opts: RedisServerOptions = {}): Promise<RedisServer> {
  const dir = mkdtempSync(join(tmpdir(), 'agentplane-redis-'));
  const port = await freePort();
  const log: string[] = [];
  const args = [
    '--bind',
    '127.0.0.1',
    '--dir',
    dir,
    '--daemonize',
    'no',
    '--logfile',
    '',
    ...(opts.tls
      ? [
          '--port',
          '0',
          '--tls-port',
          String(port),
          '--tls-cert-file',
          opts.tls.certFile,
          '--tls-key-file',
          opts.tls.keyFile,
          '--tls-ca-cert-file',
          opts.tls.caFile,
          '--tls-auth-clients',
          'no',
        ]
      : ['--port', String(port)]),
    ...(opts.persist ? ['--save', '', '--appendonly', 'yes', '--appendfsync', 'always'] : ['--save', '', '--appendonly', 'no']),
    ...(opts.password !== undefined ? ['--requirepass', opts.password] : []),
    ...(opts.args ?? []),
  ];
  let proc: ChildProcess | undefined;

  const start = async (): Promise<void> => {
    const child = spawn(REDIS_SERVER, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    proc = child;
    await new Promise<void>((resolve, reject) => {
      let buf = '';
      const onData = (chunk: Buffer): void => {
        buf += String(chunk);
        const lines = buf.split('\n');
        buf = lines.pop()!;
        log.push(...lines);
        if (lines.some((l) => l.includes('Ready to accept connections'))) resolve();
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      child.once('error', reject);
      child.once('exit', (code, signal) => reject(new Error(`redis-server exited (${code ?? signal}) before it was ready:\n${log.slice(-20).join('\n')}`)));
      setTimeout(() => reject(new Error(`redis-server not ready within 10 s:\n${log.slice(-20).join('\n')}`)), 10_000).unref();
    });
  };

  const stop = async ({ kill = false } = {}): Promise<void> => {
    const child = proc;
    proc = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(kill ? 'SIGKILL' : 'SIGTERM');
    await exited;
  };

  try {
    await start();
  } catch (err) {
    await stop({ kill: true });
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    port,
    url: `${opts.tls ? 'rediss' : 'redis'}://127.0.0.1:${port}`,
    dir,
    log,
    stop,
    start,
    async restart({ kill = false, downMs = 0 } = {}) {
      await stop({ kill });
      if (downMs) await new Promise((r) => setTimeout(r, downMs));
      await start();
    },
    async close() {
      await stop({ kill: true });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
