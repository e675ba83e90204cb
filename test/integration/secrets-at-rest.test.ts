// Secret values at rest and everywhere else the server writes: the real server (SQLite, worker
// processes, the engine), a real MCP server (official SDK) that checks the token. Secrets are
// created, patched, replaced and used by a connector and by an agent's task; then every byte under
// the data directory (databases, workspaces, engine session files, the secrets themselves) and
// every captured log line is searched for each value: none is there, while the connector worked.

import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import type { AgentEvent } from '../../pkg/api/event.js';
import { EventClient, type Harness, type Reply, startHarness } from '../support/harness.js';
import { createTestMcpServer, type TestMcpServer } from '../support/mcp-server.js';

const TOKEN = 'rest-tok-3e9d1c7b5a2f4e68';
const LEGACY_TOKEN = 'rest-legacy-5c3a1e9f7d2b4a60';
const PATCHED = 'rest-patched-8b6a4c2e0d9f1a37';
const REPLACED = 'rest-replaced-1f2e3d4c5b6a7980';
const VALUES = [TOKEN, LEGACY_TOKEN, PATCHED, REPLACED];
/** Not secret: text the task sends through the tool, to prove the scan sees what the server stored. */
const PROBE = 'at-rest-probe-6d5c4b3a';

/** Every regular file under `dir`, recursively (symlinks not followed). */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...filesUnder(p));
    else if (e.isFile()) out.push(p);
  }
  return out;
}

/** The files whose bytes contain `needle` (as UTF-8, UTF-16LE or base64). */
function holding(files: string[], needle: string): string[] {
  const forms = [Buffer.from(needle, 'utf8'), Buffer.from(needle, 'utf16le'), Buffer.from(Buffer.from(needle).toString('base64').slice(0, 20))];
  return files.filter((f) => {
    const bytes = readFileSync(f);
    return forms.some((form) => bytes.includes(form));
  });
}

