// Small leaks, on a real server: /metrics names namespaces and agents, so with a token file it
// needs a token unless the operator opts out; a credential in a query string (?access_token=)
// never reaches the audit log; and the data directory's state (databases with their -wal and
// -shm, secrets, the key) is the server's user's alone: files 0600, directories 0700, also those
// an older version left 0644/0755.

import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

import { expect } from 'chai';

import { runTask } from '../support/agents.js';
import { eventually, type Harness, startHarness } from '../support/harness.js';
import { tokenFileYaml } from '../support/tokens.js';

const ADMIN = 'admin-leaks-5d4c3b2a1f0e';
const auth = { authorization: `Bearer ${ADMIN}` };

describe('small leaks (security)', function () {
  this.timeout(120_000);
  let dir: string;
  let tokenFile: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'agentplane-leaks-'));
    tokenFile = join(dir, 'tokens.yaml');
    writeFileSync(tokenFile, tokenFileYaml([{ user: 'admin', token: ADMIN }]));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  describe('/metrics with a token file', () => {
    let h: Harness;
    before(async () => {
      h = await startHarness({ tokenFile });
      expect((await h.api('POST', '/api/v1/agents', { name: 'secret-project', namespace: 'team-x', instructions: '@say hi' }, auth)).status).to.equal(201);
    });
    after(async () => h?.close());

    it('needs a token by default: its series name namespaces and agents', async () => {
      const open = await h.api('GET', '/metrics');
      expect(open.status).to.equal(401);
      expect(open.body).to.include({ reason: 'Unauthorized', code: 401 });
      expect(open.text).not.to.include('team-x');
      const authed = await h.api('GET', '/metrics', undefined, auth);
      expect(authed.status).to.equal(200);
      expect(authed.text).to.include('# HELP');
    });

    it('is open again when the operator opts out', async () => {
      await h.restart({ metricsAuth: false });
      expect((await h.api('GET', '/metrics')).status).to.equal(200);
      expect((await h.api('GET', '/api/v1/agents')).status).to.equal(401);
    });
  });

  describe('the audit log', () => {
    let h: Harness;
    let log: string;
    before(async () => {
      log = join(dir, 'audit.log');
      h = await startHarness({ tokenFile, audit: { path: log } });
    });
    after(async () => h?.close());

    it('redacts credential-bearing query parameters in requestURI', async () => {
      const secret = 'query-token-9a8b7c6d5e4f';
      const paths = [
        `/api/v1/agents?namespace=default&access_token=${ADMIN}`,
        `/api/v1/agents?ACCESS_TOKEN=${secret}&namespace=default`,
        `/api/v1/agents/x/cancel?token=${secret}&api_key=${secret}&id_token=${secret}`,
      ];
      for (const p of paths) await h.api('POST', p, { name: 'x', instructions: '@say hi' }, auth);
      // Refused ones are audited too: without a token (401), and by the browser guard, which
      // runs before the audit hooks (415 for a text/plain body).
      await h.api('POST', `/api/v1/agents?access_token=${secret}`, { name: 'y', instructions: '@say hi' });
      expect((await h.api('POST', `/api/v1/agents/x/cancel?access_token=${secret}`, 'x', { ...auth, 'content-type': 'text/plain' })).status).to.equal(415);
      const lines = await eventually(
        async () => {
          const text = (() => {
            try {
              return readFileSync(log, 'utf8');
            } catch {
              return '';
            }
          })();
          const ls = text.split('\n').filter(Boolean);
          return ls.length >= paths.length + 2 ? ls : undefined;
        },
        10_000,
        'the audit lines',
      );
      const text = lines.join('\n');
      expect(text).not.to.include(secret);
      expect(text).not.to.include(ADMIN);
      const uris = lines.map((l) => (JSON.parse(l) as { requestURI: string }).requestURI);
      expect(uris).to.include('/api/v1/agents?namespace=default&access_token=<redacted>');
      expect(uris).to.include('/api/v1/agents?ACCESS_TOKEN=<redacted>&namespace=default');
      expect(uris).to.include('/api/v1/agents/x/cancel?token=<redacted>&api_key=<redacted>&id_token=<redacted>');
      expect(uris).to.include('/api/v1/agents?access_token=<redacted>');
      const guarded = lines
        .map((l) => JSON.parse(l) as { requestURI: string; responseStatus: { code: number } })
        .find((e) => e.requestURI === '/api/v1/agents/x/cancel?access_token=<redacted>');
      expect(guarded?.responseStatus.code).to.equal(415);
      // Nor does the server's own log hold it.
      expect(h.logs.join('\n')).not.to.include(secret);
    });
  });

  describe('file modes under the data directory', () => {
    let h: Harness;
    after(async () => h?.close());

    it("makes every file of the server's state 0600 and its directories 0700, also ones left 0644/0755", async () => {
      h = await startHarness();
      // A task (workspace, events), a secret (its file) and a squad: the state the server writes.
      await runTask(h, 'moded', '@bash echo hi > note.txt\n@say done');
      expect((await h.api('POST', '/api/v1/secrets', { name: 's', data: { token: 'v' } })).status).to.equal(201);
      const check = (): void => {
        expect(statSync(h.dataDir).mode & 0o777, 'the data directory').to.equal(0o700);
        for (const f of ['state.db', 'events.db', 'state.db-wal', 'state.db-shm', 'events.db-wal', 'events.db-shm', 'secrets.key']) {
          expect(statSync(join(h.dataDir, f)).mode & 0o777, f).to.equal(0o600);
        }
        for (const f of serverFiles(h.dataDir)) {
          const mode = statSync(f.path).mode & 0o777;
          if (f.dir) expect(mode & 0o077, `${f.rel} (directory)`).to.equal(0);
          // Two files the sandbox's user must use, inside 0700 directories: the worker's node,
          // which nobody may read (only execute), and, as root, the worker socket (nobody connects).
          else if (f.rel.startsWith('sandbox/node-')) expect(mode, f.rel).to.equal(0o111);
          else if (f.rel === 'run/workers.sock') expect(mode, f.rel).to.equal(process.getuid!() === 0 ? 0o666 : 0o600);
          else expect(mode & 0o077, f.rel).to.equal(0);
        }
      };
      check();

      // An older version's modes: the server makes them private at its next start.
      await h.server.close();
      for (const f of ['state.db', 'events.db', 'state.db-wal', 'events.db-wal', 'state.db-shm', 'events.db-shm']) {
        try {
          chmodSync(join(h.dataDir, f), 0o644);
        } catch {
          // no -wal/-shm left after a clean close
        }
      }
      chmodSync(h.dataDir, 0o755);
      await h.restart();
      expect((await h.api('GET', '/api/v1/agents/moded')).status).to.equal(200);
      check();
    });

    it('creates an event store in a new directory 0700 and its database 0600', async () => {
      const d = join(dir, 'fresh');
      mkdirSync(d);
      const g = await startHarness({ pluginOptions: { 'event-store-sqlite': { path: join(d, 'deep', 'events.db') } } });
      try {
        expect(statSync(join(d, 'deep')).mode & 0o777).to.equal(0o700);
        expect(statSync(join(d, 'deep', 'events.db')).mode & 0o777).to.equal(0o600);
      } finally {
        await g.close();
      }
    });
  });
});

/**
 * Files and directories of the server's own state: everything under the data directory but the
 * agents' workspace contents, which the agents' tools write with their own modes.
 */
function serverFiles(root: string): { path: string; rel: string; dir: boolean }[] {
  const out: { path: string; rel: string; dir: boolean }[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, e.name);
      const rel = relative(root, path);
      if (e.isSymbolicLink()) continue;
      if (e.isDirectory()) {
        out.push({ path, rel, dir: true });
        // What is inside a workspace is the agent's: its tools choose the modes.
        if (!/^(workspaces\/[^/]+\/[^/]+|pool\/[^/]+)$/.test(rel)) walk(path);
      } else out.push({ path, rel, dir: false });
    }
  };
  walk(root);
  return out;
}
