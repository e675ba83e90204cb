// The model proxy as a pod's native sidecar (cluster home, docs/kubernetes-runtime.md "Model
// proxy sidecar"): the one container of an agent's or squad's pod that mounts the mirrored model
// key, and runs no tools. It listens on 127.0.0.1 (the pod's network namespace, shared with the
// worker containers; not its process namespace), accepts only the model credentials of the
// pod's own agents (their worker Secrets, mounted read-only here only), and forwards with the
// same ModelProxy the server runs: streaming, retries, errors. What the server learns from its
// own proxy, the sidecar reports to it (usage, retries, failures; ./reports.ts).
//
// Both the key and the credentials are files the kubelet keeps up to date, read again at most
// once per REFRESH_MS: a rotated key, or a credential the runtime removed, take effect without
// a restart.

import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { BUDGET_HEADER, type BudgetAnswer, MODEL_REPORT_PATH, type ModelReport } from '../api/worker-protocol.js';
import { type ObjectRef, refKey } from '../api/meta.js';
import { componentLogger, type Logger } from '../observability/logger.js';
import type { ModelGrant } from './credentials.js';
import { type BudgetGate, type GrantAuthenticator, ModelProxy, type ModelProxyEvents, type UsageSink } from './proxy.js';
import type { RetryPolicy } from './retry.js';
import type { TokenUsage } from './usage.js';

/** The key file and the optional base URL file in the mirrored Secret (its data keys). */
export const KEY_FILE = 'ANTHROPIC_API_KEY';
export const BASE_URL_FILE = 'ANTHROPIC_BASE_URL';
/** Each agent's credential, in a directory named for the agent. */
export const CREDENTIAL_FILE = 'model-credential';
/** Beside it, the agent's report credential: mounted into the sidecar only, it authenticates reports. */
export const REPORT_CREDENTIAL_FILE = 'report-credential';
const REFRESH_MS = 1000;
/** A report the server does not answer within this long is given up (and logged). */
const REPORT_TIMEOUT_MS = 5000;

/** A file's trimmed text, re-read at most once per REFRESH_MS; undefined when absent. */
class WatchedFile {
  private value: string | undefined;
  private readAt = 0;
  constructor(private readonly path: string) {}
  get(): string | undefined {
    const now = Date.now();
    if (now - this.readAt >= REFRESH_MS) {
      this.readAt = now;
      this.value = readText(this.path);
    }
    return this.value;
  }
}

/**
 * The pod's agents' credentials: `<dir>/<agent>/model-credential` (what engines present) and
 * `<dir>/<agent>/report-credential` (what reports to the server carry), re-read at most once per
 * REFRESH_MS.
 */
export class FileCredentials implements GrantAuthenticator {
  private byCredential = new Map<string, ObjectRef>();
  private reports = new Map<string, string>();
  private readAt = 0;
  constructor(
    private readonly dir: string,
    private readonly namespace: string,
  ) {}

  authenticate(credential: string | undefined): ModelGrant | undefined {
    if (!credential) return undefined;
    this.refresh();
    const ref = this.byCredential.get(credential);
    // The server knows the incarnation (uid); the sidecar only forwards for the agent.
    return ref ? { ref, uid: '' } : undefined;
  }

  /** The report credential of an agent of the pod (to report for it). */
  reportCredentialOf(ref: ObjectRef): string | undefined {
    this.refresh();
    return this.reports.get(refKey(ref));
  }

  private refresh(): void {
    const now = Date.now();
    if (now - this.readAt < REFRESH_MS) return;
    this.readAt = now;
    const next = new Map<string, ObjectRef>();
    const reports = new Map<string, string>();
    let agents: string[] = [];
    try {
      agents = readdirSync(this.dir);
    } catch {
      // no agents mounted
    }
    for (const name of agents) {
      if (name.startsWith('.')) continue;
      const ref = { namespace: this.namespace, name };
      const cred = readText(join(this.dir, name, CREDENTIAL_FILE));
      if (!cred) continue;
      next.set(cred, ref);
      const report = readText(join(this.dir, name, REPORT_CREDENTIAL_FILE));
      if (report) reports.set(refKey(ref), report);
    }
    this.byCredential = next;
    this.reports = reports;
  }
}

/**
 * Sends the sidecar's reports to the server, as the agent they concern, and asks it before each
 * request of an agent with a budget (docs/budgets.md): every answer says whether budgets apply
 * to the agent, so agents without one pay no extra hop. An agent not heard of yet is asked for.
 */
export class ServerReporter implements UsageSink, ModelProxyEvents, BudgetGate {
  private readonly url: URL;
  /** Per agent: whether the server's last answer said budgets apply. */
  private readonly budgeted = new Map<string, boolean>();
  constructor(
    serverUrl: string,
    private readonly credentials: FileCredentials,
    private readonly logger: Logger,
  ) {
    this.url = new URL(MODEL_REPORT_PATH, serverUrl);
  }

  async record(grant: ModelGrant, model: string, usage: TokenUsage): Promise<void> {
    await this.send(grant, { type: 'usage', model, usage });
  }

  /**
   * Told as each request starts, and not waited for: the server times the task's first request
   * on its own clock when this arrives (agentplane_task_first_model_request_seconds), one
   * loopback-to-node hop late.
   */
  modelRequested(ref: ObjectRef): void {
    void this.send({ ref, uid: '' }, { type: 'requested' });
  }

