// komputer-ai's Python SDK (PyPI `komputer-ai-sdk`, pinned), unchanged, as a client of a real
// agentplane server: a virtualenv with it, made once per version under
// ~/.cache/agentplane/peer-sdk-<version>/ (so a second run starts at once), and the driver
// (test/peer-client/driver.py) running in it, which makes each SDK call the test asks for and
// answers what came back.

import { type ChildProcessWithoutNullStreams, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const PEER_SDK_VERSION = '0.24.3';
const PACKAGE = 'komputer-ai-sdk';

/** The test tooling in Python lives with the sources (the build copies no .py files). */
const DRIVER = join(dirname(fileURLToPath(import.meta.url)), '../../../test/peer-client/driver.py');

/** The virtualenv's python, with the SDK installed; made on first use (needs PyPI then). */
export function peerSdkPython(version = PEER_SDK_VERSION): string {
  const cache = process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache');
  const venv = join(cache, 'agentplane', `peer-sdk-${version}`);
  const python = join(venv, 'bin', 'python');
  const ready = join(venv, '.installed');
  if (existsSync(ready)) return python;
  mkdirSync(dirname(venv), { recursive: true });
  // Made under a name of this process and moved in one step: a concurrent run, or one killed
  // half-way, never leaves a half-made venv under the real name.
  const tmp = `${venv}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  try {
    execFileSync('python3', ['-m', 'venv', tmp], { stdio: 'pipe' });
    execFileSync(join(tmp, 'bin', 'pip'), ['install', '-q', '--disable-pip-version-check', `${PACKAGE}==${version}`], { stdio: 'pipe', timeout: 300_000 });
    execFileSync(join(tmp, 'bin', 'python'), ['-c', 'import komputer_ai.client'], { stdio: 'pipe' });
    execFileSync('touch', [join(tmp, '.installed')]);
    if (!existsSync(ready)) {
      rmSync(venv, { recursive: true, force: true });
      renameSync(tmp, venv);
    }
  } catch (err) {
    const e = err as { stderr?: Buffer; message: string };
    throw new Error(`could not install ${PACKAGE}==${version} into a virtualenv (python3 -m venv, PyPI): ${e.stderr?.toString() || e.message}`, { cause: err });
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return python;
}

/** What one SDK call gave: its return value, the SDK's ApiException, or another failure of the SDK. */
export type PeerAnswer =
  | { ok: true; result: any }
  | { ok: false; status: number; reason: string; body: any; exception?: undefined }
  | { ok: false; exception: string; message: string; trace: string; status?: undefined };

/** The SDK's client (KomputerClient) in a driver process; calls go one at a time, in order. */
export class PeerClient {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly waiting: ((line: string) => void)[] = [];
  private stderr = '';
  private exited?: string;

  constructor(baseUrl: string, python = peerSdkPython()) {
    // Loopback only: no proxy from the environment between the SDK and the test's server.
    const env = { ...process.env, NO_PROXY: '127.0.0.1,localhost', no_proxy: '127.0.0.1,localhost', PYTHONUNBUFFERED: '1' };
    this.child = spawn(python, [DRIVER, baseUrl], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    createInterface({ input: this.child.stdout }).on('line', (line) => this.waiting.shift()?.(line));
    this.child.stderr.on('data', (d: Buffer) => (this.stderr = (this.stderr + String(d)).slice(-4000)));
    this.child.on('exit', (code, signal) => {
      this.exited = `the driver exited (${code ?? signal}): ${this.stderr}`;
      for (const w of this.waiting.splice(0)) w(JSON.stringify({ ok: false, exception: 'DriverExited', message: this.exited, trace: '' }));
    });
  }

  /** `call`: a KomputerClient method ("create_agent") or one of its generated APIs' ("squads.patch_squad"). */
  call(call: string, args: unknown[] = [], kwargs: Record<string, unknown> = {}): Promise<PeerAnswer> {
    if (this.exited) return Promise.reject(new Error(this.exited));
    return new Promise((resolve) => {
      this.waiting.push((line) => resolve(JSON.parse(line) as PeerAnswer));
      this.child.stdin.write(`${JSON.stringify({ call, args, kwargs })}\n`);
    });
  }

  /** The call's return value; throws with what the SDK raised instead. */
  async ok(call: string, args: unknown[] = [], kwargs: Record<string, unknown> = {}): Promise<any> {
    const a = await this.call(call, args, kwargs);
    if (!a.ok) throw new Error(`${call} failed: ${JSON.stringify(a)}`);
    return a.result;
  }

  /** The ApiException the call raised (its HTTP status and error body); throws if it raised none. */
  async refused(call: string, args: unknown[] = [], kwargs: Record<string, unknown> = {}): Promise<{ status: number; body: any }> {
    const a = await this.call(call, args, kwargs);
    if (a.ok || a.exception !== undefined) throw new Error(`${call}: expected an HTTP error, got ${JSON.stringify(a)}`);
    return { status: a.status, body: a.body };
  }

  async close(): Promise<void> {
    if (this.exited) return;
    const gone = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5_000);
    await gone;
    clearTimeout(timer);
  }
}

/** A model argument: the driver builds komputer_ai.models.<name>.from_dict(value). */
export const model = (name: string, value: Record<string, unknown>) => ({ __model__: name, value });

/** The error text of a refused call's body (agentplane's `error`, the key the peer uses too). */
export const errorOf = (r: { body: any }): string => String(r.body?.error ?? '');
