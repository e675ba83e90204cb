// A real OpenTelemetry Collector for the trace tests (hack/tools/otelcol, built and cached by
// hack/build-otelcol.sh): its OTLP/HTTP receiver on loopback takes agentplane's spans in either
// protocol, and its OTLP/HTTP exporter sends them on as OTLP/JSON (`encoding: json`) to a small
// HTTP sink here, so the spans the tests read are the ones the real collector decoded.

import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './server-process.js';

const BUILD = fileURLToPath(new URL('../../../hack/build-otelcol.sh', import.meta.url));

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  startNs: bigint;
  service: string;
  attributes: Record<string, string | number | boolean>;
}

export interface TestCollector {
  /** The OTLP/HTTP receiver's base URL (OTEL_EXPORTER_OTLP_ENDPOINT). */
  endpoint: string;
  spans: ReceivedSpan[];
  output: string[];
  close(): Promise<void>;
}

/** The collector binary, built the first time (minutes) and cached by version. */
export function collectorBinary(): string {
  const out = execFileSync('bash', [BUILD], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 30 * 60_000 });
  return out.trim().split('\n').pop()!;
}

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
const valueOf = (v: AnyValue): string | number | boolean =>
  v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.boolValue ?? v.doubleValue ?? ''));
const attrs = (list: { key: string; value: AnyValue }[] = []): Record<string, string | number | boolean> =>
  Object.fromEntries(list.map((a) => [a.key, valueOf(a.value)]));

/** OTLP/JSON's ExportTraceServiceRequest, flattened. */
function decode(body: string): ReceivedSpan[] {
  const req = JSON.parse(body) as {
    resourceSpans?: { resource?: { attributes?: { key: string; value: AnyValue }[] }; scopeSpans?: { spans?: Record<string, unknown>[] }[] }[];
  };
  const out: ReceivedSpan[] = [];
  for (const rs of req.resourceSpans ?? []) {
    const service = String(attrs(rs.resource?.attributes)['service.name'] ?? '');
    for (const ss of rs.scopeSpans ?? [])
      for (const s of ss.spans ?? [])
        out.push({
          traceId: String(s.traceId),
          spanId: String(s.spanId),
          parentSpanId: typeof s.parentSpanId === 'string' ? s.parentSpanId : '',
          name: String(s.name),
          startNs: BigInt(String(s.startTimeUnixNano)),
          service,
          attributes: attrs(s.attributes as { key: string; value: AnyValue }[]),
        });
  }
  return out;
}

/** The collector, its receiver on `host` (loopback; the node's IP for agent pods), and the sink on loopback. */
export async function startCollector(bin: string, host = '127.0.0.1'): Promise<TestCollector> {
  const spans: ReceivedSpan[] = [];
  const sink: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url === '/v1/traces') spans.push(...decode(Buffer.concat(chunks).toString('utf8')));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
  const sinkPort = (sink.address() as { port: number }).port;
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'otelcol-'));
  const config = join(dir, 'config.yaml');
  writeFileSync(
    config,
    [
      'receivers:',
      '  otlp:',
      '    protocols:',
      '      http:',
      `        endpoint: ${host}:${port}`,
      'exporters:',
      '  otlphttp:',
      `    endpoint: http://127.0.0.1:${sinkPort}`,
      '    encoding: json',
      '    compression: none',
      '    sending_queue:',
      '      batch:',
      '        flush_timeout: 100ms',
      'service:',
      '  telemetry:',
      '    metrics:',
      '      level: none',
      '  pipelines:',
      '    traces:',
      '      receivers: [otlp]',
      '      exporters: [otlphttp]',
      '',
    ].join('\n'),
  );
  const child: ChildProcess = spawn(bin, ['--config', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  for (const s of [child.stdout!, child.stderr!]) s.on('data', (c: Buffer) => output.push(...String(c).split('\n').filter(Boolean)));
  const endpoint = `http://${host}:${port}`;
  const t0 = Date.now();
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the collector exited:\n${output.join('\n')}`);
    if (Date.now() - t0 > 30_000) throw new Error(`the collector did not listen within 30 s:\n${output.join('\n')}`);
    try {
      // An empty OTLP/JSON request: 200 once the receiver is up.
      const r = await fetch(`${endpoint}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      if (r.ok) break;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    endpoint,
    spans,
    output,
    close: async () => {
      child.kill('SIGTERM');
      if (child.exitCode === null) await new Promise((r) => child.once('exit', r));
      await new Promise((r) => sink.close(r));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
