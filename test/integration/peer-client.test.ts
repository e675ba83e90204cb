// Clients written for the peer project work unchanged: komputer-ai's own Python SDK
// (komputer-ai-sdk, pinned, from PyPI, installed into a cached virtualenv) drives a real
// agentplane server (real worker, engine and tools; the scripted model). Every call the SDK
// offers is made: what agentplane serves answers as the SDK expects and the SDK reads it; what
// it does not serve is a 4xx naming what is not supported (never a 5xx). Where the answer
// differs from the peer's on purpose, docs/decisions.md "Clients of the peer project" says why.

// Squads, connectors and secrets: peer-client-resources.test.ts.

import { expect } from 'chai';
import { getAgent, waitAgent } from '../support/agents.js';
import { busyFor, eventually, type Harness, startHarness } from '../support/harness.js';
import { errorOf, PEER_SDK_VERSION, type PeerClient, PeerClient as Peer, peerSdkPython } from '../support/peer-sdk.js';

const AGG = '/apis/agentplane.io/v1alpha1/namespaces/default';
/** The SDK's AgentEvent, as the driver answers it. */
interface PeerEvent {
  agent_name: string;
  type: string;
  timestamp: string;
  payload: Record<string, any>;
}

describe(`clients of the peer project: komputer-ai-sdk ${PEER_SDK_VERSION}, agents (integration)`, function () {
  this.timeout(120_000);
  let h: Harness;
  let sdk: PeerClient;

  /** When the test last sent a task: its events are the ones from then on. */
  let sent = '';
  /** Sends with the SDK (create_agent, ...), noting when. */
  const send = (call: string, args: unknown[], kwargs: Record<string, unknown> = {}): Promise<any> => {
    sent = new Date().toISOString();
    return sdk.ok(call, args, kwargs);
  };
  /**
   * Watches the agent with the SDK (watch_agent) until the task sent last ends; that task's events
   * (the SDK's stream starts with the agent's recent history, earlier tasks' included).
   */
  const watchTask = async (name: string): Promise<PeerEvent[]> =>
    (await sdk.ok('watch', [], { name, since: sent, until: ['task_completed', 'task_cancelled', 'error'] })) as PeerEvent[];

  before(async function () {
    this.timeout(600_000); // a first run installs the SDK from PyPI
    peerSdkPython();
    h = await startHarness();
    sdk = new Peer(h.url);
  });
  after(async () => {
    await sdk?.close();
    await h?.close();
  });

  describe('agents', () => {
    it('create_agent, get_agent, watch_agent, list_agents and get_agent_events', async () => {
      // 201 Created: the SDK's generated create reads only a 200, so it returns None (decisions.md).
      expect(await send('create_agent', ['peer-a', '@bash echo peer > peer.txt\n@say peer done'], { model: 'claude-peer-1' })).to.equal(null);
      const got = await sdk.ok('get_agent', ['peer-a']);
      expect(got).to.include({ name: 'peer-a', namespace: 'default', model: 'claude-peer-1' });
      const events = await watchTask('peer-a');
      expect(events.map((e) => e.type)).to.include.members(['task_started', 'tool_call', 'tool_result', 'task_completed']);
      expect(events.at(-1)!.payload).to.include({ result: 'peer done' });
      expect(events.every((e) => e.agent_name === 'peer-a')).to.equal(true);

      const list = await sdk.ok('list_agents');
      expect(list.agents.map((a: { name: string }) => a.name)).to.include('peer-a');
      const history = await sdk.ok('get_agent_events', ['peer-a']);
      expect(history.events.map((e: { type: string }) => e.type)).to.deep.equal(events.map((e) => e.type));
      const two = await sdk.ok('agents.get_agent_events', ['peer-a'], { limit: 2 });
      expect(two.events.map((e: { seq: number }) => e.seq)).to.deep.equal(history.events.slice(-2).map((e: { seq: number }) => e.seq));
    });

    it('create_agent on an idle agent assigns the task (200, the agent); on a busy one the SDK falls back to patch_agent, which steers', async () => {
      const assigned = await send('create_agent', ['peer-a', `@bash ${busyFor(4)}\n@say second done`]);
      expect(assigned).to.include({ name: 'peer-a', taskStatus: 'InProgress' });
      await waitAgent(h, 'peer-a', (a) => a.lastTaskMessage.startsWith('Bash'), 'busy');
      // 409 (busy) -> the SDK's own fallback: PATCH with the same fields, a follow-up into the task.
      const steered = await sdk.ok('create_agent', ['peer-a', 'Also say mangoes\n@echo']);
      expect(steered).to.include({ name: 'peer-a', taskStatus: 'InProgress' });
      const events = await watchTask('peer-a');
      expect(events.filter((e) => e.type === 'user_message').map((e) => e.payload.content)).to.deep.equal(['Also say mangoes\n@echo']);
      expect(events.at(-1)!.payload.result).to.contain('mangoes');
    });

    it('create_agent with lifecycle: Sleep sleeps after the task, AutoDelete deletes after it, as a PATCH after the create would', async () => {
      expect(await sdk.ok('create_agent', ['peer-sleepy', '@say nap time'], { lifecycle: 'Sleep' })).to.equal(null);
      const slept = await waitAgent(h, 'peer-sleepy', (a) => a.status === 'Sleeping', 'asleep after its task');
      expect(slept).to.include({ taskStatus: 'Complete', lifecycle: 'Sleep', lastTaskMessage: 'nap time' });

      expect(await sdk.ok('create_agent', ['peer-once', '@say once'], { lifecycle: 'AutoDelete' })).to.equal(null);
      await eventually(async () => (await getAgent(h, 'peer-once')) === undefined, 45_000, 'auto-deleted after its task');

      // On an existing agent, the assignment and then the lifecycle, as two PATCHes would.
      const again = await sdk.ok('create_agent', ['peer-sleepy', '@say nap again'], { lifecycle: 'Sleep' });
      expect(again).to.include({ name: 'peer-sleepy', lifecycle: 'Sleep' });
      await waitAgent(h, 'peer-sleepy', (a) => a.status === 'Sleeping' && a.lastTaskMessage === 'nap again', 'asleep again');

      const archive = await sdk.refused('create_agent', ['peer-archive', 'x'], { lifecycle: 'Archive' });
      expect(archive.status).to.equal(400);
      expect(archive.body.details.causes).to.deep.equal([{ field: 'lifecycle', message: 'must be one of "", "Sleep", "Wake", "AutoDelete"' }]);
    });

    it('memories and skills attach agentplane Memory and Skill objects by name; a name that does not exist is 400 naming it', async () => {
      const m = await h.api('POST', '/api/v1/memories', { name: 'peer-notes', text: 'remember this' });
      expect(m.status, m.text).to.equal(201);
      const sk = await h.api('POST', '/api/v1/skills', {
        name: 'peer-skill',
        files: { 'SKILL.md': '---\nname: peer-skill\ndescription: a peer skill\n---\nDo it.\n' },
      });
      expect(sk.status, sk.text).to.equal(201);
      await sdk.ok('create_agent', ['peer-mem', '@say ok'], { memories: ['peer-notes'], skills: ['peer-skill'] });
      expect(await getAgent(h, 'peer-mem')).to.deep.include({ memories: ['peer-notes'], skills: ['peer-skill'] });
      const lost = await sdk.refused('create_agent', ['peer-lost', 'x'], { memories: ['no-such-memory'] });
      expect(lost.status).to.equal(400);
      expect(lost.body.details.causes).to.deep.equal([{ field: 'memories[0]', message: 'memory "no-such-memory" not found in namespace "default"' }]);
    });

    it('fields agentplane does not have (secretRefs, podSpec, ...) are 400 naming each, with what to do instead', async () => {
      const r = await sdk.refused('create_agent', ['peer-extra', 'x'], { secret_refs: ['s'], priority: 5, pod_spec: { containers: [] } });
      expect(r.status).to.equal(400);
      const fields = r.body.details.causes.map((c: { field: string }) => c.field);
      expect(fields).to.have.members(['secretRefs', 'podSpec']);
      for (const c of r.body.details.causes) expect(c.message, c.field).to.match(/^is not supported by agentplane: \S/);
      expect(errorOf(r)).to.contain('secretRefs: is not supported by agentplane');
      expect(await getAgent(h, 'peer-extra')).to.equal(undefined);

      const p = await sdk.refused('patch_agent', ['peer-a'], { effort: 'high', template_ref: 'other' });
      expect(p.status).to.equal(400);
      expect(p.body.details.causes.map((c: { field: string }) => c.field)).to.have.members(['effort', 'templateRef']);
    });

    it("priority (an integer, higher first in its namespace's line) is taken on create and patch", async () => {
      await sdk.ok('create_agent', ['peer-urgent', '@say ok'], { priority: 5 });
      expect(await getAgent(h, 'peer-urgent')).to.include({ name: 'peer-urgent', priority: 5 });
      await sdk.ok('patch_agent', ['peer-urgent'], { priority: -3 });
      expect(await getAgent(h, 'peer-urgent')).to.include({ priority: -3 });
      const bad = await sdk.refused('patch_agent', ['peer-urgent'], { priority: 5000 });
      expect(bad.status).to.equal(400);
      expect(bad.body.details.causes.map((c: { field: string }) => c.field)).to.deep.equal(['priority']);
    });

    it('patch_agent sets model and system prompt; list_agents filters it does not have are 400', async () => {
      const p = await sdk.ok('patch_agent', ['peer-a'], { model: 'claude-peer-2', system_prompt: 'You are a peer.' });
      expect(p).to.include({ name: 'peer-a', model: 'claude-peer-2' });
      for (const [kw, field] of [
        [{ status: 'Running' }, 'status'],
        [{ q: 'peer' }, 'q'],
        [{ sort: 'name' }, 'sort'],
        [{ label: ['a=b'] }, 'label'],
      ] as const) {
        const r = await sdk.refused('list_agents', [], kw);
        expect(r.status, field).to.equal(400);
        expect(r.body.details.causes[0]).to.include({ field });
        expect(r.body.details.causes[0].message).to.match(/^is not supported: /);
      }
      const before = await sdk.refused('agents.get_agent_events', ['peer-a'], { before: '2026-01-01T00:00:00Z' });
      expect(before.status).to.equal(400);
      expect(before.body.details.causes[0]).to.include({ field: 'before' });
      expect(before.body.details.causes[0].message).to.contain('timestamps are not supported');
      const after = await sdk.refused('agents.get_agent_events', ['peer-a'], { after: '2026-01-01T00:00:00Z' });
      expect(after.status).to.equal(400);
      expect(after.body.details.causes[0]).to.include({ field: 'after' });
    });

    it('cancel_agent_task cancels a running task; on an idle agent it is an idempotent 200 saying nothing was running', async () => {
      expect(await sdk.ok('create_agent', ['peer-cancel', `@bash ${busyFor(30)}\n@say never`])).to.equal(null);
      await waitAgent(h, 'peer-cancel', (a) => a.lastTaskMessage.startsWith('Bash'), 'busy');
      // The SDK reads this answer as a map of strings.
      const c = await sdk.ok('cancel_agent_task', ['peer-cancel']);
      expect(c).to.include({ name: 'peer-cancel', taskStatus: 'Cancelled', cancelled: 'True' });
      for (let i = 0; i < 2; i++) {
        const again = await sdk.ok('cancel_agent_task', ['peer-cancel']);
        expect(again).to.include({ name: 'peer-cancel', taskStatus: 'Cancelled', cancelled: 'False' });
        expect(again.message).to.equal('nothing was running: agent "peer-cancel" has no task in progress');
      }
      const events = (await h.api('GET', '/api/v1/agents/peer-cancel/events')).body.events as { type: string }[];
      expect(events.filter((e) => e.type === 'task_cancelled')).to.have.length(1);
      expect((await sdk.refused('cancel_agent_task', ['peer-nobody'])).status).to.equal(404);
    });

    it("compact_agent_task compacts the running task's session through the engine (context_compacted); idle is 409 saying why", async () => {
      expect(await send('create_agent', ['peer-compact', '@bash echo first > notes.txt\n@say first task done'])).to.equal(null);
      await watchTask('peer-compact');
      const idle = await sdk.refused('compact_agent_task', ['peer-compact']);
      expect(idle.status).to.equal(409);
      expect(idle.body.reason).to.equal('Conflict');
      expect(errorOf(idle)).to.contain('has nothing running to compact: it has no task in progress');

      await send('create_agent', ['peer-compact', `@bash ${busyFor(4)}\n@say compacted task done`]);
      await waitAgent(h, 'peer-compact', (a) => a.lastTaskMessage.startsWith('Bash'), 'busy');
      const c = await sdk.ok('compact_agent_task', ['peer-compact'], { instructions: 'keep the file names' });
      expect(c).to.deep.equal({
        agent: 'peer-compact',
        namespace: 'default',
        task: '2',
        status: 'compacting',
        message: "task 2's session is compacted after its current turn; a context_compacted event follows",
      });
      const events = await watchTask('peer-compact');
      const compacted = events.filter((e) => e.type === 'context_compacted');
      expect(compacted, events.map((e) => e.type).join(', ')).to.have.length(1);
      expect(compacted[0].payload.trigger).to.equal('manual');
      expect(compacted[0].payload.pre_tokens).to.be.greaterThan(0);
      // The compaction ran after the task's last turn; the task's result is that turn's.
      expect(events.at(-1)).to.include({ type: 'task_completed' });
      expect(events.at(-1)!.payload.result).to.equal('compacted task done');
      expect(events.findIndex((e) => e.type === 'context_compacted')).to.be.lessThan(events.length - 1);
      // The engine's own compaction reached the model, with the instructions given.
      expect(h.model.requests.filter((r) => r.compaction).map((r) => r.compaction!.instructions)).to.include('keep the file names');

      // The session goes on from the summary: the next task runs in it.
      await send('create_agent', ['peer-compact', '@say after the compaction']);
      expect((await watchTask('peer-compact')).at(-1)!.payload.result).to.equal('after the compaction');
      const tooLong = await sdk.refused('compact_agent_task', ['peer-compact'], { instructions: 'x'.repeat(5000) });
      expect(tooLong.status).to.equal(400);
      expect(tooLong.body.details.causes[0]).to.include({ field: 'instructions', message: 'must be at most 4096 characters' });
      expect((await sdk.refused('compact_agent_task', ['peer-nobody'])).status).to.equal(404);
    });

    it("get_agent_cost_breakdown sums the tasks' end events: cost and tokens per task, per model on the REST answer", async () => {
      const events = (await h.api('GET', '/api/v1/agents/peer-a/events?limit=200')).body.events as {
        type: string;
        task: number;
        timestamp: string;
        payload: any;
      }[];
      const ends = events.filter((e) => e.type === 'task_completed');
      expect(ends.length).to.be.greaterThan(1);
      const cost = await sdk.ok('get_agent_cost_breakdown', ['peer-a']);
      expect(cost.agent).to.equal('peer-a');
      expect(cost.taskCount).to.equal(new Set(events.map((e) => e.task)).size);
      expect(cost.totalCost).to.be.closeTo(
        ends.reduce((s, e) => s + e.payload.cost_usd, 0),
        1e-9,
      );
      expect(cost.totalCost).to.be.greaterThan(0);
      for (const e of ends) {
        const t = cost.tasks.find((x: { completedAt: string }) => x.completedAt === e.timestamp);
        expect(t, `task ${e.task}`).to.not.equal(undefined);
        expect(t.costUSD).to.equal(e.payload.cost_usd);
        expect(t.inputTokens).to.equal(e.payload.usage.input_tokens);
        expect(t.outputTokens).to.equal(e.payload.usage.output_tokens);
        expect(t.durationMs).to.equal(Math.round(e.payload.duration_ms));
      }
      const last = await sdk.ok('get_agent_cost_breakdown', ['peer-a'], { limit: 1, events: true });
      expect(last.tasks).to.have.length(1);
      expect(last.taskCount).to.equal(cost.taskCount);
      expect(last.totalCost).to.equal(cost.totalCost);
      expect(last.tasks[0].events.length).to.equal(last.tasks[0].eventCount);

      // Per model (the SDK's model has no field for it): the models the requests named.
      const rest = (await h.api('GET', '/api/v1/agents/peer-a/cost')).body;
      const models = rest.models.map((m: { model: string }) => m.model);
      expect(models).to.include.members(['claude-peer-1']);
      expect(rest.models.reduce((s: number, m: { costUSD: number }) => s + m.costUSD, 0)).to.be.closeTo(rest.totalCost, 1e-9);
      expect(rest.models.reduce((s: number, m: { inputTokens: number }) => s + m.inputTokens, 0)).to.equal(rest.inputTokens);
      expect(rest.tasks.map((t: { outcome: string }) => t.outcome)).to.deep.equal(rest.tasks.map(() => 'completed'));
      // The aggregated API's cost subresource answers the same.
      const agg = await h.api('GET', `${AGG}/agents/peer-a/cost`);
      expect(agg.status, agg.text).to.equal(200);
      expect(agg.body).to.include({ kind: 'AgentCost', totalCost: rest.totalCost, taskCount: rest.taskCount });
      expect((await sdk.refused('get_agent_cost_breakdown', ['peer-nobody'])).status).to.equal(404);
    });

    it('a workspace file downloads binary-safe (/download/<path> and /files?download=1), confined to the workspace', async () => {
      const write = `node -e "require('fs').mkdirSync('out',{recursive:true});require('fs').writeFileSync('out/data.bin',Buffer.from(Array.from({length:256},(_,i)=>i)))" && ln -sf /etc/hostname out/escape`;
      expect(await send('create_agent', ['peer-files', `@bash ${write}\n@say files ready`])).to.equal(null);
      expect((await watchTask('peer-files')).at(-1)!.type).to.equal('task_completed');
      const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
      for (const path of ['/agents/peer-files/download/out/data.bin', '/agents/peer-files/files?path=out/data.bin&download=1']) {
        const d = await sdk.ok('download', [], { path });
        expect(Buffer.from(d.bytes.base64, 'base64').equals(bytes), path).to.equal(true);
        expect(d.contentType).to.equal('application/octet-stream');
        expect(d.contentDisposition).to.contain('filename="data.bin"');
      }
      const escape = await sdk.refused('download', [], { path: '/agents/peer-files/download/out/escape' });
      expect(escape.status).to.equal(400);
      expect(escape.body.details.causes[0]).to.include({ field: 'path', message: 'leads outside the workspace' });
      const dir = await sdk.refused('download', [], { path: '/agents/peer-files/download/out' });
      expect(dir.status).to.equal(400);
      expect(errorOf(dir)).to.contain('is a directory');
      expect((await sdk.refused('download', [], { path: '/agents/peer-files/download/out/none.bin' })).status).to.equal(404);
      const dotdot = await h.api('GET', '/api/v1/agents/peer-files/files?path=../../../etc/passwd&download=1');
      expect(dotdot.status).to.equal(400);
      expect(dotdot.body.details.causes[0]).to.include({ field: 'path', message: 'must not contain ".."' });
      const encoded = await h.api('GET', '/api/v1/agents/peer-files/download/..%2F..%2F..%2Fetc%2Fpasswd');
      expect(encoded.status).to.be.oneOf([400, 404]);
      expect(encoded.text).to.not.contain('root:');
      expect((await h.api('GET', '/api/v1/agents/peer-files/files?path=out/data.bin&download=maybe')).status).to.equal(400);
    });

    it('delete_agent deletes; get_agent then is 404', async () => {
      // `force` (the peer's: do not wait for its session store) changes nothing here.
      expect(await sdk.ok('delete_agent', ['peer-files'], { force: true })).to.include({ name: 'peer-files' });
      await eventually(async () => (await getAgent(h, 'peer-files')) === undefined, 30_000, 'gone');
      const gone = await sdk.refused('get_agent', ['peer-files']);
      expect(gone.status).to.equal(404);
    });
  });

  describe('schedules (agentplane\'s own shape, docs/decisions.md "Clients of the peer project")', () => {
    it("the peer's create body is a 400 naming its fields; the SDK cannot read agentplane's schedules (agent is a name)", async () => {
      const refused = await sdk.refused('create_schedule', ['nightly', '@say hi', '0 3 * * *'], { agent_name: 'peer-a' });
      expect(refused.status).to.equal(400);
      expect(errorOf(refused)).to.contain('schedule');
      expect((await sdk.refused('get_schedule', ['nightly'])).status).to.equal(404);
      const made = await h.api('POST', '/api/v1/schedules', {
        name: 'peer-nightly',
        agent: 'peer-a',
        cron: '0 3 * * *',
        instructions: '@say nightly',
        suspend: true,
      });
      expect(made.status, JSON.stringify(made.body)).to.equal(201);
      // The peer's ScheduleResponse wants `agent` to be an agent spec (its schedules make agents).
      const listed = await sdk.call('list_schedules', []);
      expect(listed.ok).to.equal(false);
      expect(JSON.stringify(listed)).to.contain('V1alpha1ScheduleAgentSpec');
      expect((await h.api('DELETE', '/api/v1/schedules/peer-nightly')).status).to.equal(200);
    });
  });

  describe('what agentplane does not serve', () => {
    it('every such SDK call is a 4xx naming what is not supported, never a 5xx', async () => {
      const calls: [string, unknown[], Record<string, unknown>?][] = [
        ['list_offices', []],
        ['get_office', ['o']],
        ['delete_office', ['o']],
        ['get_office_events', ['o']],
        ['list_templates', []],
        ['list_namespaces', []],
        ['get_config', []],
        ['sleep_agent', ['peer-a']],
        ['wake_agent', ['peer-a']],
        ['archive_agent', ['peer-a']],
      ];
      for (const [call, args, kwargs] of calls) {
        const r = await sdk.refused(call, args, kwargs ?? {});
        expect(r.status, call).to.be.within(400, 499);
        expect(errorOf(r), call).to.match(/agentplane does not support \S.*: \S/);
      }
      // Consumer groups on the event stream: refused at the handshake, the SDK raises.
      const group = await sdk.call('watch', [], { name: 'peer-a', group: 'workers' });
      expect(group.ok).to.equal(false);
      expect(JSON.stringify(group)).to.contain('400');
      const plain = await h.api('GET', '/api/v1/agents/peer-a/ws?group=workers');
      expect(plain.status).to.equal(400);
      expect(plain.body.details.causes[0]).to.include({ field: 'group' });
    });

    it('the aggregated API answers cancel and compact of an idle agent as the REST mirror does', async () => {
      const c = await fetch(`${h.url}${AGG}/agents/peer-a/cancel`, { method: 'POST' });
      expect(c.status).to.equal(200);
      expect(((await c.json()) as { kind: string }).kind).to.equal('Agent');
      expect(c.headers.get('warning')).to.contain('nothing was running');
      const k = await h.api('POST', `${AGG}/agents/peer-a/compact`, {});
      expect(k.status, k.text).to.equal(409);
      expect(k.body).to.include({ kind: 'Status', reason: 'Conflict' });
      expect(k.body.message).to.contain('has nothing running to compact');
    });
  });
});
