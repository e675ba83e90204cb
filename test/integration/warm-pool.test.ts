// The warm pool end to end, on real workers and the real engine against the scripted model: the
// pool fills with pre-started workers, a new agent takes one over (the same process, its engine
// already up), the pool refills, the agent's workspace, credentials and session are its own from
// then on, and nothing of the pool outlives the server.

import { existsSync, lstatSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { expect } from 'chai';
import type { Condition } from '../../pkg/api/condition.js';
import { runTask } from '../support/agents.js';
import { eventually, type Harness, startHarness } from '../support/harness.js';
import { alive } from '../support/server-process.js';

const AGG = '/apis/agentplane.io/v1alpha1/namespaces/default/agents';

/** The model credential in a process's environment (the worker's, as the runtime started it). */

describe('warm pool (integration)', function () {
  this.timeout(120_000);
  let h: Harness;
  let closed = false;
  const local = () => h.server.local!;
  const ref = (name: string) => ({ namespace: 'default', name });

  before(async () => {
    h = await startHarness({ warmPool: 2, idleTimeoutMs: 4_000 });
  });
  after(async () => {
    if (!closed) return h?.close();
    await h.model.close();
    rmSync(h.dataDir, { recursive: true, force: true });
  });

  it('fills the pool with started workers that are no agents', async () => {
    await eventually(async () => local().poolReady === 2, 60_000, 'two ready slots');
    const pids = local().poolPids();
    expect(pids).to.have.length(2);
    for (const pid of pids) expect(alive(pid), `slot ${pid} runs`).to.equal(true);
    expect(readdirSync(join(h.dataDir, 'pool'))).to.have.length(2);
    const metrics = await h.api('GET', '/metrics');
    expect(metrics.text).to.match(/^agentplane_warm_pool_slots 2$/m);
    const list = await h.api('GET', AGG);
    expect(list.body.items).to.deep.equal([]);
  });

  it('hands a new agent a slot: the same process and engine run its task, in a workspace of its own', async () => {
    expect(local().sandboxed, 'bubblewrap must be usable for these tests (.ci/run installs it)').to.equal(true);
    const before = local().poolPids();
    const evs = await runTask(h, 'claimer', `@bash echo from-the-pool > note.txt\n@bash ls ${h.dataDir}/pool\n@say done`);
    expect(evs.map((e) => e.type)).to.deep.equal(['task_started', 'tool_call', 'tool_result', 'tool_call', 'tool_result', 'text', 'task_completed']);
    expect(evs.at(-1)?.payload).to.include({ result: 'done' });
    const pid = local().pid(ref('claimer'));
    // Sandboxed like any worker: of the pool it sees only its own directory, not the other slot's.
    const slotName = basename(realpathSync(join(h.dataDir, 'workspaces', 'default', 'claimer')));
    expect(String((evs[4]?.payload as { output?: unknown }).output).trim()).to.equal(slotName);
    expect(before, 'the agent runs in a slot started before it was created').to.include(pid);
    // The slot's engine, started before the agent existed, took the task.
    expect(h.logs.filter((l) => l.includes('the task takes the pre-started session'))).to.have.length(1);

    // The workspace is the slot's directory, the file is the agent's.
    const workspace = join(h.dataDir, 'workspaces', 'default', 'claimer');
    expect(lstatSync(workspace).isSymbolicLink()).to.equal(true);
    expect(realpathSync(workspace).startsWith(realpathSync(join(h.dataDir, 'pool')))).to.equal(true);
    const file = await h.api('GET', '/api/v1/agents/claimer/files?path=note.txt');
    expect(file.status).to.equal(200);
    expect(file.body.content).to.equal('from-the-pool\n');

    // The slot's model credential now speaks for this agent only.
    const uid = (await h.api('GET', `${AGG}/claimer`)).body.metadata.uid as string;
    const credential = local().issuedSecrets(ref('claimer'))?.ANTHROPIC_API_KEY;
    expect(credential).to.be.a('string');
    expect(h.server.modelProxy.credentials.authenticate(credential)).to.deep.equal({ ref: ref('claimer'), uid });

    // The pool refills with a new process.
    await eventually(async () => local().poolReady === 2, 60_000, 'the pool refilled');
    expect(local().poolPids()).to.not.include(pid);
    const metrics = await h.api('GET', '/metrics');
    expect(metrics.text).to.match(/^agentplane_warm_pool_claims_total\{result="hit"\} 1$/m);
  });

  it('resumes the session in the same directory after the idle release', async () => {
    const pid = local().pid(ref('claimer'))!;
    const credential = local().issuedSecrets(ref('claimer'))?.ANTHROPIC_API_KEY;
    await eventually(
      async () => {
        const r = await h.api('GET', `${AGG}/claimer`);
        return (r.body.status?.conditions as Condition[] | undefined)?.find((c) => c.type === 'WorkerReady')?.reason === 'Released';
      },
      30_000,
      'released',
    );
    await eventually(async () => !alive(pid), 10_000, 'the claimed slot process gone');
    expect(h.server.modelProxy.credentials.authenticate(credential)).to.equal(undefined);

    const evs = await runTask(h, 'claimer', '@say again');
    expect(evs.at(-1)?.type).to.equal('task_completed');
    const [req] = h.model.requests.filter((r) => r.hasTools && r.lastUserText === '@say again');
    expect(req?.userTexts).to.have.length(2);
    expect(req?.userTexts[1]).to.equal('@say again');
    expect(req?.userTexts[0]).to.match(/^@bash echo from-the-pool/);
    // Woken, not new: it started cold, so the pool's slots are untouched.
    expect(local().poolPids()).to.not.include(local().pid(ref('claimer')));
  });

  it('claims a slot for an agent with other settings, whose engine then starts anew', async () => {
    await eventually(async () => local().poolReady === 2, 60_000, 'two ready slots');
    const before = local().poolPids();
    const r = await h.api('POST', '/api/v1/agents', { name: 'other', instructions: '@say on another model', model: 'scripted-model-2' });
    expect(r.status, JSON.stringify(r.body)).to.be.oneOf([200, 201]);
    const [req] = await eventually(
      async () => {
        const reqs = h.model.requests.filter((q) => q.hasTools && q.lastUserText === '@say on another model');
        return reqs.length ? reqs : undefined;
      },
      30_000,
      'the task reached the model',
    );
    expect(req?.model).to.equal('scripted-model-2');
    expect(before).to.include(local().pid(ref('other')));
    expect(h.logs.some((l) => l.includes('pre-started with other settings'))).to.equal(true);
  });

  it('removes the workspace (the slot directory) and the credential with the agent', async () => {
    const slotDir = realpathSync(join(h.dataDir, 'workspaces', 'default', 'other'));
    const credential = local().issuedSecrets(ref('other'))?.ANTHROPIC_API_KEY;
    expect((await h.api('DELETE', '/api/v1/agents/other')).status).to.be.oneOf([200, 202]);
    await eventually(async () => !existsSync(slotDir), 30_000, 'the slot directory removed');
    expect(existsSync(join(h.dataDir, 'workspaces', 'default', 'other'))).to.equal(false);
    expect(h.server.modelProxy.credentials.authenticate(credential)).to.equal(undefined);
  });

  it('after a restart keeps the claimed directory beside the new slots, and the agent resumes there', async () => {
    const claimed = basename(realpathSync(join(h.dataDir, 'workspaces', 'default', 'claimer')));
    await h.restart({ warmPool: 2, idleTimeoutMs: 4_000 });
    await eventually(async () => local().poolReady === 2, 60_000, 'two ready slots after the restart');
    const dirs = readdirSync(join(h.dataDir, 'pool'));
    expect(dirs).to.include(claimed);
    expect(dirs).to.have.length(3);
    const evs = await runTask(h, 'claimer', '@say after the restart');
    expect(evs.at(-1)?.type).to.equal('task_completed');
    const [req] = h.model.requests.filter((r) => r.hasTools && r.lastUserText === '@say after the restart');
    expect(req?.userTexts).to.have.length(3);
  });

  it('leaves no process and no slot directory behind on shutdown', async () => {
    await eventually(async () => local().poolReady === 2, 60_000, 'two ready slots');
    const pids = [...local().poolPids(), local().pid(ref('claimer'))].filter((p): p is number => p !== undefined);
    expect(pids.length).to.be.at.least(2);
    closed = true;
    await h.server.close();
    for (const pid of pids) expect(alive(pid), `process ${pid} stopped`).to.equal(false);
    // The claimed slot's directory is the agent's workspace and stays; the unclaimed ones go.
    const claimed = basename(realpathSync(join(h.dataDir, 'workspaces', 'default', 'claimer')));
    expect(readdirSync(join(h.dataDir, 'pool'))).to.deep.equal([claimed]);
  });
});
