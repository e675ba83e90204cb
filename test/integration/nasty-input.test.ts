// Hand-picked nasty input against a real embedded server (docs/reliability.md "Nasty input"):
// unicode and control characters in every string field, huge numbers, deep nesting, duplicate
// and prototype keys, path traversal, header injection, slow clients and 1,000 idle connections.
// Every answer is checked the same way: a 4xx in the path's own error format (or a 2xx that kept
// the text exactly), never a 5xx; after a refusal nothing changed; the server keeps serving.

import { readdirSync } from 'node:fs';
import net from 'node:net';
import { join, relative } from 'node:path';
import WebSocket from 'ws';
import { expect } from 'chai';
import { runTask } from '../support/agents.js';
import { EventClient, eventually, type Harness, type Reply, startHarness } from '../support/harness.js';

const GV = 'agentplane.io/v1alpha1';
const AGG = `/apis/${GV}/namespaces/default`;
const TIMEOUTS = { headersMs: 1500, requestMs: 4000, keepAliveMs: 2000, checkIntervalMs: 100 };

/** Strings that have broken servers: controls, CRLF, bidi and zero-width, lone surrogates, emoji, long. */
const NASTY: Record<string, string> = {
  nul: 'a\u0000b',
  crlf: 'a\r\nX-Injected: 1',
  escape: '\u001b[31mred\u001b[0m',
  bidi: 'abc\u202edcba',
  zeroWidth: 'a\u200bb\ufeff',
  loneSurrogate: 'a\ud800b',
  nonCharacter: 'a\uffffb',
  emoji: 'agent-🙂',
  accents: 'ägent-ñ',
  traversal: '../../etc/passwd',
  encodedTraversal: '%2e%2e%2f%2e%2e%2f',
  long: 'n'.repeat(300),
};

/** `s` once a lone surrogate has become U+FFFD (text through a UTF-8 pipe: the worker, the engine). */
const wire = (s: string): string => s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');

/** Percent-encodes the UTF-8 bytes of `s` (encodeURIComponent throws on a lone surrogate). */
const enc = (s: string): string => [...Buffer.from(s)].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');

/** A raw request over a fresh socket: the status line and the (JSON) body. */
function rawRequest(port: number, request: string): Promise<{ status: number; head: string; body: any }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(request));
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => (text += d));
    socket.on('error', reject);
    socket.on('close', () => {
      const split = text.indexOf('\r\n\r\n');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), head: text.slice(0, split), body: JSON.parse(text.slice(split + 4) || 'null') });
    });
  });
}

