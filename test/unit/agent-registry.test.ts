import { FINALIZER_AGENT_CLEANUP } from '../../pkg/api/deletion.js';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { expect } from 'chai';

import { AGENT_KIND, type Agent, type AgentSpec, ASLEEP, isBusy, WORKER_READY } from '../../pkg/api/agent.js';
import { setCondition } from '../../pkg/api/condition.js';
import { ApiError } from '../../pkg/api/errors.js';
import { API_VERSION } from '../../pkg/api/meta.js';
import { agentStrategy, validateObjectName } from '../../pkg/registry/agent/strategy.js';
import { Registry } from '../../pkg/registry/registry.js';
import { SqliteState } from '../../pkg/registry/sqlite/sqlite-state.js';
import type { WatchEvent } from '../../pkg/registry/store.js';
import { rejection } from '../support/assert.js';

/** A new agent the way a client submits it: only what it chose is set. */
function draft(name: string, spec: Partial<AgentSpec> = {}, namespace = 'default'): Agent {
  return {
    apiVersion: '',
    kind: '',
    metadata: { name, namespace, uid: '', resourceVersion: '', generation: 0, creationTimestamp: '' },
    spec: { instructions: 'do the thing', ...spec } as AgentSpec,
    status: undefined as unknown as Agent['status'],
  };
}

/** Letters-only suffix for generated names (names may not contain digits). */
const letters = (i: number): string => String.fromCharCode(97 + (i % 26)) + (i >= 26 ? String.fromCharCode(97 + Math.floor(i / 26)) : '');

