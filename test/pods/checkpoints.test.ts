// Checkpoints and forks in the cluster home, on a real node (docs/kubernetes-runtime.md
// "Checkpoints"): a checkpoint is a claim of its own filled by a short-lived copy pod from the
// agent's workspace claim; a fork's workspace claim is filled from it before the fork's first pod
// starts. The scripted model runs on the host behind the server's model proxy, so the test reads
// what the fork's engine sent: the original's earlier prompt, from the resumed session.

import { expect } from 'chai';

import { type ScriptedModel, startScriptedModel } from '../../pkg/scriptedmodel/index.js';
import { busyFor } from '../support/harness.js';
import { type Agentplane, agentEvents, type Cluster, clusterUp, describeFailure, livePods, registerAgentplane, toolOutputs } from '../support/pods.js';

const NS = 'checkpoints-e2e';
const KEY = `sk-ant-checkpoints-${Math.random().toString(36).slice(2, 14)}`;
const ORIG = '@bash echo written by orig > notes.txt\n@say remember the word PLUM';

/** As the harness's `eventually`, a second apart: each look runs kubectl. */
async function eventually<T>(fn: () => Promise<T | undefined | false>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

describe('e2e: checkpoints and forks of agents as pods', function () {
  this.timeout(240_000);
  let c: Cluster;
  let ap: Agentplane;
  let model: ScriptedModel;

  const kubectl = (...args: string[]) => c.kubectl(args).then((r) => r.stdout);
  const jsonpath = (ref: string, path: string) => kubectl('get', ref, '-n', NS, '-o', `jsonpath={${path}}`);
  const taskStatus = (name: string) => jsonpath(`agent/${name}`, '.status.taskStatus').catch(() => '');
  const observed = (name: string) => jsonpath(`agent/${name}`, '.status.observedTask').catch(() => '');

  /** Sends a task (creating the agent with `extra` when new) and waits for it to complete. */
  async function runTask(name: string, instructions: string, extra: Record<string, unknown> = {}): Promise<void> {
    const before = Number((await observed(name)) || 0);
    const sent = await ap.rest('POST', '/api/v1/agents', { name, namespace: NS, instructions, ...extra });
    expect(sent.status, JSON.stringify(sent.body)).to.be.oneOf([200, 201]);
    await eventually(
      async () => Number((await observed(name)) || 0) > before && ['Complete', 'Failed', 'Cancelled'].includes(await taskStatus(name)),
      180_000,
      `${name}: its task's end`,
    );
    expect(await taskStatus(name), `${name}: ${await jsonpath(`agent/${name}`, '.status.lastTaskMessage')}`).to.equal('Complete');
  }

  /** Takes the checkpoint (unless `create` is false: a squad's) and waits for it to be Ready (or Failed: the test then says why). */
  async function checkpoint(agent: string, name: string, create = true): Promise<Record<string, unknown>> {
    if (create) {
      const r = await ap.rest('POST', `/api/v1/agents/${agent}/checkpoints?namespace=${NS}`, { name });
      expect(r.status, JSON.stringify(r.body)).to.be.oneOf([201, 202]);
    }
    return eventually(
      async () => {
        const g = await ap.rest('GET', `/api/v1/agents/${agent}/checkpoints/${name}?namespace=${NS}`);
        return g.body.phase === 'Pending' ? undefined : g.body;
      },
      180_000,
      `checkpoint ${agent}/${name} taken`,
    );
  }

  const copyPods = () => livePods(c, NS, 'agentplane.io/component=checkpoint-copy');
  const modelRequest = (firstLine: string) => model.requests.find((r) => r.hasTools && r.lastUserText.startsWith(firstLine));

  before(async function () {
    this.timeout(45 * 60_000);
    c = await clusterUp();
    // The model API on the host; the server's model proxy (on the host too) forwards to it.
    model = await startScriptedModel({ host: '127.0.0.1', apiKey: KEY });
    ap = await registerAgentplane(c, { AGENTPLANE_CP_MODEL_URL: model.url, ANTHROPIC_API_KEY: KEY, AGENTPLANE_MODEL_PROXY: 'server' });
    await kubectl('create', 'namespace', NS);
  });

  afterEach(async function () {
    if (this.currentTest?.state === 'failed' && c) console.log(await describeFailure(c, NS));
  });

  after(async function () {
    this.timeout(180_000);
    await model?.close();
    await c?.down();
  });

  describe('a solo agent', () => {
    it('takes a checkpoint into a claim of its own, by a copy pod that is gone afterwards', async () => {
      await runTask('orig', ORIG);
      const cp = await checkpoint('orig', 'first');
      expect(cp, JSON.stringify(cp)).to.include({ phase: 'Ready', task: 1 });
      expect(cp.bytes).to.be.greaterThan(0);
      const claim = await c.json<{ metadata: { labels: Record<string, string>; annotations: Record<string, string> } }>([
        'get',
        'pvc',
        'checkpoint-orig.first',
        '-n',
        NS,
      ]);
      expect(claim.metadata.labels).to.include({ 'agentplane.io/component': 'checkpoint' });
      // Not the agent's: removing the agent leaves its checkpoints.
      expect(claim.metadata.labels).to.not.have.property('agentplane.io/agent');
      expect(claim.metadata.annotations).to.include({ 'agentplane.io/checkpoint': `${NS}/orig.first`, 'agentplane.io/checkpoint-bytes': String(cp.bytes) });
      // The engine session in the copy, as the pod found it: the one the agent's next task resumes.
      expect(claim.metadata.annotations['agentplane.io/checkpoint-session']).to.equal(await jsonpath('agent/orig', '.status.sessionId'));
      await eventually(async () => (await copyPods()).length === 0, 30_000, 'the copy pod removed');
      expect(await kubectl('get', 'networkpolicies', '-n', NS, '-l', 'agentplane.io/component=network-policy', '-o', 'name')).to.not.contain('checkpoint-copy');
    });

    it('starts a fork with the files and the conversation; its writes do not reach the original', async () => {
      await runTask('fork', '@bash cat notes.txt && echo forked >> notes.txt && cat notes.txt\n@say done', { fromCheckpoint: 'orig/first' });
      expect(await toolOutputs(c, NS, 'fork')).to.deep.equal(['written by orig\nwritten by orig\nforked']);
      // The fork's engine resumed the original's session: its model request carries the earlier prompt.
      const req = modelRequest('@bash cat notes.txt && echo forked');
      expect(req?.userTexts[0]).to.equal(ORIG);
      expect(await jsonpath('pvc/agent-fork-workspace', '.metadata.labels.agentplane\\.io/agent')).to.equal('fork');
      const restored = await jsonpath('agent/fork', '.status.conditions[?(@.type=="Restored")].status');
      expect(restored).to.equal('True');
      await runTask('orig', '@bash cat notes.txt\n@say still mine');
      expect((await toolOutputs(c, NS, 'orig')).at(-1)).to.equal('written by orig');
    });

    it('during a task: the copy pod copies while the next model request is held, and the task goes on', async () => {
      const steps = `@bash echo one > a.txt\n@bash ${busyFor(8)}\n@bash echo two > b.txt\n@say stepped`;
      const sent = await ap.rest('POST', '/api/v1/agents', { name: 'stepper', namespace: NS, instructions: steps });
      expect(sent.status, JSON.stringify(sent.body)).to.be.oneOf([200, 201]);
      // The second step (the busy one) runs: the checkpoint is taken at the step after it.
      await eventually(async () => (await agentEvents(c, NS, 'stepper')).filter((e) => e.type === 'tool_call').length >= 2, 180_000, 'the busy step');
      const cp = await checkpoint('stepper', 'step');
      expect(cp, JSON.stringify(cp)).to.include({ phase: 'Ready', task: 1, duringTask: true });
      await eventually(async () => (await taskStatus('stepper')) === 'Complete', 120_000, 'the task goes on to its end');
      expect(await jsonpath('agent/stepper', '.status.lastTaskMessage')).to.equal('stepped');
      // The fork has the first step's file, not the third's, and the running task's prompt in its conversation.
      await runTask('stepfork', '@bash ls a.txt b.txt; true\n@say listed', { fromCheckpoint: 'stepper/step' });
      const [ls] = await toolOutputs(c, NS, 'stepfork');
      expect(ls)
        .to.contain('a.txt')
        .and.to.match(/b\.txt'?: No such file/);
      expect(modelRequest('@bash ls a.txt b.txt')?.userTexts).to.include(steps);
    });

    it("a copy that fails makes the checkpoint Failed with the copy pod's own words, and leaves nothing behind", async () => {
      await runTask('locked', '@bash echo secret > locked.txt && chmod 000 locked.txt\n@say locked');
      const cp = await checkpoint('locked', 'no');
      expect(cp.phase, JSON.stringify(cp)).to.equal('Failed');
      expect(cp.message).to.match(/^the copy failed: the copy pod checkpoint-copy-\w+ failed \(exit code 1: .*locked\.txt.*Permission denied/);
      await eventually(async () => !(await kubectl('get', 'pvc', '-n', NS, '-o', 'name')).includes('checkpoint-locked.no'), 60_000, 'its claim deleted');
      await eventually(async () => (await copyPods()).length === 0, 30_000, 'the copy pod removed');
    });

    it('deletes the checkpoint and its claim; the fork keeps working', async () => {
      const d = await ap.rest('DELETE', `/api/v1/agents/orig/checkpoints/first?namespace=${NS}`);
      expect(d.status, JSON.stringify(d.body)).to.equal(200);
      await eventually(
        async () => !(await kubectl('get', 'pvc', '-n', NS, '-o', 'name')).includes('checkpoint-orig.first'),
        60_000,
        'the checkpoint claim deleted',
      );
      await runTask('fork', '@bash cat notes.txt\n@say still here');
      expect((await toolOutputs(c, NS, 'fork')).at(-1)).to.equal('written by orig\nforked');
    });
  });

  describe('a squad', () => {
    it("checkpoints every member's workspace at one moment beside the running squad pod; a new squad starts from them", async () => {
      const body = {
        name: 'crew',
        namespace: NS,
        members: ['ada', 'bob'].map((name) => ({ name, spec: { instructions: `@bash echo ${name} wrote this > mine.txt\n@say ${name} ready` } })),
      };
      const created = await ap.rest('POST', '/api/v1/squads', body);
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      await eventually(async () => (await taskStatus('ada')) === 'Complete' && (await taskStatus('bob')) === 'Complete', 180_000, 'both first tasks');
      const [before] = await livePods(c, NS, 'agentplane.io/squad=crew,!agentplane.io/agent');
      const r = await ap.rest('POST', `/api/v1/squads/crew/checkpoints?namespace=${NS}`, { name: 'snap' });
      expect(r.status, JSON.stringify(r.body)).to.be.oneOf([201, 202]);
      const taken = await Promise.all(['ada', 'bob'].map((m) => checkpoint(m, 'snap', false)));
      expect(
        taken.map((t) => [t.agent, t.phase, t.task]),
        JSON.stringify(taken),
      ).to.deep.equal([
        ['ada', 'Ready', 1],
        ['bob', 'Ready', 1],
      ]);
      expect(taken[0].takenAt).to.equal(taken[1].takenAt);
      // The squad's pod ran on throughout: the copies read the members' claims beside it.
      const [after] = await livePods(c, NS, 'agentplane.io/squad=crew,!agentplane.io/agent');
      expect(after?.metadata.uid).to.equal(before?.metadata.uid);
      expect(after?.status.containerStatuses?.map((s) => s.restartCount)).to.deep.equal([0, 0]);

      const fork = await ap.rest('POST', '/api/v1/squads', {
        name: 'crew2',
        namespace: NS,
        members: ['ada', 'bob'].map((m) => ({ name: `${m}2`, spec: { instructions: `@bash cat mine.txt\n@say ${m}2`, fromCheckpoint: `${m}/snap` } })),
      });
      expect(fork.status, JSON.stringify(fork.body)).to.equal(201);
      await eventually(async () => (await taskStatus('ada2')) === 'Complete' && (await taskStatus('bob2')) === 'Complete', 180_000, "the forks' first tasks");
      expect(await toolOutputs(c, NS, 'ada2')).to.deep.equal(['ada wrote this']);
      expect(await toolOutputs(c, NS, 'bob2')).to.deep.equal(['bob wrote this']);
      const req = model.requests.find((q) => q.hasTools && q.lastUserText === '@bash cat mine.txt\n@say bob2');
      expect(req?.userTexts[0]).to.equal('@bash echo bob wrote this > mine.txt\n@say bob ready');
    });
  });
});