describe('secrets at rest (integration)', function () {
  let h: Harness;
  let mcp: TestMcpServer;
  let legacyMcp: TestMcpServer;
  let keyDir: string;
  const texts: string[] = [];
  const api = async <T = any>(method: string, path: string, body?: unknown): Promise<Reply<T>> => {
    const r = await h.api<T>(method, path, body);
    texts.push(r.text);
    return r;
  };
  const secretFile = (name: string): string => join(h.dataDir, 'secrets', 'default', `${name}.json`);

  before(async () => {
    mcp = createTestMcpServer({ token: TOKEN });
    legacyMcp = createTestMcpServer({ token: LEGACY_TOKEN });
    await mcp.start();
    await legacyMcp.start();
    keyDir = mkdtempSync(join(tmpdir(), 'agentplane-key-'));
    h = await startHarness();
  });
  after(async () => {
    await h?.close();
    await mcp?.close();
    await legacyMcp?.close();
    rmSync(keyDir, { recursive: true, force: true });
  });

  it('creates <data-dir>/secrets.key on first start: 32 bytes, 0600', () => {
    const key = join(h.dataDir, 'secrets.key');
    expect(statSync(key).mode & 0o777).to.equal(0o600);
    expect(statSync(key).size).to.equal(32);
  });

  it('encrypts, at start, a secret an older version wrote in clear; a connector still gets its value', async () => {
    mkdirSync(join(h.dataDir, 'secrets', 'default'), { recursive: true, mode: 0o700 });
    const now = new Date().toISOString();
    const legacy = { name: 'legacy-token', namespace: 'default', createdAt: now, updatedAt: now, data: { token: LEGACY_TOKEN } };
    writeFileSync(secretFile('legacy-token'), JSON.stringify(legacy), { mode: 0o600 });
    await h.restart();
    const onDisk = readFileSync(secretFile('legacy-token'), 'utf8');
    expect(onDisk).to.not.contain(LEGACY_TOKEN);
    expect(JSON.parse(onDisk).encrypted.alg).to.equal('AES-256-GCM');
    expect(h.logs.some((l) => l.includes('now encrypted') && l.includes('default/legacy-token'))).to.equal(true);
    const c = await api('POST', '/api/v1/connectors', { name: 'legacy', url: legacyMcp.url, authSecretName: 'legacy-token', authSecretKey: 'token' });
    expect(c.status, c.text).to.equal(201);
    const tools = await api('GET', '/api/v1/connectors/legacy/tools');
    expect(tools.status, tools.text).to.equal(200);
    expect(new Set(legacyMcp.tokensSeen)).to.deep.equal(new Set([LEGACY_TOKEN]));
  });

  it('creates, patches and replaces secrets; the files hold no value', async () => {
    expect((await api('POST', '/api/v1/secrets', { name: 'echo-token', data: { token: TOKEN } })).status).to.equal(201);
    expect((await api('POST', '/api/v1/secrets', { name: 'spare', data: { a: REPLACED } })).status).to.equal(201);
    const patched = await api('PATCH', '/api/v1/secrets/echo-token', { data: { extra: PATCHED } });
    expect(patched.status, patched.text).to.equal(200);
    expect(patched.body.keys).to.deep.equal(['extra', 'token']);
    expect((await api('PUT', '/api/v1/secrets/spare', { name: 'spare', data: { a: REPLACED, b: PATCHED } })).status).to.equal(200);
    for (const f of filesUnder(join(h.dataDir, 'secrets'))) {
      expect(statSync(f).mode & 0o777, f).to.equal(0o600);
    }
    expect(holding(filesUnder(join(h.dataDir, 'secrets')), TOKEN)).to.deep.equal([]);
  });

  it('runs a task whose agent calls the MCP tool with the token from the secret', async () => {
    const c = await api('POST', '/api/v1/connectors', { name: 'echo', url: mcp.url, authSecretName: 'echo-token', authSecretKey: 'token' });
    expect(c.status, c.text).to.equal(201);
    expect((await api('GET', '/api/v1/connectors/echo/tools')).status).to.equal(200);
    const ws = new EventClient(`${h.url.replace(/^http/, 'ws')}/api/v1/agents/holder/ws`);
    const sent = await api('POST', '/api/v1/agents', {
      name: 'holder',
      instructions: `@tool mcp__echo__echo {"text":"${PROBE}"}\n@bash echo ${PROBE} > probe.txt\n@say done`,
      connectors: ['echo'],
    });
    expect(sent.status, sent.text).to.equal(201);
    const events: AgentEvent[] = await ws.untilTaskEnd();
    ws.close();
    texts.push(...ws.raw);
    expect(events.at(-1)!.type).to.equal('task_completed');
    const result = events.find((e) => e.type === 'tool_result' && (e.payload as { tool: string }).tool === 'mcp__echo__echo')!;
    expect((result.payload as { output: string; isError: boolean }).output).to.contain(`echo: ${PROBE}`);
    expect(mcp.calls).to.include(PROBE);
    expect(mcp.tokensSeen.length).to.be.greaterThan(0);
    expect(new Set(mcp.tokensSeen)).to.deep.equal(new Set([TOKEN]));
  });

  it('refuses to start with a key file others may read, or with another key, and changes nothing', async () => {
    const before = readFileSync(secretFile('echo-token'));
    const exposed = join(keyDir, 'exposed.key');
    writeFileSync(exposed, randomBytes(32));
    chmodSync(exposed, 0o644);
    let err = await h.restart({ secretsKeyFile: exposed }).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err?.message).to.contain('group or others').and.to.contain('chmod 600');
    const other = join(keyDir, 'other.key');
    writeFileSync(other, randomBytes(32), { mode: 0o600 });
    err = await h.restart({ secretsKeyFile: other }).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err?.message).to.contain('another key').and.to.contain('default/echo-token');
    expect(readFileSync(secretFile('echo-token')).equals(before), 'secret file unchanged').to.equal(true);
    // The data directory's own key still opens everything.
    await h.restart();
    expect((await api('GET', '/api/v1/connectors/echo/tools')).status).to.equal(200);
  });

  it('leaves no value in any file under the data dir, any log line, response or event', async () => {
    texts.push((await api('GET', '/metrics')).text);
    texts.push((await api('GET', '/api/v1/agents/holder/events?limit=200')).text);
    await h.server.close(); // everything flushed: databases, WAL, workspaces, session files
    const files = filesUnder(h.dataDir);
    // The scan sees what the server stored: the databases, the workspace, the engine's files.
    expect(
      files.some((f) => f.endsWith('.db')),
      'databases scanned',
    ).to.equal(true);
    expect(holding(files, PROBE).length, `files holding the probe text among ${files.length}`).to.be.greaterThan(1);
    expect(
      holding(files, PROBE).some((f) => f.endsWith('probe.txt')),
      'the workspace',
    ).to.equal(true);
    expect(h.logs.length, 'log lines captured').to.be.greaterThan(0);
    const logs = h.logs.join('\n');
    for (const v of VALUES) {
      expect(holding(files, v), `files holding ${v}`).to.deep.equal([]);
      expect(logs, 'logs').to.not.contain(v);
      expect(texts.join('\n'), 'responses and events').to.not.contain(v);
    }
  });
});
