// `kubectl agentplane`: the CLI's calls sent to kube-apiserver with the kubeconfig's server,
// CA and credentials (client certificates, bearer tokens, exec plugins: @kubernetes/client-node's
// KubeConfig computes them), so Kubernetes authenticates, authorizes (RBAC) and audits them.
// Paths under /apis go as they are; the REST calls the commands make are mapped onto the
// aggregated API by kube-routes.ts; an agent's live events are its `log?follow=true` stream.

import { EventEmitter } from 'node:events';
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { refusal } from '../client.js';
import type { Target } from '../config.js';
import { CliError, EXIT } from '../exit-codes.js';
import { AGENT_DELETED } from '../follow.js';
import type { RequestWhat } from '../hints.js';
import type { CallOptions, EventSocket, Reply, Transport } from '../transport.js';
import { agentsPath, type KubeApi, type KubeReply, restOverKube } from './kube-routes.js';

/** A kubeconfig-resolved target: the cluster's server and the context used. */
export interface KubeTarget extends Target {
  context: string;
}

export class KubeTransport implements Transport, KubeApi {
  constructor(
    readonly target: KubeTarget,
    private readonly kc: KubeConfig,
    /** The command being run, e.g. "squad ls", for "not available through kubectl yet". */
    private readonly command: string,
    private readonly timeoutMs = 60_000,
  ) {}

  call<T = unknown>(method: string, path: string, opts: CallOptions = {}): Promise<Reply<T>> {
    if (path.startsWith('/apis/')) return this.request<T>(method, path, opts);
    return restOverKube(this, this.command, method, path, opts) as Promise<Reply<T>>;
  }

  /** One request to kube-apiserver: 2xx gives the parsed body and its warnings, else the Status as a refusal. */
  async request<T>(method: string, path: string, opts: CallOptions & { contentType?: string } = {}): Promise<KubeReply<T>> {
    const res = await this.open(method, path, opts, this.timeoutMs);
    const text = await readAll(res);
    const status = res.statusCode ?? 0;
    if (status < 200 || status >= 300) throw refusal(status, text, this.what(opts));
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      // a non-JSON success body is returned as text
    }
    return { status, body: body as T, warnings: warningsOf(res.headers.warning) };
  }

  async openEvents(namespace: string, name: string, since: number | undefined, onMessage: (data: string) => void): Promise<EventSocket> {
    const path = `${agentsPath(namespace)}/${encodeURIComponent(name)}/log`;
    const res = await this.open('GET', path, { query: { follow: true, since }, accept: 'text/plain' }, 0);
    if (res.statusCode !== 200) throw refusal(res.statusCode ?? 0, await readAll(res), this.what({ kind: 'agent', ns: namespace }));
    // The stream ends when the agent is deleted (or kube-apiserver goes): say which, as the WebSocket's close code does.
    const endCode = async (): Promise<number> => {
      try {
        const { body } = await this.request<{ metadata?: { deletionTimestamp?: string } }>('GET', `${agentsPath(namespace)}/${encodeURIComponent(name)}`);
        return body.metadata?.deletionTimestamp ? AGENT_DELETED : 1006;
      } catch (err) {
        return (err as { status?: number }).status === 404 ? AGENT_DELETED : 1006;
      }
    };
    return new LogStream(res, onMessage, endCode);
  }

  private what(opts: CallOptions): RequestWhat {
    const ns = opts.ns ?? (typeof opts.query?.namespace === 'string' ? opts.query.namespace : undefined);
    return {
      server: this.target.server,
      hasToken: true,
      kubeContext: this.target.context,
      ...(opts.kind ? { kind: opts.kind } : {}),
      ...(ns ? { namespace: ns } : {}),
    };
  }

  /** Sends the request with the kubeconfig's TLS and credentials; resolves with the response, however it answered. */
  private async open(method: string, path: string, opts: CallOptions & { contentType?: string }, timeoutMs: number): Promise<IncomingMessage> {
    const url = new URL(`${this.target.server}${path}`);
    for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined && k !== 'namespace') url.searchParams.set(k, String(v));
    const body = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    const headers: Record<string, string> = { accept: opts.accept ?? 'application/json' };
    if (body !== undefined) headers['content-type'] = opts.contentType ?? 'application/json';
    const o: https.RequestOptions = { method, headers };
    try {
      await this.kc.applyToHTTPSOptions(o);
    } catch (err) {
      throw new CliError(
        `cannot get credentials for kube context "${this.target.context}": ${(err as Error).message}`,
        "check the context's user in the kubeconfig (`kubectl config view --minify`)",
        EXIT.USAGE,
      );
    }
    return new Promise((resolve, reject) => {
      const req = (url.protocol === 'https:' ? https : http).request(url, o, resolve);
      if (timeoutMs) {
        req.setTimeout(timeoutMs, () =>
          req.destroy(
            new CliError(
              `kube-apiserver at ${this.target.server} did not answer ${method} ${path} within ${timeoutMs / 1000} s`,
              'try again',
              EXIT.UNREACHABLE,
            ),
          ),
        );
      }
      req.on('error', (err) => reject(err instanceof CliError ? err : this.unreachable(err)));
      req.end(body);
    });
  }

  private unreachable(err: Error): CliError {
    const why = (err as NodeJS.ErrnoException).code ?? err.message;
    return new CliError(
      `cannot reach kube-apiserver at ${this.target.server} (kube context "${this.target.context}"; ${why})`,
      'check the context (`kubectl config current-context`, --context, --kubeconfig) and that `kubectl get --raw /readyz` answers',
      EXIT.UNREACHABLE,
    );
  }
}

/** The `Warning` header's texts (`299 - "text"`, comma-separated when several). */
function warningsOf(h: string | string[] | undefined): string[] {
  const all = Array.isArray(h) ? h.join(', ') : (h ?? '');
  return [...all.matchAll(/\d{3} \S+ "((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]);
}

function readAll(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    res.setEncoding('utf8');
    res.on('data', (d: string) => (text += d));
    res.on('end', () => resolve(text));
    res.on('error', reject);
  });
}

/** An agent's `log?follow=true` response as an EventSocket: each line a message; its end a close with a code. */
class LogStream extends EventEmitter implements EventSocket {
  private closed: { code: number; reason: Buffer } | undefined;

  constructor(
    private readonly res: IncomingMessage,
    onMessage: (data: string) => void,
    endCode: () => Promise<number>,
  ) {
    super();
    let partial = '';
    res.setEncoding('utf8');
    res.on('data', (d: string) => {
      const lines = (partial + d).split('\n');
      partial = lines.pop()!;
      for (const line of lines) if (line.trim()) onMessage(line);
    });
    res.on('error', (err) => this.emit('error', err));
    res.on('close', () => {
      if (!this.closed) void endCode().then((code) => this.finish(code, 'the event stream ended'));
    });
  }

  close(code = 1000): void {
    this.finish(code, '');
    this.res.destroy();
  }

  /** A 'close' listener added after the end still hears it (follow.ts listens once the stream is open). */
  override on(event: string | symbol, fn: (...args: never[]) => void): this {
    super.on(event, fn as (...args: unknown[]) => void);
    const closed = this.closed;
    if (event === 'close' && closed) queueMicrotask(() => (fn as (code: number, reason: Buffer) => void)(closed.code, closed.reason));
    return this;
  }

  private finish(code: number, reason: string): void {
    if (this.closed) return;
    this.closed = { code, reason: Buffer.from(reason) };
    this.emit('close', code, this.closed.reason);
  }
}