  /** Unknown here: each request's retries are bounded by the deadline from its own start. */
  taskStartedAt(): number | undefined {
    return undefined;
  }

  retry(grant: ModelGrant, payload: Extract<ModelReport, { type: 'retry' }>['payload']): void {
    void this.send(grant, { type: 'retry', payload });
  }

  /** Resolves once the server has the report (or gave up): the engine hears of the failure after. */
  async failed(grant: ModelGrant, error: Extract<ModelReport, { type: 'failed' }>['error']): Promise<void> {
    await this.send(grant, { type: 'failed', error });
  }

  /**
   * Waits for the server's word (a held task's request waits here until its budget is raised);
   * a server that cannot be asked lets the request go (logged): budgets never stop a pod alone.
   */
  async admit(grant: ModelGrant, signal: AbortSignal): Promise<BudgetAnswer> {
    if (this.budgeted.get(refKey(grant.ref)) === false) return { allow: true };
    const answer = await this.send(grant, { type: 'admit' }, signal);
    if (answer && typeof answer === 'object' && (answer as BudgetAnswer).allow === false) {
      const message = (answer as { message?: unknown }).message;
      return { allow: false, message: typeof message === 'string' ? message : 'a budget is spent' };
    }
    return { allow: true };
  }

  /** Resolves (with an admit's answer) once the server has the report, or gave up. */
  private send(grant: ModelGrant, report: ModelReport, signal?: AbortSignal): Promise<unknown> {
    const credential = this.credentials.reportCredentialOf(grant.ref);
    const body = JSON.stringify(report);
    const log = this.logger.child({ namespace: grant.ref.namespace, name: grant.ref.name, report: report.type });
    if (!credential) {
      log.warn('report dropped: the agent has no report credential here (any more)');
      return Promise.resolve(undefined);
    }
    const admit = report.type === 'admit';
    return new Promise((resolve) => {
      const req = http.request(this.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'x-api-key': credential },
        // An admit of a held task waits as long as the hold: the engine's going away ends it.
        ...(admit ? { signal } : { timeout: REPORT_TIMEOUT_MS }),
      });
      req.on('response', (res) => {
        const flag = res.headers[BUDGET_HEADER];
        if (flag === 'on' || flag === 'off') this.budgeted.set(refKey(grant.ref), flag === 'on');
        if (res.statusCode !== 204 && res.statusCode !== 200) log.warn({ status: res.statusCode }, 'the server refused a report');
        if (!admit || res.statusCode !== 200) {
          res.resume();
          return resolve(undefined);
        }
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve(parseJson(text)));
        res.on('error', () => resolve(undefined));
      });
      req.on('timeout', () => req.destroy(new Error(`no answer within ${REPORT_TIMEOUT_MS} ms`)));
      req.on('error', (err) => {
        if (!signal?.aborted) log.warn({ err: err.message }, 'report not delivered');
        resolve(undefined);
      });
      req.end(body);
    });
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

export interface SidecarOptions {
  /** The agents' namespace (the pod's). */
  namespace: string;
  /** Where the server's worker listener is (reports). */
  serverUrl: string;
  port: number;
  /** The mounted mirror: ANTHROPIC_API_KEY, and optionally ANTHROPIC_BASE_URL. */
  keyDir: string;
  /** The mounted credentials, one directory per agent. */
  credentialsDir: string;
  /** The model API when the mirror has no ANTHROPIC_BASE_URL (the server's). */
  upstream?: string;
  retry?: Partial<RetryPolicy>;
  logger: Logger;
}

export interface RunningSidecar {
  url: string;
  close(): Promise<void>;
}

export async function startSidecar(o: SidecarOptions): Promise<RunningSidecar> {
  const credentials = new FileCredentials(o.credentialsDir, o.namespace);
  const reporter = new ServerReporter(o.serverUrl, credentials, componentLogger(o.logger, 'reports'));
  const key = new WatchedFile(join(o.keyDir, KEY_FILE));
  // The base URL is read once: a proxy's upstream connection pool is bound to it.
  const upstream = readText(join(o.keyDir, BASE_URL_FILE)) || o.upstream;
  const proxy = new ModelProxy({
    ...(upstream ? { upstream } : {}),
    apiKey: () => key.get(),
    credentials,
    meter: reporter,
    events: reporter,
    budget: reporter,
    logger: o.logger,
    keyHint: `the model Secret mirrored into namespace ${o.namespace} (its source in the install namespace)`,
    ...(o.retry ? { retry: o.retry } : {}),
  });
  if (!key.get()) o.logger.warn({ file: join(o.keyDir, KEY_FILE) }, 'no model key mounted: requests go upstream without one');
  const server = http.createServer((req, res) => {
    const path = req.url ?? '/';
    if (req.method === 'GET' && path === '/healthz') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      return void res.end('ok');
    }
    proxy.handle(req, res, path).catch((err: unknown) => {
      o.logger.error({ err: String(err) }, 'model proxy failed');
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ type: 'error', error: { type: 'api_error', message: 'model proxy failure' } }));
    });
  });
  // Long streams: no server-side timeouts beyond the proxy's own.
  server.requestTimeout = 0;
  server.headersTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, '127.0.0.1', () => resolve());
  });
  const addr = server.address();
  const url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : o.port}`;
  o.logger.info({ url, upstream: upstream ?? 'default' }, 'model proxy sidecar listening');
  return {
    url,
    close: () =>
      new Promise((resolve) => {
        proxy.close();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}
