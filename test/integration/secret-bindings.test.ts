// Stored secrets go only where they are bound, attacked the way a client that may create
// connectors would: point a connector at its own listener and name someone else's secret. The
// real server, a real MCP server (official SDK) holding the rightful token, and a plain node:http
// listener playing the attacker, which records every request's headers. Nothing is mocked.

import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import type { AgentEvent } from '../../pkg/api/event.js';
import { eventually, type Harness, type Reply, startHarness } from '../support/harness.js';
import { createTestMcpServer, type TestMcpServer } from '../support/mcp-server.js';

const VICTIM_TOKEN = 'victim-tok-3e8a1c6f9b2d7045';
const LATE_TOKEN = 'late-tok-51b7e2d9c0a4f836';
const TOFU_TOKEN = 'tofu-tok-a9c3e5f7b1d20468';
const VALUES = [VICTIM_TOKEN, LATE_TOKEN, TOFU_TOKEN];
const AGG = '/apis/agentplane.io/v1alpha1/namespaces/default/connectors';
const MERGE = { 'content-type': 'application/merge-patch+json' };

interface Attacker {
  url: string;
  /** Headers of every request it received. */
  requests: IncomingHttpHeaders[];
  close(): Promise<void>;
}

/** The attacker's listener: records every request (its Authorization header above all) and answers 401. */
async function startAttacker(): Promise<Attacker> {
  const requests: IncomingHttpHeaders[] = [];
  const server: Server = createServer((req, res) => {
    requests.push(req.headers);
    req.resume();
    res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"send me your token"}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/collect`,
    requests,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

describe('secret bindings and connector egress (integration)', function () {
  let h: Harness;
  let mcp: TestMcpServer;
  let attacker: Attacker;
  const texts: string[] = [];
  const api = async <T = any>(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Reply<T>> => {
    const r = await h.api<T>(method, path, body, headers);
    texts.push(r.text);
    return r;
  };
  /** Every header value the attacker was sent, joined. */
  const attackerSaw = (): string => JSON.stringify(attacker.requests);
  const expectAttackerSawNothing = (): void => {
    for (const v of VALUES) expect(attackerSaw(), 'attacker').to.not.contain(v);
    expect(
      attacker.requests.filter((r) => r.authorization),
      'Authorization headers at the attacker',
    ).to.deep.equal([]);
  };

  /** Runs a task on a (new) agent and returns its events once it ended. */
  async function runTask(name: string, namespace: string, instructions: string, connectors: string[]): Promise<AgentEvent[]> {
    const sent = await api('POST', '/api/v1/agents', { name, namespace, instructions, connectors });
    expect(sent.status, sent.text).to.equal(201);
    return eventually(
      async () => {
        const r = await api('GET', `/api/v1/agents/${name}/events?namespace=${namespace}&limit=200`);
        const evs = r.body.events as AgentEvent[];
        return evs.some((e) => ['task_completed', 'task_cancelled', 'error'].includes(e.type)) && evs;
      },
      60_000,
      `task of ${namespace}/${name} to end`,
    );
  }

  before(async () => {
    mcp = createTestMcpServer({ token: VICTIM_TOKEN });
    await mcp.start();
    attacker = await startAttacker();
    h = await startHarness();
  });
  after(async () => {
    await h?.close();
    await mcp?.close();
    await attacker?.close();
  });

  describe('a secret bound by its writer', () => {
    it('is created with allowedUrls and shows them normalized on read', async () => {
      const r = await api('POST', '/api/v1/secrets', { name: 'victim-token', data: { token: VICTIM_TOKEN }, allowedUrls: [mcp.url] });
      expect(r.status, r.text).to.equal(201);
      expect(r.body.allowedUrls).to.deep.equal([mcp.url]); // http://127.0.0.1:<port>/mcp is already normal
      expect((await api('GET', '/api/v1/secrets/victim-token')).body.allowedUrls).to.deep.equal([mcp.url]);
      const bad = await api('POST', '/api/v1/secrets', { name: 'bad-binding', data: { t: 'x' }, allowedUrls: ['ftp://x', 'https://u:p@a.example'] });
      expect(bad.status).to.equal(400);
      expect(bad.body.details.causes.map((c: { field: string }) => c.field)).to.deep.equal(['allowedUrls[0]', 'allowedUrls[1]']);
    });

    it('refuses (422) a connector that points elsewhere, naming the secret and the URL: REST and aggregated API', async () => {
      const rest = await api('POST', '/api/v1/connectors', { name: 'exfil', url: attacker.url, authSecretName: 'victim-token', authSecretKey: 'token' });
      expect(rest.status, rest.text).to.equal(422);
      expect(rest.body).to.include({ reason: 'SecretBindingMismatch', code: 422 });
      expect(rest.body.error).to.contain('"victim-token"').and.to.contain(attacker.url);
      expect(rest.body.details).to.deep.include({ secret: 'victim-token', url: attacker.url, allowedUrls: [mcp.url] });
      expect(rest.body.details.causes[0].field).to.equal('url');
      expect((await api('GET', '/api/v1/connectors/exfil')).status).to.equal(404);

      const agg = await api('POST', AGG, {
        apiVersion: 'agentplane.io/v1alpha1',
        kind: 'Connector',
        metadata: { name: 'exfil' },
        spec: { url: attacker.url, authSecretName: 'victim-token', authSecretKey: 'token' },
      });
      expect(agg.status, agg.text).to.equal(422);
      expect(agg.body).to.include({ kind: 'Status', reason: 'Invalid', code: 422 });
      expect(agg.body.message).to.contain('"victim-token"').and.to.contain(attacker.url);
      expect(agg.body.details.causes[0].field).to.equal('spec.url');
      expect((await api('GET', `${AGG}/exfil`)).status).to.equal(404);
    });

    it('matches on path segments: the same server under another path is refused', async () => {
      const r = await api('POST', '/api/v1/connectors', { name: 'sibling', url: `${mcp.url}x`, authSecretName: 'victim-token', authSecretKey: 'token' });
      expect(r.status, r.text).to.equal(422);
      const below = await api('POST', '/api/v1/connectors', {
        name: 'below',
        url: `${mcp.url}/deeper`,
        authSecretName: 'victim-token',
        authSecretKey: 'token',
      });
      expect(below.status, below.text).to.equal(201);
      expect((await api('DELETE', '/api/v1/connectors/below')).status).to.equal(200);
    });

    it('lets the rightful connector work: tools listing', async () => {
      const c = await api('POST', '/api/v1/connectors', { name: 'legit', url: mcp.url, authSecretName: 'victim-token', authSecretKey: 'token' });
      expect(c.status, c.text).to.equal(201);
      const tools = await api('GET', '/api/v1/connectors/legit/tools');
      expect(tools.status, tools.text).to.equal(200);
      expect(tools.body.tools.map((t: { name: string }) => t.name)).to.deep.equal(['echo']);
      expect(mcp.tokensSeen).to.include(VICTIM_TOKEN);
    });

    it('lets the rightful connector work: a task calls its tool', async () => {
      const evs = await runTask('rightful', 'default', '@tool mcp__legit__echo {"text":"rightful"}\n@say done', ['legit']);
      const result = evs.find((e) => e.type === 'tool_result')!;
      expect(result.payload).to.include({ tool: 'mcp__legit__echo', isError: false });
      expect((result.payload as { output: string }).output).to.contain('echo: rightful');
      expect(mcp.calls).to.include('rightful');
    });

    it('refuses (422) moving the rightful connector to the attacker: merge patch, update, apply, also as a dry run', async () => {
      const patch = await api('PATCH', `${AGG}/legit`, { spec: { url: attacker.url } }, MERGE);
      expect(patch.status, patch.text).to.equal(422);
      expect(patch.body.message).to.contain('"victim-token"');
      const cur = (await api('GET', `${AGG}/legit`)).body;
      const put = await api('PUT', `${AGG}/legit`, { ...cur, spec: { ...cur.spec, url: attacker.url } });
      expect(put.status, put.text).to.equal(422);
      const yaml = ['apiVersion: agentplane.io/v1alpha1', 'kind: Connector', 'metadata:', '  name: legit', 'spec:', `  url: ${attacker.url}`, ''].join('\n');
      // The URL is the REST writer's: a plain apply conflicts (409) before admission judges it;
      // a forced one takes the field and meets the binding rule.
      const conflicting = await api('PATCH', `${AGG}/legit?fieldManager=kubectl`, yaml, { 'content-type': 'application/apply-patch+yaml' });
      expect(conflicting.status, conflicting.text).to.equal(409);
      const applied = await api('PATCH', `${AGG}/legit?fieldManager=kubectl&force=true`, yaml, { 'content-type': 'application/apply-patch+yaml' });
      expect(applied.status, applied.text).to.equal(422);
      const dry = await api('PATCH', `${AGG}/legit?dryRun=All`, { spec: { url: attacker.url } }, MERGE);
      expect(dry.status, dry.text).to.equal(422);
      // Switching the secret of a connector already at the attacker's URL is the same write.
      const plain = await api('POST', '/api/v1/connectors', { name: 'plain', url: attacker.url });
      expect(plain.status, plain.text).to.equal(201);
      const arm = await api('PATCH', `${AGG}/plain`, { spec: { authSecretName: 'victim-token', authSecretKey: 'token' } }, MERGE);
      expect(arm.status, arm.text).to.equal(422);
      expect((await api('GET', '/api/v1/connectors/legit')).body.url).to.equal(mcp.url);
      // A change that keeps the URL and the secret is not refused.
      const label = await api('PATCH', `${AGG}/legit`, { spec: { displayName: 'Legit' } }, MERGE);
      expect(label.status, label.text).to.equal(200);
    });

    it('re-checks at the moment of sending: after the secret is re-bound elsewhere, nothing is sent', async () => {
      const narrowed = await api('PUT', '/api/v1/secrets/victim-token', { data: { token: VICTIM_TOKEN }, allowedUrls: ['https://tools.example/mcp'] });
      expect(narrowed.status, narrowed.text).to.equal(200);
      expect(narrowed.body.allowedUrls).to.deep.equal(['https://tools.example:443/mcp']);
      const seen = mcp.tokensSeen.length;
      const tools = await api('GET', '/api/v1/connectors/legit/tools');
      expect(tools.status, tools.text).to.equal(422);
      expect(tools.body.reason).to.equal('SecretBindingMismatch');
      const evs = await runTask('after-rebind', 'default', '@tool mcp__legit__echo {"text":"not sent"}\n@say done', ['legit']);
      expect(evs.find((e) => e.type === 'tool_result')!.payload).to.include({ isError: true });
      expect(mcp.tokensSeen.length, 'the server was not contacted').to.equal(seen);
      expect(mcp.calls).to.not.include('not sent');
      expect((await api('GET', '/api/v1/connectors/legit')).body.status).to.include({ phase: 'Error' });
      // PUT without allowedUrls keeps the binding; with them, it widens it again.
      const kept = await api('PUT', '/api/v1/secrets/victim-token', { data: { token: VICTIM_TOKEN } });
      expect(kept.body.allowedUrls).to.deep.equal(['https://tools.example:443/mcp']);
      const restored = await api('PUT', '/api/v1/secrets/victim-token', { data: { token: VICTIM_TOKEN }, allowedUrls: [mcp.url, 'https://tools.example/mcp'] });
      expect(restored.body.allowedUrls).to.deep.equal([mcp.url, 'https://tools.example:443/mcp']);
      expect((await api('GET', '/api/v1/connectors/legit/tools')).status).to.equal(200);
    });
  });

  describe('a secret created without allowedUrls', () => {
    it('is bound on first use to the first connector that names it, and shows it on read', async () => {
      const s = await api('POST', '/api/v1/secrets', { name: 'tofu-token', data: { token: TOFU_TOKEN } });
      expect(s.status).to.equal(201);
      expect(s.body.allowedUrls).to.deep.equal([]);
      const c = await api('POST', '/api/v1/connectors', { name: 'tofu', url: `${mcp.url}?via=first`, authSecretName: 'tofu-token', authSecretKey: 'token' });
      expect(c.status, c.text).to.equal(201);
      expect((await api('GET', '/api/v1/secrets/tofu-token')).body.allowedUrls).to.deep.equal([mcp.url]);
      expect(h.logs.some((l) => l.includes('secret bound on first use') && l.includes('"secret":"tofu-token"'))).to.equal(true);
      const exfil = await api('POST', '/api/v1/connectors', { name: 'tofu-exfil', url: attacker.url, authSecretName: 'tofu-token', authSecretKey: 'token' });
      expect(exfil.status, exfil.text).to.equal(422);
    });

    it('is not bound by a dry run', async () => {
      await api('POST', '/api/v1/secrets', { name: 'dry-token', data: { token: 'dry-run-value' } });
      const dry = await api('POST', `${AGG}?dryRun=All`, {
        apiVersion: 'agentplane.io/v1alpha1',
        kind: 'Connector',
        metadata: { name: 'dry' },
        spec: { url: attacker.url, authSecretName: 'dry-token', authSecretKey: 'token' },
      });
      expect(dry.status, dry.text).to.equal(201);
      expect((await api('GET', '/api/v1/secrets/dry-token')).body.allowedUrls).to.deep.equal([]);
      expect((await api('DELETE', '/api/v1/secrets/dry-token')).status).to.equal(200);
    });

    it('is never sent to a connector written before it existed: status check, tools and task all refuse', async () => {
      // The attacker names a secret that does not exist yet, hoping to be checked first.
      const pre = await api('POST', '/api/v1/connectors', { name: 'pre', url: attacker.url, authSecretName: 'late-token', authSecretKey: 'token' });
      expect(pre.status, pre.text).to.equal(201);
      // Creating the secret re-checks the connectors that name it (in the background).
      const s = await api('POST', '/api/v1/secrets', { name: 'late-token', data: { token: LATE_TOKEN } });
      expect(s.status).to.equal(201);
      const status = await eventually(
        async () => {
          const r = await api('GET', '/api/v1/connectors/pre');
          return r.body.status.message.includes('not bound') && r.body.status;
        },
        20_000,
        'the background check of "pre" to refuse',
      );
      expect(status.phase).to.equal('Error');
      const tools = await api('GET', '/api/v1/connectors/pre/tools');
      expect(tools.status, tools.text).to.equal(422);
      const evs = await runTask('pre-user', 'default', '@tool mcp__pre__echo {"text":"x"}\n@say done', ['pre']);
      expect(evs.find((e) => e.type === 'tool_result')!.payload).to.include({ isError: true });
      // The rightful owner binds it with the next connector written; the early one stays refused.
      const late = await api('POST', '/api/v1/connectors', { name: 'late', url: mcp.url, authSecretName: 'late-token', authSecretKey: 'token' });
      expect(late.status, late.text).to.equal(201);
      expect((await api('GET', '/api/v1/secrets/late-token')).body.allowedUrls).to.deep.equal([mcp.url]);
      // Sent where it is bound (this MCP server accepts another token, hence 502 Unauthorized).
      expect((await api('GET', '/api/v1/connectors/late/tools')).status).to.equal(502);
      expect(mcp.tokensSeen).to.include(LATE_TOKEN);
      expect((await api('GET', '/api/v1/connectors/pre/tools')).status).to.equal(422);
      expectAttackerSawNothing();
    });
  });

  describe('namespaces', () => {
    it('resolve a connector secret in the connector own namespace only', async () => {
      const c = await api('POST', '/api/v1/connectors', {
        name: 'grab',
        namespace: 'evil',
        url: attacker.url,
        authSecretName: 'victim-token',
        authSecretKey: 'token',
      });
      expect(c.status, c.text).to.equal(201);
      const tools = await api('GET', '/api/v1/connectors/grab/tools?namespace=evil');
      expect(tools.status).to.equal(409);
      expect(tools.body.error).to.contain('secret "victim-token" not found in namespace "evil"');
      const evs = await runTask('grabber', 'evil', '@tool mcp__grab__echo {"text":"x"}\n@say done', ['grab']);
      expect(evs.find((e) => e.type === 'tool_result')!.payload).to.include({ isError: true });
      expect((await api('GET', '/api/v1/connectors/grab?namespace=evil')).body.status.phase).to.equal('SecretMissing');
      // The victim's secret is untouched by a write in another namespace.
      expect((await api('GET', '/api/v1/secrets/victim-token')).body.allowedUrls).to.deep.equal([mcp.url, 'https://tools.example:443/mcp']);
    });
  });

  describe('server egress', () => {
    it('refuses link-local and metadata URLs even when private ones are allowed (400 REST, 422 aggregated)', async () => {
      for (const url of [
        'http://169.254.169.254/latest/meta-data/',
        'http://metadata.google.internal/computeMetadata/v1/',
        'http://[fd00:ec2::254]/',
        'http://169.254.10.10:8080/mcp',
      ]) {
        const r = await api('POST', '/api/v1/connectors', { name: 'meta', url });
        expect(r.status, url).to.equal(400);
        expect(r.body.reason).to.equal('Invalid');
        expect(r.body.details.causes[0].field).to.equal('url');
        expect(r.body.details.causes[0].message).to.match(/metadata|link-local/);
      }
      const agg = await api('POST', AGG, {
        apiVersion: 'agentplane.io/v1alpha1',
        kind: 'Connector',
        metadata: { name: 'meta' },
        spec: { url: 'http://169.254.169.254/' },
      });
      expect(agg.status, agg.text).to.equal(422);
      expect(agg.body.details.causes[0].field).to.equal('spec.url');
      const moved = await api('PATCH', `${AGG}/legit`, { spec: { url: 'http://169.254.169.254/mcp' } }, MERGE);
      expect(moved.status, moved.text).to.equal(422);
    });
  });

  describe('nothing reached the attacker', () => {
    it('saw no request carrying a secret, and no Authorization header at all', () => {
      expectAttackerSawNothing();
    });

    it('no secret value in any response, event or log line', async () => {
      for (const [ns, agent] of [
        ['default', 'rightful'],
        ['default', 'after-rebind'],
        ['default', 'pre-user'],
        ['evil', 'grabber'],
      ]) {
        texts.push((await api('GET', `/api/v1/agents/${agent}/events?namespace=${ns}&limit=200`)).text);
      }
      const all = texts.join('\n');
      const logs = h.logs.join('\n');
      for (const v of VALUES) {
        expect(all, 'responses').to.not.contain(v);
        expect(logs, 'logs').to.not.contain(v);
      }
    });
  });
});

describe('connector URLs without --allow-private-connector-urls (integration)', function () {
  let h: Harness;
  let mcp: TestMcpServer;

  before(async () => {
    mcp = createTestMcpServer({ token: VICTIM_TOKEN });
    await mcp.start();
    h = await startHarness({ allowPrivateConnectorUrls: false });
  });
  after(async () => {
    await h?.close();
    await mcp?.close();
  });

  it('refuses a loopback URL at validation, saying how to allow it', async () => {
    const r = await h.api('POST', '/api/v1/connectors', { name: 'local', url: mcp.url });
    expect(r.status, r.text).to.equal(400);
    expect(r.body.reason).to.equal('Invalid');
    expect(r.body.details.causes[0]).to.deep.include({ field: 'url' });
    expect(r.body.details.causes[0].message).to.contain('loopback').and.to.contain('--allow-private-connector-urls');
    for (const url of ['http://localhost:9/mcp', 'http://10.1.2.3/mcp', 'http://192.168.0.10/mcp', 'http://[::1]:9/mcp']) {
      expect((await h.api('POST', '/api/v1/connectors', { name: 'local', url })).status, url).to.equal(400);
    }
    const agg = await h.api('POST', AGG, { apiVersion: 'agentplane.io/v1alpha1', kind: 'Connector', metadata: { name: 'local' }, spec: { url: mcp.url } });
    expect(agg.status, agg.text).to.equal(422);
    expect(agg.body.details.causes[0].field).to.equal('spec.url');
  });

  it('checks again when connecting: a connector stored while loopback was allowed is not contacted once it is not', async () => {
    await h.restart({ allowPrivateConnectorUrls: true });
    await h.api('POST', '/api/v1/secrets', { name: 'local-token', data: { token: VICTIM_TOKEN }, allowedUrls: [mcp.url] });
    const c = await h.api('POST', '/api/v1/connectors', { name: 'local', url: mcp.url, authSecretName: 'local-token', authSecretKey: 'token' });
    expect(c.status, c.text).to.equal(201);
    expect((await h.api('GET', '/api/v1/connectors/local/tools')).status).to.equal(200);

    await h.restart({ allowPrivateConnectorUrls: false });
    const seen = mcp.tokensSeen.length;
    const tools = await h.api('GET', '/api/v1/connectors/local/tools');
    expect(tools.status, tools.text).to.equal(409);
    expect(tools.body.error).to.contain('--allow-private-connector-urls');
    expect((await h.api('GET', '/api/v1/connectors/local')).body.status.phase).to.equal('Error');
    expect(mcp.tokensSeen.length, 'the MCP server was not contacted').to.equal(seen);
  });
});

describe('agentplane serve: allowing private connector URLs (integration)', function () {
  const main = fileURLToPath(new URL('../../cmd/agentplane/main.js', import.meta.url));
  const dirs: string[] = [];
  after(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  /** Starts `agentplane serve` with `args`; returns its URL and a stop function. */
  async function serve(args: string[], env: Record<string, string> = {}): Promise<{ url: string; stop(): Promise<void> }> {
    const dataDir = mkdtempSync(join(tmpdir(), 'agentplane-egress-'));
    dirs.push(dataDir);
    const child = spawn(process.execPath, [main, 'serve', '--port', '0', '--data-dir', dataDir, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...env },
    });
    const lines: string[] = [];
    const collect = (chunk: Buffer): void => void lines.push(...String(chunk).split('\n').filter(Boolean));
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    const exited = new Promise<void>((r) => child.on('exit', () => r()));
    const url = await eventually(
      async () => {
        for (const l of lines) {
          const m = /"msg":"agentplane is serving".*?"url":"([^"]+)"|"url":"([^"]+)".*?"msg":"agentplane is serving"/.exec(l);
          if (m) return m[1] ?? m[2];
        }
        return undefined;
      },
      30_000,
      'server up',
    );
    return {
      url: url,
      stop: async () => {
        child.kill('SIGTERM');
        await exited;
      },
    };
  }
  const createLoopbackConnector = async (url: string): Promise<number> =>
    (
      await fetch(`${url}/api/v1/connectors`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'local', url: 'http://127.0.0.1:9/mcp' }),
      })
    ).status;

  it('reads the config key and the flag; without either a loopback URL is refused', async () => {
    const config = join(mkdtempSync(join(tmpdir(), 'agentplane-cfg-')), 'config.json');
    dirs.push(dirname(config));
    writeFileSync(config, JSON.stringify({ allowPrivateConnectorUrls: true }));
    const viaConfig = await serve(['--config', config]);
    try {
      expect(await createLoopbackConnector(viaConfig.url)).to.equal(201);
    } finally {
      await viaConfig.stop();
    }
    const viaFlag = await serve(['--allow-private-connector-urls']);
    try {
      expect(await createLoopbackConnector(viaFlag.url)).to.equal(201);
    } finally {
      await viaFlag.stop();
    }
    // The environment variable overrides the config file.
    const off = await serve(['--config', config], { AGENTPLANE_ALLOW_PRIVATE_CONNECTOR_URLS: 'false' });
    try {
      expect(await createLoopbackConnector(off.url)).to.equal(400);
    } finally {
      await off.stop();
    }
  });

  it('refuses a config value that is not a boolean', () => {
    const config = join(mkdtempSync(join(tmpdir(), 'agentplane-cfg-')), 'config.json');
    dirs.push(dirname(config));
    writeFileSync(config, JSON.stringify({ allowPrivateConnectorUrls: 'yes' }));
    const r = spawnSync(process.execPath, [main, 'serve', '--config', config], { encoding: 'utf8' });
    expect(r.status).to.equal(2);
    expect(r.stderr).to.contain('"allowPrivateConnectorUrls" must be true or false');
  });
});
