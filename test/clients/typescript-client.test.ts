// The TypeScript client (clients/typescript, @agentplane/client) against a real `serve --demo`
// server on loopback: typed REST calls through openapi-fetch, the WebSocket helper followed to
// task_completed, typed refusals, the README's example, and the package compiling on its own.

import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'chai';
import {
  AgentplaneError,
  type AgentEvent,
  type AgentplaneClient,
  createClient,
  EventStreamError,
  followEvents,
  must,
} from '../../clients/typescript/src/index.js';
import { type DemoServer, startDemoServer } from '../support/demo-server.js';
import { REPO } from '../support/python-client.js';

const run = promisify(execFile);
const ENDS = ['task_completed', 'task_cancelled', 'error'];

async function taskEvents(baseUrl: string, agent: string): Promise<AgentEvent[]> {
  const events: AgentEvent[] = [];
  for await (const ev of followEvents({ baseUrl, agent, signal: AbortSignal.timeout(150_000) })) {
    events.push(ev);
    if (ENDS.includes(ev.type)) break;
  }
  return events;
}

describe('typed clients: TypeScript (@agentplane/client) against a real server', function () {
  // Generous: a task's worker and engine start in seconds on a quiet machine, far slower on a busy one.
  this.timeout(180_000);
  let server: DemoServer;
  let client: AgentplaneClient;

  before(async () => {
    server = await startDemoServer();
    client = createClient({ baseUrl: server.url });
  });
  after(async () => server?.stop());

  it('creates an agent with a task, follows its events over the WebSocket to task_completed, lists and gets it', async () => {
    const created = await client.POST('/api/v1/agents', { body: { name: 'ts-hello', instructions: '@bash echo from-ts > out.txt\n@say ts done' } });
    expect(created.response.status).to.equal(201);
    expect(created.data?.name).to.equal('ts-hello');

    const events = await taskEvents(server.url, 'ts-hello');
    const types = events.map((e) => e.type);
    expect(types[0]).to.equal('task_started');
    expect(types).to.include.members(['tool_call', 'tool_result']);
    expect(types.at(-1)).to.equal('task_completed');
    expect(events.at(-1)?.payload).to.include({ result: 'ts done' });
    const seqs = events.map((e) => e.seq);
    expect(seqs).to.deep.equal([...new Set(seqs)].sort((a, b) => a - b));

    // Resuming after the last seq replays nothing already seen.
    const resumed: AgentEvent[] = [];
    for await (const ev of followEvents({ baseUrl: server.url, agent: 'ts-hello', since: seqs.at(-1)!, signal: AbortSignal.timeout(1000) })) resumed.push(ev);
    expect(resumed).to.deep.equal([]);

    const listed = await must(client.GET('/api/v1/agents'));
    expect(listed.agents.map((a) => a.name)).to.include('ts-hello');
    const agent = await must(client.GET('/api/v1/agents/{name}', { params: { path: { name: 'ts-hello' } } }));
    expect(agent.taskStatus).to.equal('Complete');
  });

  it('resumes a dropped stream from the last seq: across a server restart, the next task arrives once', async () => {
    const before = await must(client.GET('/api/v1/agents/{name}/events', { params: { path: { name: 'ts-hello' } } }));
    const last = Math.max(...before.events.map((e) => e.seq));
    const got: AgentEvent[] = [];
    const following = (async () => {
      // Retries enough to outlast the restart on a busy machine (the delays grow to 5 s).
      for await (const ev of followEvents({ baseUrl: server.url, agent: 'ts-hello', since: last, retries: 30, signal: AbortSignal.timeout(150_000) })) {
        got.push(ev);
        if (ENDS.includes(ev.type)) return;
      }
    })();
    await new Promise((r) => setTimeout(r, 300)); // the socket opens
    await server.restart();
    expect((await client.POST('/api/v1/agents', { body: { name: 'ts-hello', instructions: '@say again' } })).response.status).to.equal(200);
    await following;
    expect(got[0]?.type).to.equal('task_started');
    expect(got.at(-1)?.payload).to.include({ result: 'again' });
    expect(got.map((e) => e.seq)).to.deep.equal(got.map((_, i) => last + 1 + i));
  });

  it('creates, gets and deletes a secret and a connector that uses it', async () => {
    const secret = await client.POST('/api/v1/secrets', {
      body: { name: 'ts-token', data: { token: 's3cr3t-value' }, allowedUrls: ['https://mcp.example.com/'] },
    });
    expect(secret.response.status, JSON.stringify(secret.error)).to.equal(201);
    const got = await client.GET('/api/v1/secrets/{name}', { params: { path: { name: 'ts-token' } } });
    expect(got.data?.name).to.equal('ts-token');
    expect(JSON.stringify(got.data)).not.to.include('s3cr3t-value');

    const body = { name: 'ts-tools', url: 'https://mcp.example.com/mcp', authSecretName: 'ts-token', authSecretKey: 'token' };
    expect((await client.POST('/api/v1/connectors', { body })).response.status).to.equal(201);
    const connector = await must(client.GET('/api/v1/connectors/{name}', { params: { path: { name: 'ts-tools' } } }));
    expect(connector.url).to.equal('https://mcp.example.com/mcp');
    expect((await must(client.GET('/api/v1/connectors'))).connectors.map((c) => c.name)).to.include('ts-tools');

    await must(client.DELETE('/api/v1/connectors/{name}', { params: { path: { name: 'ts-tools' } } }));
    const gone = await client.GET('/api/v1/connectors/{name}', { params: { path: { name: 'ts-tools' } } });
    expect(gone.error?.reason).to.equal('NotFound');
    await must(client.DELETE('/api/v1/secrets/{name}', { params: { path: { name: 'ts-token' } } }));
  });

  it('creates, gets and deletes a squad and a schedule', async () => {
    const members = ['ts-sq-a', 'ts-sq-b'].map((name) => ({ name, spec: { instructions: '@say ready' } }));
    const squad = await client.POST('/api/v1/squads', { body: { name: 'ts-squad', members } });
    expect(squad.response.status, JSON.stringify(squad.error)).to.equal(201);
    expect((await must(client.GET('/api/v1/squads/{name}', { params: { path: { name: 'ts-squad' } } }))).name).to.equal('ts-squad');
    await must(client.DELETE('/api/v1/squads/{name}', { params: { path: { name: 'ts-squad' } } }));

    const schedule = { name: 'ts-nightly', agent: 'ts-hello', cron: '0 3 * * *', instructions: '@say nightly', suspend: true };
    expect((await client.POST('/api/v1/schedules', { body: schedule })).response.status).to.equal(201);
    const got = await must(client.GET('/api/v1/schedules/{name}', { params: { path: { name: 'ts-nightly' } } }));
    expect(got).to.include({ cron: '0 3 * * *', suspend: true });
    await must(client.DELETE('/api/v1/schedules/{name}', { params: { path: { name: 'ts-nightly' } } }));
  });

  it('surfaces refusals as typed errors with their reason: 404, 409, 400, a refused event stream, a stream whose agent is deleted (4410)', async () => {
    const missing = await client.GET('/api/v1/agents/{name}', { params: { path: { name: 'ts-no-such-agent' } } });
    expect(missing.response.status).to.equal(404);
    expect(missing.error?.reason).to.equal('NotFound');
    const thrown = await must(client.GET('/api/v1/agents/{name}', { params: { path: { name: 'ts-no-such-agent' } } })).catch((e: unknown) => e);
    expect(thrown).to.be.instanceOf(AgentplaneError).and.include({ status: 404, reason: 'NotFound' });

    const body = { name: 'ts-twice', url: 'https://mcp.example.com/twice' };
    await must(client.POST('/api/v1/connectors', { body }));
    const again = await client.POST('/api/v1/connectors', { body });
    expect(again.response.status).to.equal(409);
    expect(again.error?.reason).to.equal('AlreadyExists');
    await must(client.DELETE('/api/v1/connectors/{name}', { params: { path: { name: 'ts-twice' } } }));

    const invalid = await client.POST('/api/v1/agents', { body: { name: 'Not_A_Name', instructions: 'x' } });
    expect(invalid.response.status).to.equal(400);
    expect(invalid.error?.reason).to.equal('Invalid');
    expect(invalid.error?.details?.causes?.[0]?.field).to.be.a('string');

    const refused = await (async () => {
      for await (const _ of followEvents({ baseUrl: server.url, agent: 'ts-no-such-agent' })) void _;
    })().catch((e: unknown) => e);
    expect(refused).to.be.instanceOf(EventStreamError).and.include({ status: 404, reason: 'NotFound' });

    // An agent deleted while followed ends the stream with 4410 "agent deleted" (deleted once the
    // replay's first event shows the socket is open).
    let deleted = false;
    const ended = await (async () => {
      for await (const _ of followEvents({ baseUrl: server.url, agent: 'ts-hello' })) {
        if (!deleted) await must(client.DELETE('/api/v1/agents/{name}', { params: { path: { name: 'ts-hello' } } }));
        deleted = true;
      }
    })().catch((e: unknown) => e);
    expect(ended).to.be.instanceOf(EventStreamError).and.include({ code: 4410, reason: 'agent deleted' });
  });

  it("runs the README's example", async () => {
    const readme = readFileSync(join(REPO, 'clients/typescript/README.md'), 'utf8');
    const example = /```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(example, 'README.md has no ts example').to.be.a('string');
    // The example is plain JavaScript as well as TypeScript: it runs as is, the package's name
    // pointed at the client this build compiled.
    const built = pathToFileURL(fileURLToPath(new URL('../../clients/typescript/src/index.js', import.meta.url))).href;
    const dir = mkdtempSync(join(tmpdir(), 'agentplane-ts-example-'));
    try {
      writeFileSync(join(dir, 'example.mjs'), example!.replaceAll("'@agentplane/client'", `'${built}'`));
      const { stdout } = await run(process.execPath, [join(dir, 'example.mjs')], {
        env: { ...process.env, AGENTPLANE_URL: server.url },
        timeout: 150_000,
      }).catch((e: { stdout?: string; stderr?: string; message: string }) => {
        throw new Error(`the example failed: ${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`);
      });
      expect(stdout).to.include('task_completed');
      expect(stdout).to.include('hello from the README');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('compiles as a package of its own, without the server code (its tsconfig.json)', async () => {
    const tsc = join(REPO, 'node_modules/typescript/bin/tsc');
    await run(process.execPath, [tsc, '-p', join(REPO, 'clients/typescript/tsconfig.json'), '--noEmit'], { timeout: 60_000 });
  });
});
