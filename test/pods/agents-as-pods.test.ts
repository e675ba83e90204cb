// Agents and squads as real pods, end to end: agentplane registered on the local cluster (with a
// Ready node) in Kubernetes mode with the Kubernetes runtime, driven by kubectl and the /api/v1
// mirror, every task really run by the engine inside a worker container. Checks what docs/kubernetes-runtime.md
// ("Squads") says of pods and containers, row by row, against what the kubelet reports.

import { expect } from 'chai';
import WebSocket from 'ws';

import { busyFor, eventually } from '../support/harness.js';
import { type Agentplane, type Cluster, livePods, onNodeSuite, type PodJson, toolOutputs as podToolOutputs } from '../support/pods.js';

const NS = 'pods-e2e';
const KINDS = 'pods,persistentvolumeclaims,secrets,configmaps';

describe('e2e: agents and squads as pods on a real node', function () {
  this.timeout(180_000);
  let c: Cluster;
  let ap: Agentplane;
  const rest: Agentplane['rest'] = (method, path, body) => ap.rest(method, path, body);

  const kubectl = (...args: string[]) => c.kubectl(args).then((r) => r.stdout);
  const apply = (yaml: string) => c.kubectl(['apply', '-f', '-'], { input: yaml });
  const agentYaml = (name: string, instructions: string, extra = '') => `apiVersion: agentplane.io/v1alpha1
kind: Agent
metadata: {name: ${name}, namespace: ${NS}}
spec:
  instructions: ${JSON.stringify(instructions)}
${extra}`;
  const jsonpath = (ref: string, path: string) => kubectl('get', ref, '-n', NS, '-o', `jsonpath={${path}}`);
  const taskStatus = (name: string) => jsonpath(`agent/${name}`, '.status.taskStatus');
  const phase = (name: string) => jsonpath(`agent/${name}`, '.status.status');

  /** Events of the agent's stream over the WebSocket, from `since`, until `stop` says enough. */
  function streamUntil(name: string, stop: (types: string[]) => boolean, timeoutMs = 120_000): Promise<string[]> {
    return new Promise((resolve, reject) => {
      const types: string[] = [];
      const ws = new WebSocket(`${ap.url.replace('https', 'wss')}/api/v1/agents/${name}/ws?namespace=${NS}&since=0`, ap.tls);
      const timer = setTimeout(() => {
        ws.terminate();
        reject(new Error(`no end of stream for ${name} within ${timeoutMs} ms; saw ${types.join(', ')}`));
      }, timeoutMs);
      ws.on('message', (m) => {
        const ev = JSON.parse((m as Buffer).toString()) as { type: string };
        types.push(ev.type);
        if (stop(types)) {
          clearTimeout(timer);
          ws.close();
          resolve(types);
        }
      });
      ws.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });
  }

  const toolOutputs = (name: string) => podToolOutputs(c, NS, name);
  const agentPods = (name: string) => livePods(c, NS, `agentplane.io/agent=${name}`);
  const squadPods = (squad: string) => livePods(c, NS, `agentplane.io/squad=${squad},!agentplane.io/agent`);
  const runningContainers = (pod: PodJson) =>
    (pod.status.containerStatuses ?? [])
      .filter((s) => s.state && 'running' in s.state)
      .map((s) => s.name)
      .sort();
  const containerIds = (pod: PodJson) => Object.fromEntries((pod.status.containerStatuses ?? []).map((s) => [s.name, `${s.containerID}/${s.restartCount}`]));
  const labelled = async (name: string) =>
    (await kubectl('get', KINDS, '-n', NS, '-l', `agentplane.io/agent=${name}`, '-o', 'name')).split('\n').filter(Boolean);

  onNodeSuite(NS, (cluster, plane) => {
    c = cluster;
    ap = plane;
  });

  describe('a solo agent', () => {
    it('kubectl apply -> a Running pod, a Bound claim, its Secret and ConfigMap, all labelled; the task runs in the pod', async () => {
      await apply(agentYaml('solo', '@bash echo "ran in $(hostname) as $(id -u)" | tee proof.txt\n@say solo done'));
      const done = await streamUntil('solo', (t) => t.includes('task_completed') || t.includes('error'));
      expect(done, done.join(',')).to.include('task_completed');
      // The kubelet reports a started container to the API on its own schedule, which a quick
      // task can beat: the pod that ran it shows Running soon after, not necessarily already.
      const pod = await eventually(
        async () => {
          const [p] = await agentPods('solo');
          return p?.status.phase === 'Running' ? p : undefined;
        },
        30_000,
        'the agent pod Running',
      );
      expect(await jsonpath('pvc/agent-solo-workspace', '.status.phase')).to.equal('Bound');
      expect(await labelled('solo')).to.include.members([
        `pod/${pod.metadata.name}`,
        'persistentvolumeclaim/agent-solo-workspace',
        'secret/agent-solo-worker',
        'configmap/agent-solo-config',
      ]);
      // The task ran in the container: its hostname is the pod's and its user is not root.
      const message = await jsonpath('agent/solo', '.status.lastTaskMessage');
      expect(message).to.equal('solo done');
      expect(await toolOutputs('solo')).to.deep.equal([`ran in ${pod.metadata.name} as 10001`]);
    });

    it("a manager runs as its namespace's manager service account, limited to agentplane.io there", async () => {
      const [pod] = await agentPods('solo');
      const spec = (
        await c.json<{ spec: { serviceAccountName?: string; automountServiceAccountToken?: boolean } }>(['get', 'pod', pod.metadata.name, '-n', NS])
      ).spec;
      expect(spec).to.deep.include({ serviceAccountName: 'agentplane-manager', automountServiceAccountToken: true });
      const can = async (...args: string[]) =>
        (await c.kubectl(['auth', 'can-i', ...args, `--as=system:serviceaccount:${NS}:agentplane-manager`], { allowFail: true })).stdout.trim();
      expect(await can('create', 'agents.agentplane.io', '-n', NS)).to.equal('yes');
      expect(await can('create', 'agents.agentplane.io', '-n', 'default')).to.equal('no');
      expect(await can('get', 'secrets', '-n', NS)).to.equal('no');
      expect(await can('create', 'pods', '-n', NS)).to.equal('no');
    });

    it('a worker-role agent has no service-account token', async () => {
      await apply(agentYaml('plain', '@say plain', '  role: worker\n'));
      await eventually(async () => (await taskStatus('plain')) === 'Complete', 120_000, 'plain task');
      const [pod] = await agentPods('plain');
      const spec = (
        await c.json<{ spec: { serviceAccountName?: string; automountServiceAccountToken?: boolean } }>(['get', 'pod', pod.metadata.name, '-n', NS])
      ).spec;
      expect(spec.automountServiceAccountToken).to.equal(false);
      await kubectl('delete', 'agent', 'plain', '-n', NS);
    });

    it('cancel ends the running task; the pod stays alive, unrestarted, and takes the next task', async () => {
      // Not a bare `sleep`, which the engine refuses in a session that already ran a task.
      await apply(agentYaml('solo', `@bash ${busyFor(600)}\n@say never`));
      await eventually(async () => (await taskStatus('solo')) === 'InProgress', 60_000, 'long task running');
      const [before] = await agentPods('solo');
      const cancelled = streamUntil('solo', (t) => t.lastIndexOf('task_cancelled') > t.lastIndexOf('task_started'));
      const cancel = await rest('POST', `/api/v1/agents/solo/cancel?namespace=${NS}`);
      expect(cancel.status, JSON.stringify(cancel.body)).to.be.oneOf([200, 202]);
      await cancelled;
      await eventually(async () => (await taskStatus('solo')) === 'Cancelled', 60_000, 'task cancelled');
      const [after] = await agentPods('solo');
      expect(after.metadata.uid, 'the same pod').to.equal(before.metadata.uid);
      expect(containerIds(after), 'its container was not restarted').to.deep.equal(containerIds(before));
      await apply(agentYaml('solo', '@say after cancel'));
      await eventually(async () => (await jsonpath('agent/solo', '.status.lastTaskMessage')) === 'after cancel', 120_000, 'next task');
    });

    it('DELETE leaves nothing labelled with the agent, of any kind', async () => {
      await kubectl('delete', 'agent', 'solo', '-n', NS);
      // Every kind the namespace can hold, not only those the runtime is known to make.
      const kinds = (await kubectl('api-resources', '--namespaced=true', '--verbs=list', '-o', 'name'))
        .split('\n')
        .filter((k) => k && !k.endsWith('.agentplane.io') && !k.startsWith('events'));
      expect(kinds).to.include.members(['pods', 'persistentvolumeclaims', 'secrets', 'configmaps']);
      const left = async () => (await kubectl('get', kinds.join(','), '-n', NS, '-l', 'agentplane.io/agent=solo', '-o', 'name', '--ignore-not-found')).trim();
      await eventually(async () => (await left()) === '', 60_000, 'every labelled object gone');
      expect(await labelled('solo')).to.deep.equal([]);
    });
  });

  describe('a squad (docs/kubernetes-runtime.md "Squads")', () => {
    const squadBody = {
      name: 'crew',
      namespace: NS,
      members: ['ada', 'bob'].map((name) => ({ name, spec: { instructions: `@bash echo ${name} > mine.txt\n@say ${name} ready` } })),
    };

    it('runs in one pod labelled with the squad, a container per member, each with its own claim', async () => {
      const created = await rest('POST', '/api/v1/squads', squadBody);
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      await eventually(async () => (await taskStatus('ada')) === 'Complete' && (await taskStatus('bob')) === 'Complete', 120_000, 'both first tasks');
      // Both containers ran their tasks; the kubelet's report of them may come a moment later.
      await eventually(
        async () => {
          const [p] = await squadPods('crew');
          return p !== undefined && runningContainers(p).join() === 'ada,bob';
        },
        30_000,
        'the squad pod with both containers running',
      );
      for (const m of ['ada', 'bob']) expect(await jsonpath(`pvc/agent-${m}-workspace`, '.status.phase')).to.equal('Bound');
      expect(await agentPods('ada'), 'no solo pod for a member').to.deep.equal([]);
    });

    it('a member put to sleep keeps its container running idle in the squad pod', async () => {
      const before = containerIds((await squadPods('crew'))[0]);
      expect((await rest('PATCH', `/api/v1/agents/ada?namespace=${NS}`, { lifecycle: 'Sleep' })).status).to.equal(200);
      await eventually(async () => (await phase('ada')) === 'Sleeping', 60_000, 'ada asleep');
      const [pod] = await squadPods('crew');
      expect(runningContainers(pod)).to.deep.equal(['ada', 'bob']);
      expect(containerIds(pod), 'no container restarted').to.deep.equal(before);
    });

    it('every member asleep: the squad pod is removed and the claims are kept', async () => {
      expect((await rest('PATCH', `/api/v1/agents/bob?namespace=${NS}`, { lifecycle: 'Sleep' })).status).to.equal(200);
      await eventually(async () => (await squadPods('crew')).length === 0, 60_000, 'squad pod removed');
      for (const m of ['ada', 'bob']) expect(await jsonpath(`pvc/agent-${m}-workspace`, '.status.phase')).to.equal('Bound');
    });

    it('a woken member rebuilds the pod: it runs its task, the others start with AGENTPLANE_WAKE_IDLE=true', async () => {
      const sent = await rest('POST', '/api/v1/agents', { name: 'ada', namespace: NS, instructions: '@bash cat mine.txt\n@say ada woke' });
      expect(sent.status, JSON.stringify(sent.body)).to.equal(200);
      await eventually(async () => (await jsonpath('agent/ada', '.status.lastTaskMessage')) === 'ada woke', 120_000, 'ada ran after waking');
      const [pod] = await squadPods('crew');
      const env = (name: string) => Object.fromEntries((pod.spec.containers.find((x) => x.name === name)!.env ?? []).map((e) => [e.name, e.value]));
      expect(env('bob').AGENTPLANE_WAKE_IDLE).to.equal('true');
      expect(env('ada')).to.not.have.property('AGENTPLANE_WAKE_IDLE');
      expect(await phase('bob')).to.equal('Sleeping');
      // ada's workspace survived the pod: the task read the file its first task wrote.
      expect((await toolOutputs('ada')).at(-1), 'cat mine.txt printed what the first task wrote').to.equal('ada');
    });

    it('an agent added to the running squad runs without restarting any member, in its own workspace', async () => {
      await apply(agentYaml('cy', '@bash echo cy > mine.txt\n@say cy solo'));
      await eventually(async () => (await taskStatus('cy')) === 'Complete', 120_000, 'cy first task');
      expect((await rest('PATCH', `/api/v1/agents/cy?namespace=${NS}`, { lifecycle: 'Sleep' })).status).to.equal(200);
      await eventually(async () => (await phase('cy')) === 'Sleeping' && (await agentPods('cy')).length === 0, 60_000, 'cy asleep, pod gone');
      const [pod] = await squadPods('crew');
      const before = { uid: pod.metadata.uid, ids: containerIds(pod) };

      const added = await rest('POST', `/api/v1/squads/crew/members?namespace=${NS}`, { ref: { name: 'cy' } });
      expect(added.status, JSON.stringify(added.body)).to.be.oneOf([200, 201]);
      const sent = await rest('POST', '/api/v1/agents', { name: 'cy', namespace: NS, instructions: '@bash cat mine.txt && ls /squad\n@say cy joined' });
      expect(sent.status, JSON.stringify(sent.body)).to.equal(200);
      await eventually(async () => (await jsonpath('agent/cy', '.status.lastTaskMessage')) === 'cy joined', 120_000, 'cy ran in the squad');

      const [after] = await squadPods('crew');
      expect(after.metadata.uid, 'the squad pod was not replaced').to.equal(before.uid);
      expect(containerIds(after), 'no member container restarted').to.deep.equal(before.ids);
      const [own] = await agentPods('cy');
      expect(own.metadata.labels).to.include({ 'agentplane.io/squad': 'crew', 'agentplane.io/agent': 'cy' });
      expect((await toolOutputs('cy')).at(-1), 'its own workspace (cy) and every member under /squad').to.equal('cy\nada\nbob\ncy');
    });

    it('membership down to one: the squad pod is deleted and the last agent runs in a pod of its own', async () => {
      for (const m of ['cy', 'bob']) {
        const res = await rest('DELETE', `/api/v1/squads/crew/members/${m}?namespace=${NS}`);
        expect(res.status, JSON.stringify(res.body)).to.be.oneOf([200, 204]);
      }
      await eventually(async () => (await squadPods('crew')).length === 0, 90_000, 'squad pod deleted');
      // A member that left stays an agent with its workspace (bob is asleep, so it has no pod).
      expect(await jsonpath('pvc/agent-bob-workspace', '.status.phase')).to.equal('Bound');
      expect(await phase('bob')).to.equal('Sleeping');
      await eventually(
        async () => (await agentPods('ada')).some((p) => p.status.phase === 'Running' && !p.metadata.labels?.['agentplane.io/squad']),
        90_000,
        'ada in a solo pod',
      );
      const sent = await rest('POST', '/api/v1/agents', { name: 'ada', namespace: NS, instructions: '@bash cat mine.txt\n@say ada solo again' });
      expect(sent.status).to.equal(200);
      await eventually(async () => (await jsonpath('agent/ada', '.status.lastTaskMessage')) === 'ada solo again', 120_000, 'ada runs solo');
    });
  });
  describe('a namespace deleted with its agents inside', () => {
    it('kube-controller-manager deletes the namespace; its agents, squad, pods, claims, Secrets and ConfigMaps go with it', async () => {
      const ns = 'doomed-team';
      await kubectl('create', 'namespace', ns);
      await c.kubectl(['apply', '-f', '-'], {
        input: ['ann', 'bea'].map((n) => agentYaml(n, `@say ${n} here`).replace(`namespace: ${NS}`, `namespace: ${ns}`)).join('---\n'),
      });
      const created = await rest('POST', '/api/v1/squads', {
        name: 'pair',
        namespace: ns,
        members: [
          { name: 'cid', spec: { instructions: '@say cid here' } },
          { name: 'dee', spec: { instructions: '@say dee here' } },
        ],
      });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      const running = async () => (await livePods(c, ns, 'app.kubernetes.io/managed-by=agentplane')).filter((p) => p.status.phase === 'Running').length;
      await eventually(async () => (await running()) === 3, 120_000, 'two solo pods and the squad pod running');

      await kubectl('delete', 'namespace', ns, '--wait=false');
      const left = async () => {
        const res = await c.kubectl(
          ['get', 'agents.agentplane.io,squads.agentplane.io,pods,pvc,secrets,configmaps', '-n', ns, '-o', 'name', '--ignore-not-found'],
          { allowFail: true },
        );
        return res.stdout.split('\n').filter((l) => l && !l.endsWith('/kube-root-ca.crt'));
      };
      await eventually(async () => (await c.kubectl(['get', 'namespace', ns], { allowFail: true })).code !== 0, 90_000, 'the namespace gone');
      expect(await left()).to.deep.equal([]);
      // Nothing of the namespace's agents is left in any namespace either (pods are namespaced,
      // volumes are not): every claim's volume was released and deleted.
      const volumesOf = async () =>
        (await c.json<{ items: { spec: { claimRef?: { namespace?: string } } }[] }>(['get', 'pv'])).items.filter((v) => v.spec.claimRef?.namespace === ns);
      await eventually(async () => (await volumesOf()).length === 0, 60_000, "the claims' volumes deleted");
    });
  });
});