describe('Agent registry (Registry + agentStrategy on SqliteState)', function () {
  this.timeout(10_000);

  let dir: string;
  let state: SqliteState;
  let agents: Registry<Agent>;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentplane-reg-'));
    state = new SqliteState(path.join(dir, 'state.db'));
    agents = new Registry<Agent>(state.store<Agent>('Agent'), agentStrategy);
  });

  afterEach(() => {
    state.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Marks the agent's current task settled, as the controller would. */
  const settle = (name: string, taskStatus: Agent['status']['taskStatus'] = 'Complete', namespace = 'default') =>
    agents.updateStatus(namespace, name, (s, obj) => {
      s.taskStatus = taskStatus;
      s.observedTask = obj.spec.task;
      s.status = 'Running';
    });

  describe('create', () => {
    it('applies defaults, the initial status and generation 1', async () => {
      const a = await agents.create(draft('alpha', { task: 1 }));
      expect(a.apiVersion).to.equal(API_VERSION);
      expect(a.kind).to.equal(AGENT_KIND);
      expect(a.spec).to.deep.equal({
        instructions: 'do the thing',
        model: 'claude-sonnet-4-5',
        templateRef: 'default',
        role: 'manager',
        connectors: [],
        lifecycle: '',
        task: 1,
      });
      expect(a.status).to.deep.equal({ status: 'Pending', taskStatus: 'InProgress', lastTaskMessage: '', observedTask: 0, conditions: [] });
      expect(a.metadata.generation).to.equal(1);
      expect(a.metadata.uid).to.not.equal('');
      expect(a.metadata.resourceVersion).to.not.equal('');
      expect(await agents.get('default', 'alpha')).to.deep.equal(a);
    });

    it('starts the first task whoever creates the agent: spec.task defaults to 1', async () => {
      const a = await agents.create(draft('eager'));
      expect(a.spec.task).to.equal(1);
      expect(a.status.taskStatus).to.equal('InProgress');
    });

    it('leaves taskStatus empty when the creator asks for no task (task 0)', async () => {
      const a = await agents.create(draft('idle', { task: 0 }));
      expect(a.spec.task).to.equal(0);
      expect(a.status.taskStatus).to.equal('');
      expect(a.status.status).to.equal('Pending');
    });

    it('keeps values the client chose and ignores a client-supplied status and generation', async () => {
      const d = draft('custom', {
        model: 'claude-opus-4',
        templateRef: 'gpu',
        role: 'worker',
        connectors: ['github', 'slack'],
        lifecycle: 'Sleep',
        systemPrompt: 'be brief',
        task: 2,
      });
      d.status = { status: 'Running', taskStatus: 'Complete', lastTaskMessage: 'forged', observedTask: 2 };
      d.metadata.generation = 42;
      const a = await agents.create(d);
      expect(a.spec).to.deep.include({ model: 'claude-opus-4', templateRef: 'gpu', role: 'worker', lifecycle: 'Sleep', systemPrompt: 'be brief' });
      expect(a.spec.connectors).to.deep.equal(['github', 'slack']);
      expect(a.status).to.deep.equal({ status: 'Pending', taskStatus: 'InProgress', lastTaskMessage: '', observedTask: 0, conditions: [] });
      expect(a.metadata.generation).to.equal(1);
    });

    it('does not modify the object passed in', async () => {
      const d = draft('pure');
      const snap = structuredClone(d);
      await agents.create(d);
      expect(d).to.deep.equal(snap);
    });

    for (const [label, bad] of [
      ['uppercase', 'Alpha'],
      ['more than 63 characters', 'a'.repeat(64)],
      ['a leading hyphen', '-alpha'],
      ['a trailing hyphen', 'alpha-'],
      ['an underscore', 'al_pha'],
      ['an empty name', ''],
    ] as const) {
      it(`rejects a name with ${label} as Invalid naming metadata.name`, async () => {
        const err = await rejection(agents.create(draft(bad)), ApiError);
        expect(err.reason).to.equal('Invalid');
        expect(err.code).to.equal(400);
        const causes = err.details.causes ?? [];
        expect(causes.map((c) => c.field)).to.deep.equal(['metadata.name']);
        expect(causes[0].message).to.equal('must be lowercase letters, digits and hyphens, starting and ending with a letter or digit, at most 63 characters');
        expect(err.message).to.contain('metadata.name');
        expect((await agents.list()).items).to.deep.equal([]);
      });
    }

    it("refuses the sidecar's container name, which would clash in the agent's pod, and keeps nothing", async () => {
      const err = await rejection(agents.create(draft('agentplane-model-proxy')), ApiError);
      expect(err.reason).to.equal('Invalid');
      expect(err.details.causes).to.deep.equal([
        { field: 'metadata.name', message: `"agentplane-model-proxy" is reserved for agentplane's own container in agent pods; choose another name` },
      ]);
      expect((await agents.list()).items).to.deep.equal([]);
      await agents.create(draft('agentplane-model-proxy-2'));
    });

    it('accepts a 63-character name, a one-letter name and names with digits (DNS-1123 labels)', async () => {
      await agents.create(draft('a'.repeat(63)));
      await agents.create(draft('b'));
      await agents.create(draft('agent-1'));
      await agents.create(draft('7up'));
      expect((await agents.list()).items).to.have.length(4);
    });

    for (const bad of ['Team', 'team_a', '-team', 'x'.repeat(64), '']) {
      it(`rejects namespace ${JSON.stringify(bad.length > 10 ? `${bad.slice(0, 5)}…` : bad)} naming metadata.namespace`, async () => {
        const err = await rejection(agents.create(draft('alpha', {}, bad)), ApiError);
        expect(err.reason).to.equal('Invalid');
        expect((err.details.causes ?? []).map((c) => c.field)).to.deep.equal(['metadata.namespace']);
      });
    }

    it('accepts a namespace with digits', async () => {
      const a = await agents.create(draft('alpha', {}, 'team-42'));
      expect(a.metadata.namespace).to.equal('team-42');
    });

    it('reports spec schema causes under spec.*', async () => {
      const err = await rejection(agents.create(draft('alpha', { instructions: '', role: 'boss' as never, connectors: ['ok', 'Bad1'] })), ApiError);
      expect(err.reason).to.equal('Invalid');
      const fields = (err.details.causes ?? []).map((c) => c.field);
      expect(fields).to.include.members(['spec.instructions', 'spec.role', 'spec.connectors[1]']);
    });

    it('fails with AlreadyExists on a duplicate name', async () => {
      await agents.create(draft('alpha'));
      const err = await rejection(agents.create(draft('alpha')), ApiError);
      expect(err.reason).to.equal('AlreadyExists');
      expect(err.code).to.equal(409);
    });
  });

  describe('update', () => {
    it('refuses a new task while the agent is busy with Conflict (409)', async () => {
      await agents.create(draft('busy', { task: 1 }));
      const err = await rejection(
        agents.update('default', 'busy', (a) => {
          a.spec.task += 1;
          a.spec.instructions = 'second';
        }),
        ApiError,
      );
      expect(err.reason).to.equal('Conflict');
      expect(err.code).to.equal(409);
      expect(err.message).to.contain('busy');
      const stored = (await agents.get('default', 'busy'))!;
      expect(stored.spec.task).to.equal(1);
      expect(stored.spec.instructions).to.equal('do the thing');
    });

    it('treats a task handed out but not yet observed as busy even when taskStatus is Complete', async () => {
      await agents.create(draft('lagging', { task: 1 }));
      // The previous task reported Complete, but task 1 was never observed by the controller.
      await agents.updateStatus('default', 'lagging', (s) => {
        s.taskStatus = 'Complete';
        s.observedTask = 0;
      });
      const err = await rejection(
        agents.update('default', 'lagging', (a) => void (a.spec.task += 1)),
        ApiError,
      );
      expect(err.reason).to.equal('Conflict');
    });

    it('assigns a new task when idle and marks it InProgress in the same write', async () => {
      await agents.create(draft('idle', { task: 1 }));
      const settled = await settle('idle', 'Complete');
      expect(isBusy(settled)).to.equal(false);
      const events: WatchEvent<Agent>[] = [];
      const stop = agents.watch((e) => events.push(e));
      try {
        const a = await agents.update('default', 'idle', (x) => {
          x.spec.task += 1;
          x.spec.instructions = 'next';
        });
        expect(a.spec.task).to.equal(2);
        expect(a.status.taskStatus).to.equal('InProgress');
        expect(a.status.lastTaskMessage).to.equal('');
        // Exactly one write: no reader could see task 2 with a settled status.
        expect(events).to.have.length(1);
        expect(events[0].object.spec.task).to.equal(2);
        expect(events[0].object.status.taskStatus).to.equal('InProgress');
      } finally {
        stop();
      }
    });

    it('resets a Failed agent to Pending when a new task is assigned', async () => {
      await agents.create(draft('phoenix', { task: 1 }));
      await agents.updateStatus('default', 'phoenix', (s, obj) => {
        s.status = 'Failed';
        s.taskStatus = 'Error';
        s.observedTask = obj.spec.task;
        s.lastTaskMessage = 'Error: boom';
      });
      const a = await agents.update('default', 'phoenix', (x) => void (x.spec.task += 1));
      expect(a.status.status).to.equal('Pending');
      expect(a.status.taskStatus).to.equal('InProgress');
      expect(a.status.lastTaskMessage).to.equal('');
    });

    it('refuses lowering spec.task with an Invalid cause', async () => {
      await agents.create(draft('down', { task: 3 }));
      await settle('down');
      const err = await rejection(
        agents.update('default', 'down', (x) => void (x.spec.task = 2)),
        ApiError,
      );
      expect(err.reason).to.equal('Invalid');
      expect(err.details.causes).to.deep.equal([{ field: 'spec.task', message: 'may only increase' }]);
    });

    it('does not let a spec update change the status', async () => {
      await agents.create(draft('keep', { task: 1 }));
      const a = await agents.update('default', 'keep', (x) => {
        x.spec.connectors = ['github'];
        x.status.status = 'Running';
        x.status.lastTaskMessage = 'forged';
      });
      expect(a.spec.connectors).to.deep.equal(['github']);
      expect(a.status).to.deep.equal({ status: 'Pending', taskStatus: 'InProgress', lastTaskMessage: '', observedTask: 0, conditions: [] });
    });

    it('allows non-task spec changes while busy', async () => {
      await agents.create(draft('busy', { task: 1 }));
      const a = await agents.update('default', 'busy', (x) => void (x.spec.lifecycle = 'Sleep'));
      expect(a.spec.lifecycle).to.equal('Sleep');
    });

    it('validates the updated spec', async () => {
      await agents.create(draft('val'));
      const err = await rejection(
        agents.update('default', 'val', (x) => void (x.spec.lifecycle = 'Nap' as never)),
        ApiError,
      );
      expect(err.reason).to.equal('Invalid');
      expect(err.details.causes?.[0]?.field).to.equal('spec.lifecycle');
      expect((await agents.get('default', 'val'))!.spec.lifecycle).to.equal('');
    });

    it('bumps generation only when the spec changes', async () => {
      const created = await agents.create(draft('gen'));
      expect(created.metadata.generation).to.equal(1);

      const labelled = await agents.update('default', 'gen', (x) => void (x.metadata.labels = { team: 'a' }));
      expect(labelled.metadata.generation).to.equal(1);
      expect(Number(labelled.metadata.resourceVersion)).to.be.greaterThan(Number(created.metadata.resourceVersion));

      const specced = await agents.update('default', 'gen', (x) => void (x.spec.connectors = ['github']));
      expect(specced.metadata.generation).to.equal(2);

      const again = await agents.update('default', 'gen', (x) => void (x.spec.model = 'claude-opus-4'));
      expect(again.metadata.generation).to.equal(3);

      const status = await agents.updateStatus('default', 'gen', (s) => void (s.status = 'Running'));
      expect(status.metadata.generation).to.equal(3);
    });

    it('is a no-op (no write, same resourceVersion) when nothing changes', async () => {
      const created = await agents.create(draft('noop'));
      let writes = 0;
      const stop = agents.watch(() => writes++);
      try {
        const same = await agents.update('default', 'noop', (x) => void (x.spec.model = 'claude-sonnet-4-5'));
        expect(same).to.deep.equal(created);
        expect(writes).to.equal(0);
      } finally {
        stop();
      }
    });

    it('fails with NotFound for a missing agent', async () => {
      const err = await rejection(
        agents.update('default', 'ghost', () => undefined),
        ApiError,
      );
      expect(err.reason).to.equal('NotFound');
      expect(err.code).to.equal(404);
    });

    it('applies 50 concurrent label increments', async () => {
      await agents.create(draft('counter'));
      await Promise.all(
        Array.from({ length: 50 }, () =>
          agents.update('default', 'counter', (x) => {
            const n = Number(x.metadata.labels?.count ?? '0');
            x.metadata.labels = { ...x.metadata.labels, count: String(n + 1) };
          }),
        ),
      );
      const a = (await agents.get('default', 'counter'))!;
      expect(a.metadata.labels?.count).to.equal('50');
      expect(a.metadata.generation).to.equal(1);
    });

    it('applies 50 concurrent connector additions', async () => {
      await agents.create(draft('hub'));
      const wanted = Array.from({ length: 50 }, (_, i) => `conn-${letters(i)}`);
      await Promise.all(
        wanted.map((c) =>
          agents.update('default', 'hub', (x) => {
            x.spec.connectors = [...x.spec.connectors, c];
          }),
        ),
      );
      const a = (await agents.get('default', 'hub'))!;
      expect([...a.spec.connectors].sort()).to.deep.equal([...wanted].sort());
      expect(a.metadata.generation).to.equal(51);
    });
  });

  describe('updateStatus', () => {
    it('changes the status and never the spec or metadata; `status` follows the WorkerReady condition', async () => {
      const created = await agents.create(draft('stat', { task: 1 }));
      const a = await agents.updateStatus('default', 'stat', (s, obj) => {
        s.conditions = setCondition([], { type: WORKER_READY, status: 'True', reason: 'Connected', message: 'up' });
        s.lastTaskMessage = 'working';
        obj.spec.task = 99;
        obj.spec.instructions = 'forged';
        obj.metadata.labels = { forged: 'yes' };
        obj.metadata.generation = 7;
      });
      expect(a.status.status).to.equal('Running');
      expect(a.status.lastTaskMessage).to.equal('working');
      expect(a.spec).to.deep.equal(created.spec);
      expect(a.metadata.labels).to.equal(undefined);
      expect(a.metadata.generation).to.equal(1);
      expect(a.metadata.uid).to.equal(created.metadata.uid);
    });

    it('applies concurrent status writes without losing any', async () => {
      await agents.create(draft('many', { task: 10 }));
      await Promise.all(Array.from({ length: 10 }, () => agents.updateStatus('default', 'many', (s) => void (s.observedTask = s.observedTask + 1))));
      expect((await agents.get('default', 'many'))!.status.observedTask).to.equal(10);
    });

    it('derives `status`: a write of it alone does not stick', async () => {
      await agents.create(draft('derived'));
      const a = await agents.updateStatus('default', 'derived', (s) => void (s.status = 'Running'));
      expect(a.status.status).to.equal('Pending');
    });

    it('shows a sleeping agent awake as soon as a task is assigned (Asleep stays until sleep-wake clears it)', async () => {
      await agents.create(draft('napper'));
      await settle('napper');
      const asleep = await agents.updateStatus('default', 'napper', (s) => {
        s.conditions = setCondition(s.conditions ?? [], { type: ASLEEP, status: 'True', reason: 'SleepRequested', message: 'asleep' });
      });
      expect(asleep.status.status).to.equal('Sleeping');
      const tasked = await agents.update('default', 'napper', (x) => void (x.spec.instructions = 'wake up'));
      expect(tasked.status).to.include({ status: 'Pending', taskStatus: 'InProgress' });
    });

    it('refuses status writes that break its rules: observedTask past spec.task or going back', async () => {
      await agents.create(draft('strict', { task: 2 }));
      await agents.updateStatus('default', 'strict', (s) => void (s.observedTask = 2));
      const past = await rejection(
        agents.updateStatus('default', 'strict', (s) => void (s.observedTask = 3)),
        ApiError,
      );
      expect(past.details.causes).to.deep.equal([{ field: 'status.observedTask', message: 'may not pass spec.task (2)' }]);
      const back = await rejection(
        agents.updateStatus('default', 'strict', (s) => void (s.observedTask = 1)),
        ApiError,
      );
      expect(back.details.causes).to.deep.equal([{ field: 'status.observedTask', message: 'may only increase' }]);
    });
  });

  describe('delete and finalize', () => {
    it('marks the agent with a deletionTimestamp; mustGet then reports NotFound; finalize removes it', async () => {
      await agents.create(draft('doomed'));
      const before = Date.now();
      const marked = await agents.delete('default', 'doomed');
      expect(marked.metadata.deletionTimestamp).to.be.a('string');
      expect(Date.parse(marked.metadata.deletionTimestamp!)).to.be.within(before - 1000, Date.now() + 1000);

      const stored = await agents.get('default', 'doomed');
      expect(stored, 'still stored until finalized').to.not.equal(undefined);
      expect(stored!.metadata.deletionTimestamp).to.equal(marked.metadata.deletionTimestamp);
      const nf = await rejection(agents.mustGet('default', 'doomed'), ApiError);
      expect(nf.reason).to.equal('NotFound');

      // Deleting again keeps the first timestamp.
      const again = await agents.delete('default', 'doomed');
      expect(again.metadata.deletionTimestamp).to.equal(marked.metadata.deletionTimestamp);

      await agents.removeFinalizer('default', 'doomed', FINALIZER_AGENT_CLEANUP);
      expect(await agents.get('default', 'doomed')).to.equal(undefined);
      expect((await agents.list()).items).to.deep.equal([]);
    });

    it('fails with NotFound when deleting a missing agent', async () => {
      const err = await rejection(agents.delete('default', 'ghost'), ApiError);
      expect(err.reason).to.equal('NotFound');
    });

    it('mustGet returns a live agent', async () => {
      const a = await agents.create(draft('live'));
      expect(await agents.mustGet('default', 'live')).to.deep.equal(a);
    });
  });

  describe('validateObjectName', () => {
    it('returns no causes for valid names and one per bad field', () => {
      expect(validateObjectName('good-name', 'ns-1')).to.deep.equal([]);
      expect(validateObjectName('Bad', 'Bad').map((c) => c.field)).to.deep.equal(['metadata.name', 'metadata.namespace']);
    });
  });
});