describe('nasty input (integration)', function () {
  this.timeout(120_000);
  let h: Harness;
  let port: number;
  let mcp: net.Server;
  const mcpRequests: string[] = [];

  /** A refusal: the given 4xx, in the REST format on /api/v1 and metav1.Status on /apis. */
  function refused(r: Reply<any>, what: string, status?: number): void {
    const path = /(\/\S*)/.exec(what)?.[1] ?? '';
    expect(r.status, `${what}: ${r.text.slice(0, 300)}`).to.be.within(400, 499);
    if (status) expect(r.status, `${what}: ${r.text.slice(0, 300)}`).to.equal(status);
    if (path.startsWith('/apis')) expect(r.body, path).to.include({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: r.status });
    else {
      expect(r.body, path).to.include({ code: r.status });
      expect(r.body.error, path).to.be.a('string').and.not.equal('');
      expect(r.body.reason, path).to.be.a('string');
    }
  }

  /** What a refusal must leave alone: every object's identity and spec, and the event history. */
  async function snapshot(): Promise<string> {
    const parts: unknown[] = [];
    for (const res of ['agents', 'squads', 'connectors']) {
      const list = await h.api('GET', `${AGG}/${res}`);
      expect(list.status).to.equal(200);
      parts.push((list.body.items as any[]).map((o) => [o.metadata.name, o.metadata.uid, o.metadata.generation, o.metadata.labels, o.spec]));
    }
    const secrets = await h.api('GET', '/api/v1/secrets');
    parts.push((secrets.body.secrets as any[]).map((s) => [s.name, s.keys, s.allowedUrls]));
    const events = await h.api('GET', '/api/v1/agents/keeper/events?limit=200');
    parts.push((events.body.events as any[]).map((e) => [e.seq, e.type]));
    return JSON.stringify(parts);
  }

  /** Deletes through `path` and waits until it is gone (finalizers run first). */
  async function remove(path: string): Promise<void> {
    expect((await h.api('DELETE', path)).status, path).to.be.oneOf([200, 202]);
    await eventually(async () => (await h.api('GET', path)).status === 404, 30_000, `${path} gone`);
  }

  /** Files under the data dir (names only): a refused request creates none anywhere. */
  const files = (dir = h.dataDir): string[] =>
    readdirSync(dir, { withFileTypes: true, recursive: true })
      .map((d) => relative(h.dataDir, join(d.parentPath, d.name)))
      .filter((f) => !/-(wal|shm|journal)$/.test(f))
      .sort();

  let baseline: string;
  before(async () => {
    // The "MCP server" a connector points at: a raw listener that records the bytes it is sent.
    mcp = net.createServer((s) => {
      s.setEncoding('latin1');
      s.on('data', (d: string) => {
        mcpRequests.push(d);
        s.end('HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n');
      });
    });
    await new Promise<void>((r) => mcp.listen(0, '127.0.0.1', r));
    h = await startHarness({ httpTimeouts: TIMEOUTS });
    port = h.server.port;
    await runTask(h, 'keeper', '@bash echo kept > kept.txt\n@say kept');
    expect((await h.api('POST', '/api/v1/secrets', { name: 'token', data: { value: 'clean-token' } })).status).to.equal(201);
    expect(
      (await h.api('POST', '/api/v1/connectors', { name: 'tools', url: `http://127.0.0.1:${(mcp.address() as net.AddressInfo).port}/mcp` })).status,
    ).to.equal(201);
    baseline = await snapshot();
  });
  after(async () => {
    await h?.close();
    await new Promise((r) => mcp?.close(r));
  });

  /** After each group: nothing changed, the server is alive and never logged a 5xx or a crash. */
  async function unchangedAndAlive(): Promise<void> {
    expect(await snapshot()).to.equal(baseline);
    expect((await h.api('GET', '/healthz')).status).to.equal(200);
    const bad = h.logs.filter((l) => /"level":(50|60)/.test(l) && !/worker|engine/.test(l));
    expect(bad, bad.join('\n')).to.deep.equal([]);
  }

  describe('unicode and control characters in every string field', () => {
    it('names, namespaces and enumerated fields of agents are refused with the field named', async () => {
      for (const [kind, s] of Object.entries(NASTY)) {
        const bodies: [string, Record<string, unknown>][] = [
          ['name', { name: s, instructions: '@say x' }],
          ['namespace', { name: 'n1', namespace: s, instructions: '@say x' }],
          ['model', { name: 'n1', instructions: '@say x', model: s }],
          ['templateRef', { name: 'n1', instructions: '@say x', templateRef: s }],
          ['role', { name: 'n1', instructions: '@say x', role: s }],
          ['lifecycle', { name: 'n1', instructions: '@say x', lifecycle: s }],
          ['connectors', { name: 'n1', instructions: '@say x', connectors: [s] }],
        ];
        for (const [field, body] of bodies) {
          // A model id may be any printable text (a proxy's model names vary): only invisible ones are refused.
          if (field === 'model' && !['nul', 'crlf', 'escape', 'bidi', 'zeroWidth', 'loneSurrogate'].includes(kind)) continue;
          const r = await h.api('POST', '/api/v1/agents', body);
          refused(r, `/api/v1/agents ${field}=${kind}`, 400);
          expect(JSON.stringify(r.body.details.causes), `${field}=${kind}`).to.contain(`"field":"${field}`);
        }
        const agg = await h.api('POST', `${AGG}/agents`, { apiVersion: GV, kind: 'Agent', metadata: { name: s }, spec: { instructions: 'x' } });
        refused(agg, `${AGG}/agents name=${kind}`, 422);
      }
      await unchangedAndAlive();
    });

    it('free text (instructions, systemPrompt) is kept exactly, whatever it holds, and the task still ends', async () => {
      const text = Object.values(NASTY).join(' | ');
      const r = await h.api('POST', '/api/v1/agents', { name: 'free-text', instructions: `@say ${text}`, systemPrompt: text });
      expect(r.status, r.text).to.equal(201);
      const ws = new EventClient(`${h.url}/api/v1/agents/free-text/ws`);
      try {
        const events = await ws.untilTaskEnd();
        const started = events.find((e) => e.type === 'task_started')!;
        expect(wire((started.payload as { instructions: string }).instructions)).to.equal(wire(`@say ${text}`));
      } finally {
        ws.close();
      }
      const agg = await h.api('GET', `${AGG}/agents/free-text`);
      // Stored and served exactly: JSON escapes what UTF-8 cannot carry (\ud800).
      expect(agg.body.spec.systemPrompt).to.equal(text);
      await remove('/api/v1/agents/free-text');
      baseline = await snapshot();
    });

    it('squads, connectors and secrets: every named or structured string is refused in the REST format', async () => {
      for (const [kind, s] of Object.entries(NASTY)) {
        const member = { name: 'm1', spec: { instructions: '@say x' } };
        const other = { name: 'm2', spec: { instructions: '@say x' } };
        const cases: [string, string, unknown][] = [
          ['/api/v1/squads', 'name', { name: s, members: [member, other] }],
          ['/api/v1/squads', 'members[0].name', { name: 'sq', members: [{ ...member, name: s }, other] }],
          ['/api/v1/squads', 'members[0].ref.name', { name: 'sq', members: [{ ref: { name: s } }, other] }],
          ['/api/v1/squads', 'orphanTTL', { name: 'sq', members: [member, other], orphanTTL: s }],
          ['/api/v1/connectors', 'name', { name: s, url: 'http://127.0.0.1:9/mcp' }],
          ['/api/v1/connectors', 'url', { name: 'c1', url: `http://127.0.0.1:9/${s}` }],
          [
            '/api/v1/connectors',
            'headerName',
            { name: 'c1', url: 'http://127.0.0.1:9/mcp', authType: 'header', headerName: s, authSecretName: 'token', authSecretKey: 'value' },
          ],
          ['/api/v1/connectors', 'authSecretName', { name: 'c1', url: 'http://127.0.0.1:9/mcp', authSecretName: s, authSecretKey: 'value' }],
          ['/api/v1/connectors', 'authSecretKey', { name: 'c1', url: 'http://127.0.0.1:9/mcp', authSecretName: 'token', authSecretKey: s }],
          ['/api/v1/secrets', 'name', { name: s, data: { k: 'v' } }],
          ['/api/v1/secrets', 'data', { name: 's1', data: { [s]: 'v' } }],
          ['/api/v1/secrets', 'allowedUrls', { name: 's1', data: { k: 'v' }, allowedUrls: [`http://x/${s}`, s] }],
        ];
        for (const [path, field, body] of cases) {
          // A URL path may legally hold some of these once percent-encoded; the rest are refused.
          if (field === 'url' && ['traversal', 'encodedTraversal', 'long', 'accents'].includes(kind)) continue;
          // "%" and "." are token characters: "%2e%2e%2f" is a well-formed header name.
          if (field === 'headerName' && kind === 'encodedTraversal') continue;
          const r = await h.api('POST', path, body);
          refused(r, `${path} ${field}=${kind}`, 400);
        }
      }
      await unchangedAndAlive();
    });

    it("query parameters: namespaces, selectors, continue tokens and resource versions are refused in the path's format", async () => {
      for (const s of Object.values(NASTY)) {
        const q = enc(s);
        for (const path of [
          `/api/v1/agents?namespace=${q}`,
          `/api/v1/squads?namespace=${q}`,
          `/api/v1/connectors?namespace=${q}`,
          `/api/v1/secrets?namespace=${q}`,
        ]) {
          refused(await h.api('GET', path), path, 400);
        }
        // Every ListOptions field is decoded, on a list as on a watch, even those a list does not use.
        const listOptions = [`allowWatchBookmarks=${q}`, `timeoutSeconds=${q}`, `watch=true&limit=${q}`, `watch=true&allowWatchBookmarks=${q}`];
        for (const query of [
          `labelSelector=${q}`,
          `fieldSelector=${q}`,
          `continue=${q}&limit=1`,
          `resourceVersion=${q}`,
          `watch=${q}`,
          `watch=true&timeoutSeconds=${q}`,
          ...listOptions,
        ]) {
          const path = `${AGG}/agents?${query}`;
          const r = await h.api('GET', path);
          // A label selector may legitimately select nothing (a value that is a valid label).
          if (r.status === 200) expect(r.body.items, path).to.deep.equal([]);
          else refused(r, path, 400);
        }
      }
      await unchangedAndAlive();
    });

    it('aggregated API: labels are checked; annotations keep any text; unknown field names come back as escaped Warnings', async () => {
      const obj = (name: string, metadata: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
        apiVersion: GV,
        kind: 'Agent',
        metadata: { name, ...metadata },
        spec: { instructions: '@say x' },
        ...extra,
      });
      for (const [kind, s] of Object.entries(NASTY)) {
        refused(await h.api('POST', `${AGG}/agents`, obj('l1', { labels: { [s]: 'v' } })), `${AGG}/agents labels key ${kind}`, 422);
        if (kind !== 'long') refused(await h.api('POST', `${AGG}/agents`, obj('l1', { labels: { k: `${s}x` } })), `${AGG}/agents labels value ${kind}`, 422);
      }
      const text = Object.values(NASTY).join('|');
      const created = await fetch(`${h.url}${AGG}/agents`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(obj('annotated', { annotations: { note: text } }, { [`\u00fcnknown\r\nX-Injected: 1 🙂`]: 1 })),
      });
      expect(created.status).to.equal(201);
      expect(created.headers.get('x-injected')).to.equal(null);
      // Printable ASCII only, in Go's quoting (kubectl unquotes it).
      expect(created.headers.get('warning')).to.equal('299 - "unknown field \\"\\u00fcnknown\\u000d\\u000aX-Injected: 1 \\U0001f642\\""');
      const got = await h.api('GET', `${AGG}/agents/annotated`);
      expect(got.body.metadata.annotations.note).to.equal(text);
      await remove(`${AGG}/agents/annotated`);
      baseline = await snapshot();
    });
  });

  describe('huge numbers', () => {
    it('limits, seqs, timeouts and resource versions past a safe integer (or not integers) are refused', async () => {
      for (const n of ['99999999999999999999999', '1e400', '-1', '1.5', 'NaN', 'Infinity', '0x10', '9007199254740993']) {
        refused(await h.api('GET', `/api/v1/agents?limit=${n}`), `/api/v1/agents limit=${n}`, 400);
        // The history's limit is clamped to its maximum (docs: events), so a huge integer is 200.
        const events = await h.api('GET', `/api/v1/agents/keeper/events?limit=${n}`);
        if (/^\d+$/.test(n)) expect(events.status, `events limit=${n}`).to.equal(200);
        else refused(events, `/api/v1/agents/keeper/events limit=${n}`, 400);
        refused(await h.api('GET', `${AGG}/agents?limit=${n}`), `${AGG} limit=${n}`, 400);
        refused(await h.api('GET', `${AGG}/agents?watch=true&timeoutSeconds=${n}`), `${AGG} timeoutSeconds=${n}`, 400);
        refused(await h.api('GET', `/api/v1/agents/keeper/events?before=${n}`), `/api/v1/agents/keeper/events before=${n}`, 400);
      }
      // An empty value is no integer, nor a boolean, either (the schema says integer or boolean; found by fuzzing).
      for (const query of [
        'limit=',
        'timeoutSeconds=',
        'watch=false&timeoutSeconds=',
        'watch=true&limit=',
        'watch=',
        'allowWatchBookmarks=&watch=false',
        'sendInitialEvents=',
      ]) {
        refused(await h.api('GET', `${AGG}/agents?${query}`), `${AGG}/agents?${query}`, 400);
      }
      refused(await h.api('GET', `${AGG}/agents?resourceVersion=99999999999999999999999&resourceVersionMatch=Exact`), `${AGG} resourceVersion`, 400);
      // Numbers in bodies: a number where a string belongs, and one past float64, are refused.
      refused(await h.api('POST', '/api/v1/agents', '{"name":"num","instructions":1e999}'), 'instructions 1e999', 400);
      refused(
        await h.api(
          'POST',
          `${AGG}/agents`,
          `{"apiVersion":"${GV}","kind":"Agent","metadata":{"name":"num","generation":1e999},"spec":{"instructions":"x","task":1e999}}`,
        ),
        `${AGG}/agents spec.task 1e999`,
        422,
      );
      await unchangedAndAlive();
    });

    it('WebSocket since: garbage and numbers past a safe integer are refused before the upgrade', async () => {
      for (const q of ['since=-1', 'since=abc', 'since=%00', 'since=1e400', 'since=99999999999999999999999']) {
        const r = await new Promise<{ status: number; body: any } | 'open'>((resolve, reject) => {
          const ws = new WebSocket(`${h.url.replace('http', 'ws')}/api/v1/agents/keeper/ws?${q}`);
          ws.on('unexpected-response', (_req, res) => {
            let t = '';
            res.on('data', (d: Buffer) => (t += String(d)));
            res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(t) }));
          });
          ws.on('open', () => {
            ws.close();
            resolve('open');
          });
          ws.on('error', reject);
        });
        if (r === 'open') expect(q, 'only a number may open').to.match(/since=\d/);
        else {
          expect(r.status, q).to.equal(400);
          expect(r.body).to.include({ code: 400 });
        }
      }
      await unchangedAndAlive();
    });
  });

  describe('deep nesting', () => {
    const deepObject = (depth: number): string => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
    const deepArray = (depth: number): string => `${'['.repeat(depth)}${']'.repeat(depth)}`;

    it('JSON nested 10,000 deep, and as deep as 1 MiB allows, is refused everywhere it can be sent', async () => {
      for (const deep of [deepObject(10_000), deepArray(10_000), deepArray(500_000)]) {
        const cases: [string, string, string, string][] = [
          ['POST', '/api/v1/agents', 'application/json', `{"name":"deep","instructions":${deep}}`],
          ['POST', '/api/v1/agents', 'application/json', deep],
          ['PATCH', '/api/v1/agents/keeper', 'application/json', `{"instructions":${deep}}`],
          ['POST', '/api/v1/squads', 'application/json', `{"name":"deep","members":${deep}}`],
          ['POST', '/api/v1/connectors', 'application/json', `{"name":"deep","url":${deep}}`],
          ['POST', '/api/v1/secrets', 'application/json', `{"name":"deep","data":{"k":${deep}}}`],
          ['PUT', '/api/v1/secrets/token', 'application/json', `{"data":${deep}}`],
          [
            'POST',
            `${AGG}/agents`,
            'application/json',
            `{"apiVersion":"${GV}","kind":"Agent","metadata":{"name":"deep","labels":${deep}},"spec":{"instructions":"x"}}`,
          ],
          ['PATCH', `${AGG}/agents/keeper`, 'application/merge-patch+json', `{"spec":{"instructions":${deep}}}`],
          ['PATCH', `${AGG}/agents/keeper`, 'application/json-patch+json', `[{"op":"replace","path":"/spec/instructions","value":${deep}}]`],
          [
            'PATCH',
            `${AGG}/agents/keeper`,
            'application/apply-patch+yaml',
            `{"apiVersion":"${GV}","kind":"Agent","metadata":{"name":"keeper"},"spec":{"instructions":${deep}}}`,
          ],
        ];
        for (const [method, path, type, body] of cases) {
          const r = await h.api(method, path + (type.includes('apply') ? '?fieldManager=nasty' : ''), body, { 'content-type': type });
          refused(r, `${method} ${path} (${type}, ${body.length} bytes)`);
        }
      }
      await unchangedAndAlive();
    });
  });

  describe('duplicate and prototype keys', () => {
    it('a duplicate key: the last one wins, on the REST and the aggregated API (docs/decisions.md)', async () => {
      const rest = await h.api('POST', '/api/v1/agents', '{"name":"dup-first","name":"dup-last","instructions":"@say one","instructions":"@say two"}');
      expect(rest.status, rest.text).to.equal(201);
      expect(rest.body.name).to.equal('dup-last');
      expect((await h.api('GET', '/api/v1/agents/dup-first')).status).to.equal(404);
      const agg = await h.api(
        'POST',
        `${AGG}/agents`,
        `{"apiVersion":"${GV}","kind":"Agent","metadata":{"name":"agg-first","name":"agg-last"},"spec":{"instructions":"@say a"}}`,
      );
      expect(agg.status, agg.text).to.equal(201);
      expect(agg.body.metadata.name).to.equal('agg-last');
      for (const path of ['/api/v1/agents/dup-last', `${AGG}/agents/agg-last`]) await remove(path);
      baseline = await snapshot();
    });

    it('"__proto__" is refused as 400 saying so; "constructor" is just an unknown field; bad JSON says where', async () => {
      const proto = await h.api('POST', '/api/v1/agents', '{"name":"p","instructions":"x","__proto__":{"polluted":true}}');
      refused(proto, '__proto__', 400);
      expect(proto.body.error).to.equal('the body may not contain a "__proto__" key');
      const aggProto = await h.api(
        'POST',
        `${AGG}/agents`,
        `{"apiVersion":"${GV}","kind":"Agent","metadata":{"name":"p","__proto__":{"x":1}},"spec":{"instructions":"x"}}`,
      );
      refused(aggProto, `${AGG}/agents __proto__`, 400);
      const ctor = await h.api('POST', '/api/v1/agents', '{"name":"p","instructions":"x","constructor":{"prototype":{"polluted":true}}}');
      refused(ctor, 'constructor', 400);
      expect(({} as { polluted?: boolean }).polluted).to.equal(undefined);
      const broken = await h.api('POST', '/api/v1/agents', '{"name":"p",');
      refused(broken, 'truncated JSON', 400);
      expect(broken.body.error).to.match(/^the body is not valid JSON: /);
      await unchangedAndAlive();
    });
  });

  describe('path traversal', () => {
    it('in names in the URL (plain, encoded, double-encoded, NUL) it is an unknown name or a bad URL, never a file', async () => {
      const filesBefore = files();
      const names = ['..', '..%2F..%2Fetc', '%2e%2e%2f%2e%2e%2fdata', '%252e%252e%252f', 'a%00b', '%00', '.%2e', 'keeper%2F..%2F..', '%c0%ae%c0%ae', '%ff'];
      for (const n of names) {
        for (const path of [
          `/api/v1/agents/${n}`,
          `/api/v1/squads/${n}`,
          `/api/v1/connectors/${n}`,
          `/api/v1/secrets/${n}`,
          `${AGG}/agents/${n}`,
          `${AGG}/connectors/${n}`,
        ]) {
          for (const method of ['GET', 'DELETE']) {
            const r = await h.api(method, path);
            refused(r, `${method} ${path}`);
            expect(r.status, `${method} ${path}`).to.be.oneOf([400, 404, 405]);
          }
        }
        refused(await h.api('GET', `/api/v1/agents/${n}/events`), `events of ${n}`);
        refused(await h.api('PUT', `/api/v1/secrets/${n}`, { data: { k: 'v' } }), `PUT secret ${n}`);
      }
      // Traversal in a namespace and in secret keys (which a file-backed store might use as names).
      for (const s of ['..', '../..', '%2e%2e%2f', 'a/b', 'a\u0000b', '.', '']) {
        if (s) refused(await h.api('GET', `/api/v1/agents?namespace=${enc(s)}`), `/api/v1/agents namespace ${JSON.stringify(s)}`, 400);
        refused(await h.api('POST', '/api/v1/secrets', { name: 'trav', data: { [s]: 'v' } }), `secret key ${JSON.stringify(s)}`, 400);
        refused(await h.api('PUT', '/api/v1/secrets/token', { data: { [s]: 'v' } }), `PUT secret key ${JSON.stringify(s)}`, 400);
      }
      expect(files()).to.deep.equal(filesBefore);
      await unchangedAndAlive();
    });
  });

  describe('header injection', () => {
    it('a CRLF in a secret value is stored, but never sent as a header: the connector says why (409)', async () => {
      const secret = await h.api('POST', '/api/v1/secrets', {
        name: 'crlf',
        data: { value: 'tok\r\nX-Injected: 1' },
        allowedUrls: [`http://127.0.0.1:${(mcp.address() as net.AddressInfo).port}`],
      });
      expect(secret.status, secret.text).to.equal(201);
      const url = `http://127.0.0.1:${(mcp.address() as net.AddressInfo).port}/mcp`;
      for (const [name, auth] of [
        ['crlf-bearer', { authSecretName: 'crlf', authSecretKey: 'value' }],
        ['crlf-header', { authType: 'header', headerName: 'X-Token', authSecretName: 'crlf', authSecretKey: 'value' }],
      ] as const) {
        expect((await h.api('POST', '/api/v1/connectors', { name, url, ...auth })).status).to.equal(201);
        const tools = await h.api('GET', `/api/v1/connectors/${name}/tools`);
        refused(tools, `tools of ${name}`, 409);
        expect(tools.body.error).to.contain('is not a valid HTTP header value');
        expect(tools.body.error).to.not.contain('tok');
        expect((await h.api('DELETE', `/api/v1/connectors/${name}`)).status).to.equal(200);
      }
      expect(mcpRequests.join('')).to.not.contain('X-Injected');
      expect((await h.api('DELETE', '/api/v1/secrets/crlf')).status).to.equal(200);
    });

    it('a CRLF or NUL in a request header value is a malformed request (400 in the format), not a split', async () => {
      const r = await rawRequest(port, 'GET /api/v1/agents HTTP/1.1\r\nHost: x\r\nX-A: a\rX-Injected: 1\r\nConnection: close\r\n\r\n');
      expect(r.status).to.equal(400);
      expect(r.body).to.include({ reason: 'BadRequest', code: 400 });
      const nul = await rawRequest(port, 'GET /apis/agentplane.io/v1alpha1 HTTP/1.1\r\nHost: x\r\nX-A: a\u0000b\r\nConnection: close\r\n\r\n');
      expect(nul.status).to.equal(400);
      expect(nul.body).to.include({ kind: 'Status', code: 400 });
      await unchangedAndAlive();
    });
  });

  describe('slow and idle clients', () => {
    it('slowloris: headers dribbled a byte at a time are cut off with 408 at the headers timeout while others are served', async () => {
      const slow = Array.from({ length: 20 }, () => {
        const socket = net.connect(port, '127.0.0.1');
        const started = Date.now();
        const request = `GET /api/v1/agents HTTP/1.1\r\nHost: x\r\nX-Slow: ${'s'.repeat(500)}\r\n\r\n`;
        let at = 0;
        let text = '';
        const timer = setInterval(() => socket.writable && at < request.length && socket.write(request[at++]), 50);
        socket.on('data', (d) => (text += String(d)));
        socket.on('error', () => undefined);
        return new Promise<{ ms: number; text: string }>((r) => socket.on('close', () => (clearInterval(timer), r({ ms: Date.now() - started, text }))));
      });
      // Meanwhile, everyone else is served.
      for (let i = 0; i < 10; i++) expect((await h.api('GET', '/api/v1/agents')).status).to.equal(200);
      for (const { ms, text } of await Promise.all(slow)) {
        expect(text).to.match(/^HTTP\/1\.1 408 /);
        expect(text).to.contain('"reason":"RequestTimeout"');
        expect(ms).to.be.within(TIMEOUTS.headersMs - 50, TIMEOUTS.headersMs + 3000);
      }
      await unchangedAndAlive();
    });

    it('1,000 idle connections: the server keeps serving others, then closes the idle ones (headers timeout; keep-alive timeout after a response)', async () => {
      const open = (n: number, first = ''): Promise<{ closed: Promise<number>; socket: net.Socket }[]> =>
        Promise.all(
          Array.from({ length: n }, () => {
            const socket = net.connect(port, '127.0.0.1');
            const started = Date.now();
            socket.on('error', () => undefined);
            socket.resume();
            const closed = new Promise<number>((r) => socket.on('close', () => r(Date.now() - started)));
            return new Promise<{ closed: Promise<number>; socket: net.Socket }>((r) =>
              socket.on('connect', () => (first && socket.write(first), r({ closed, socket }))),
            );
          }),
        );
      const silent = await open(1000);
      // All 1,000 are connected; a new client is served, and an agent's event stream still works.
      expect((await h.api('GET', '/api/v1/agents/keeper')).status).to.equal(200);
      expect((await h.api('GET', '/api/v1/agents/keeper/events?limit=5')).status).to.equal(200);
      const silentClosed = await Promise.all(silent.map((s) => s.closed));
      expect(Math.min(...silentClosed)).to.be.at.least(TIMEOUTS.headersMs - 50);
      expect(Math.max(...silentClosed)).to.be.below(TIMEOUTS.headersMs + 10_000);

      const kept = await open(1000, 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
      const keptClosed = await Promise.all(kept.map((s) => s.closed));
      expect(Math.min(...keptClosed)).to.be.at.least(TIMEOUTS.keepAliveMs - 50);
      expect(Math.max(...keptClosed)).to.be.below(TIMEOUTS.keepAliveMs + 10_000);
      expect((await h.api('GET', '/healthz')).status).to.equal(200);
      await unchangedAndAlive();
    });
  });
});
