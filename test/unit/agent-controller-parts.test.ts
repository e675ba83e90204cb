// Parts of the agent controller on their own (pkg/controller/agent-controller.ts lists them),
// with plain stubs for their dependencies: no storage, no runtime, no informers.

import { expect } from 'chai';

import { type Agent, agentFromRequest, WORKER_READY, WORKER_RELEASED } from '../../pkg/api/agent.js';
import { requestCancel } from '../../pkg/api/agent-annotations.js';
import { setCondition } from '../../pkg/api/condition.js';
import type { EventDraft } from '../../pkg/api/event.js';
import type { Squad } from '../../pkg/api/squad.js';
import { CancelHandoff } from '../../pkg/controller/cancel-handoff.js';
import { mustStop, placementFor } from '../../pkg/controller/placement.js';
import { setWorkerReady } from '../../pkg/controller/worker-ready.js';
import type { Informer } from '../../pkg/registry/cache/informer.js';
import type { Registry } from '../../pkg/registry/registry.js';
import type { AgentRuntime, WorkerStatus } from '../../pkg/runtime/runtime.js';

function agent(mutate: (a: Agent) => void = () => {}): Agent {
  const a = agentFromRequest({ name: 'alpha', instructions: 'work' }, 'default');
  a.metadata.uid = 'u1';
  a.status.observedTask = 1;
  a.status.taskStatus = 'Complete';
  mutate(a);
  return a;
}

/** A registry that applies status writes to `a` and counts them. */
function registryOf(a: Agent): { registry: Registry<Agent>; writes: () => number } {
  let writes = 0;
  const registry = {
    updateStatus: async (_ns: string, _name: string, fn: (s: Agent['status'], a: Agent) => void) => {
      writes++;
      fn(a.status, a);
      return a;
    },
  } as unknown as Registry<Agent>;
  return { registry, writes: () => writes };
}

describe('agent controller parts', () => {
  describe('placementFor (solo agents)', () => {
    const informers = {
      agents: { get: () => undefined } as unknown as Informer<Agent>,
      squads: { byIndex: () => [] } as unknown as Informer<Squad>,
    };

    it('wants a worker for an awake agent, none for a sleeping or failed one', () => {
      expect(placementFor(informers, agent())).to.deep.equal({ wanted: true });
      expect(
        placementFor(
          informers,
          agent((a) => (a.status.status = 'Sleeping')),
        ),
      ).to.deep.equal({ wanted: false });
      expect(
        placementFor(
          informers,
          agent((a) => (a.status.status = 'Failed')),
        ),
      ).to.deep.equal({ wanted: false });
    });

    it('wants none for an idle released agent until a task comes', () => {
      const released = (a: Agent): void => {
        a.status.conditions = setCondition([], { type: WORKER_READY, status: 'False', reason: WORKER_RELEASED, message: 'released' });
      };
      expect(placementFor(informers, agent(released))).to.deep.equal({ wanted: false, released: true });
      expect(
        placementFor(
          informers,
          agent((a) => (released(a), (a.spec.task = 2))),
        ),
      ).to.deep.equal({ wanted: true });
    });

    it('mustStop: a worker runs where it should not', () => {
      const solo: WorkerStatus = { phase: 'Ready', group: null };
      expect(mustStop({ wanted: true }, solo)).to.equal(false);
      expect(mustStop({ wanted: false }, solo)).to.equal(true);
      expect(mustStop({ wanted: true, group: 'g' }, solo)).to.equal(true);
      expect(mustStop({ wanted: false }, { phase: 'Absent', group: null })).to.equal(false);
    });
  });

  describe('CancelHandoff', () => {
    function handoff(a: Agent, accepts: boolean) {
      const { registry } = registryOf(a);
      const cancels: number[] = [];
      const emitted: EventDraft[] = [];
      const runtime = {
        cancel: async (_ref: unknown, task: number) => {
          cancels.push(task);
          return accepts;
        },
      } as unknown as AgentRuntime;
      const h = new CancelHandoff({ agents: registry, runtime, emit: async (_a, d) => (emitted.push(d), undefined) });
      return { h, cancels, emitted };
    }
    const busy = (a: Agent): void => {
      a.spec.task = 2;
      requestCancel(a, 'stop it');
    };

    it('settles a task no worker has: observed, and task_cancelled appended', async () => {
      const a = agent(busy);
      const { h, cancels, emitted } = handoff(a, true);
      expect(await h.settle(a, { phase: 'Ready', group: null })).to.equal('settled');
      expect(a.status.observedTask).to.equal(2);
      expect(emitted.map((d) => d.type)).to.deep.equal(['task_cancelled']);
      expect(cancels).to.deep.equal([]);
    });

    it("hands a running task's cancel to its worker once, again after forget", async () => {
      const a = agent((x) => (busy(x), (x.status.observedTask = 2), (x.status.taskStatus = 'InProgress')));
      const { h, cancels } = handoff(a, true);
      const worker: WorkerStatus = { phase: 'Ready', group: null, runningTask: 2 };
      expect(await h.settle(a, worker)).to.equal('sent');
      expect(await h.settle(a, worker)).to.equal('sent');
      expect(cancels).to.deep.equal([2]);
      h.forget(a.metadata);
      expect(await h.settle(a, worker)).to.equal('sent');
      expect(cancels).to.deep.equal([2, 2]);
    });

    it('is pending while the worker cannot take it, and does nothing without a request', async () => {
      const a = agent((x) => (busy(x), (x.status.observedTask = 2), (x.status.taskStatus = 'InProgress')));
      const { h } = handoff(a, false);
      expect(await h.settle(a, { phase: 'Ready', group: null, runningTask: 2 })).to.equal('pending');
      expect(await h.settle(agent(), { phase: 'Ready', group: null })).to.equal(undefined);
    });
  });

  describe('setWorkerReady', () => {
    it('writes only when the condition differs', async () => {
      const a = agent();
      const { registry, writes } = registryOf(a);
      await setWorkerReady(registry, a, 'False', 'Starting', 'the worker is starting');
      await setWorkerReady(registry, a, 'False', 'Starting', 'the worker is starting');
      expect(writes()).to.equal(1);
      await setWorkerReady(registry, a, 'True', 'Connected', 'the worker is connected');
      expect(writes()).to.equal(2);
    });
  });
});
