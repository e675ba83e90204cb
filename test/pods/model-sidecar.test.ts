// The model key in pods (docs/kubernetes-runtime.md "Model proxy sidecar"): agentplane with
// `--model-proxy sidecar` on a real node, the key in the install namespace's Secret, mirrored into
// the agents' namespace by credential-mirror, and the scripted model on the host as the model
// API. The attacker suite of the embedded home (test/integration/model-proxy.test.ts,
// sandbox.test.ts), where it applies to pods: a task looks for the key and for tokens everywhere
// its tools can reach and finds neither; the rightful path works, with usage counted; a rotated
// key reaches the sidecar; a rejected key ends the task readably within 30 s.

import { request } from 'node:https';

import { expect } from 'chai';

import { CREDENTIAL_PREFIX } from '../../pkg/modelproxy/index.js';
import { MODEL_PROXY_CONTAINER } from '../../pkg/api/agent.js';
import { MODEL_KEY_PATH, MODEL_PROXY_PORT } from '../../pkg/runtime/kubernetes/objects.js';
import { type ScriptedModel, startScriptedModel } from '../../pkg/scriptedmodel/index.js';
import { eventually } from '../support/harness.js';
import {
  agentEvents,
  type Agentplane,
  type Cluster,
  clusterUp,
  describeFailure,
  livePods,
  registerAgentplane,
  type StoredEvent,
  toolOutputs,
} from '../support/pods.js';

const NS = 'sidecar-e2e';
const INSTALL_NS = 'agentplane-system';
const SECRET = 'agentplane-model';
// Recognisable, so tools can grep for the prefix without ever being told the key.
const KEY = `sk-ant-sidecar-${Math.random().toString(36).slice(2, 14)}`;
const REVOKED = 'sk-ant-sidecar-revoked-0000';
const MARKER = 'rightful-workspace-marker-3b9e1d';
const TERMINAL = ['task_completed', 'task_cancelled', 'error'];

interface PodSpecJson {
  shareProcessNamespace?: boolean;
  initContainers?: Container[];
  containers: Container[];
  volumes: { name: string; secret?: { secretName: string } }[];
}
interface Container {
  name: string;
  restartPolicy?: string;
  args?: string[];
  env?: { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string } } }[];
  envFrom?: { secretRef?: { name: string }; configMapRef?: { name: string } }[];
  volumeMounts?: { name: string; mountPath: string }[];
}

describe('e2e: the model-proxy sidecar in agent and squad pods', function () {
  this.timeout(180_000);
  let c: Cluster;
  let ap: Agentplane;
  let model: ScriptedModel;
  const serverMetrics = (): Promise<string> =>
    new Promise((resolve, reject) => {
      request(`${ap.url}/metrics`, ap.tls, (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => resolve(text));
      })
        .on('error', reject)
        .end();
    });

  const kubectl = (...args: string[]) => c.kubectl(args).then((r) => r.stdout);
  const apply = (yaml: string) => c.kubectl(['apply', '-f', '-'], { input: yaml });
  const jsonpath = (ref: string, path: string, ns = NS) => kubectl('get', ref, '-n', ns, '-o', `jsonpath={${path}}`);
  const taskStatus = (name: string) => jsonpath(`agent/${name}`, '.status.taskStatus');
  const secretValue = async (name: string, key: string, ns = NS) =>
    Buffer.from(await jsonpath(`secret/${name}`, `.data.${key.replace(/\./g, '\\.')}`, ns), 'base64').toString();
  const podSpec = async (selector: string) => {
    const [pod] = await livePods(c, NS, selector);
    expect(pod, `a pod for ${selector}`).to.not.equal(undefined);
    return (await c.json<{ spec: PodSpecJson }>(['get', 'pod', pod.metadata.name, '-n', NS])).spec;
  };
  const setKey = (value: string) =>
    kubectl('patch', 'secret', SECRET, '-n', INSTALL_NS, '--type', 'merge', '-p', JSON.stringify({ stringData: { ANTHROPIC_API_KEY: value } }));

  /** Sends a task to an existing agent and waits for its end: the terminal event and how long it took. */
  async function runTask(name: string, instructions: string): Promise<{ end: StoredEvent; ms: number }> {
    const before = (await agentEvents(c, NS, name)).at(-1)?.seq ?? 0;
    const t0 = Date.now();
    const sent = await ap.rest('POST', '/api/v1/agents', { name, namespace: NS, instructions });
    expect(sent.status, JSON.stringify(sent.body)).to.equal(200);
    let end: StoredEvent | undefined;
    await eventually(
      async () => {
        end = (await agentEvents(c, NS, name)).find((e) => e.seq > before && TERMINAL.includes(e.type));
        return end !== undefined;
      },
      120_000,
      `${name}: the task's end`,
    );
    return { end: end!, ms: Date.now() - t0 };
  }

  before(async function () {
    this.timeout(45 * 60_000);
    c = await clusterUp();
    // The model API as pods reach it: on the host, at the pods' gateway.
    model = await startScriptedModel({ host: c.gateway, apiKey: KEY });
    ap = await registerAgentplane(c, { AGENTPLANE_MODEL_PROXY: 'sidecar' });
    await kubectl(
      'create',
      'secret',
      'generic',
      SECRET,
      '-n',
      INSTALL_NS,
      `--from-literal=ANTHROPIC_API_KEY=${KEY}`,
      `--from-literal=ANTHROPIC_BASE_URL=${model.url}`,
    );
    await kubectl('create', 'namespace', NS);
  });

  afterEach(async function () {
    if (this.currentTest?.state === 'failed' && c) console.log(await describeFailure(c, NS));
  });

  after(async function () {
    this.timeout(180_000);
    let t = Date.now();
    await model?.close();
    const closed = Date.now() - t;
    t = Date.now();
    await c?.down();
    console.log(`      (after: model closed in ${closed} ms, plane down in ${Date.now() - t} ms)`);
  });

  describe('a solo agent', () => {
    it('the rightful path: its task reaches the model through the sidecar, with the key, and its usage is counted', async () => {
      await apply(`apiVersion: agentplane.io/v1alpha1
kind: Agent
metadata: {name: rightful, namespace: ${NS}}
spec:
  role: worker
  instructions: ${JSON.stringify(`@bash echo ${MARKER} > marker.txt && echo written\n@say rightful done`)}
`);
      await eventually(async () => ['Complete', 'Failed'].includes(await taskStatus('rightful')), 150_000, 'rightful task');
      const evs = await agentEvents(c, NS, 'rightful');
      const end = evs.filter((e) => TERMINAL.includes(e.type)).at(-1)!;
      expect(end.type, JSON.stringify(end.payload)).to.equal('task_completed');
      // The sidecar reported the usage before the engine could end the task.
      const usage = end.payload.usage as { input_tokens: number; output_tokens: number } | undefined;
      expect(usage, JSON.stringify(end.payload)).to.not.equal(undefined);
      expect(usage!.output_tokens).to.be.greaterThan(0);
      const reqs = model.requests.filter((r) => r.lastUserText.includes(MARKER));
      expect(reqs.length, 'the model saw the task').to.be.greaterThan(0);
      expect(
        reqs.every((r) => r.apiKey === KEY),
        'every request carried the mirrored key',
      ).to.equal(true);
      // The server never saw the request, only the sidecar's reports, and still timed it.
      expect(await serverMetrics()).to.match(/^agentplane_task_first_model_request_seconds_count [1-9]/m);
    });

    it('a budget through the sidecar (docs/budgets.md): Pause holds the task before its next model request until raised', async () => {
      const spend = JSON.parse((await jsonpath('agent/rightful', '.status.spend')) || '{}') as { tokens?: number };
      expect(spend.tokens, 'the first task’s spend in the status').to.be.greaterThan(0);
      const maxTokens = Math.ceil(spend.tokens! / 0.85);
      await kubectl('patch', 'agent', 'rightful', '-n', NS, '--type', 'merge', '-p', JSON.stringify({ spec: { budget: { maxTokens, onExceed: 'Pause' } } }));
      const sent = await ap.rest('POST', '/api/v1/agents', {
        name: 'rightful',
        namespace: NS,
        instructions: '@bash echo held-step-one\n@bash echo held-step-two\n@say held done',
      });
      expect(sent.status, JSON.stringify(sent.body)).to.equal(200);
      await eventually(async () => (await jsonpath('agent/rightful', '.status.status')) === 'Paused', 120_000, 'rightful paused');
      expect((await agentEvents(c, NS, 'rightful')).some((e) => e.type === 'budget_exceeded')).to.equal(true);
      await new Promise((r) => setTimeout(r, 1500));
      expect(
        model.requests.some((r) => (r.lastToolResult ?? '').includes('held-step-one')),
        'the held request reached the model',
      ).to.equal(false);
      await kubectl('patch', 'agent', 'rightful', '-n', NS, '--type', 'merge', '-p', JSON.stringify({ spec: { budget: { maxTokens: maxTokens * 100 } } }));
      await eventually(async () => (await taskStatus('rightful')) === 'Complete', 120_000, 'rightful complete after the raise');
      expect(model.requests.some((r) => (r.lastToolResult ?? '').includes('held-step-two'))).to.equal(true);
      expect(await jsonpath('agent/rightful', '.status.status')).to.equal('Running');
      await kubectl('patch', 'agent', 'rightful', '-n', NS, '--type', 'json', '-p', '[{"op":"remove","path":"/spec/budget"}]');
    });

    it('the mirrored Secret is mounted only into the sidecar, a native sidecar; the engine gets loopback and its credential', async () => {
      const spec = await podSpec('agentplane.io/agent=rightful');
      expect(spec.shareProcessNamespace ?? false, 'no shared process namespace').to.equal(false);
      const keyVolumes = spec.volumes.filter((v) => v.secret?.secretName === SECRET).map((v) => v.name);
      expect(keyVolumes).to.have.length(1);
      expect(spec.initContainers?.map((x) => [x.name, x.restartPolicy, x.args])).to.deep.equal([[MODEL_PROXY_CONTAINER, 'Always', ['model-proxy']]]);
      const sidecar = spec.initContainers![0];
      expect(sidecar.volumeMounts?.map((m) => m.name)).to.include(keyVolumes[0]);
      for (const w of spec.containers) {
        expect(w.volumeMounts?.map((m) => m.name) ?? [], `${w.name}'s mounts`).to.not.include(keyVolumes[0]);
        const refs = [...(w.env ?? []).map((e) => e.valueFrom?.secretKeyRef?.name), ...(w.envFrom ?? []).map((e) => e.secretRef?.name)];
        expect(refs, `${w.name}'s environment`).to.not.include(SECRET);
      }
      expect(await jsonpath('configmap/agent-rightful-config', '.data.ANTHROPIC_BASE_URL')).to.equal(`http://127.0.0.1:${MODEL_PROXY_PORT}`);
    });

    it("the sidecar's resident memory (printed; docs/kubernetes-runtime.md)", async () => {
      const [pod] = await livePods(c, NS, 'agentplane.io/agent=rightful');
      const ps = await kubectl('exec', pod.metadata.name, '-n', NS, '-c', MODEL_PROXY_CONTAINER, '--', 'ps', '-eo', 'rss=,args=');
      const rows = ps
        .split('\n')
        .filter(Boolean)
        .map((l) => l.trim().split(/\s+/));
      const rss = (argv0: string) => Number(rows.find((r) => r[1].endsWith(argv0))?.[0] ?? NaN);
      const node = rss('node');
      const tini = rss('tini');
      console.log(`      model-proxy sidecar RSS: node ${(node / 1024).toFixed(1)} MiB + tini ${(tini / 1024).toFixed(1)} MiB, idle after one task`);
      expect(node, ps).to.be.greaterThan(tini);
    });
  });

  describe('an attacker in a squad pod', () => {
    let out: string[];
    const secrets: Record<string, string> = {};

    before(async function () {
      this.timeout(300_000);
      const probe = (cmd: string) => `@bash ${cmd} 2>&1; echo "exit=$?"`;
      const prober = [
        // Every environment and command line it can see: the key's prefix, the credentials.
        // The patterns go through a file, so that no command line or transcript holds them.
        probe(`printf '%s-%s-\\n' sk ant > /tmp/pat; grep -alrs -f /tmp/pat /proc/[0-9]*/environ /proc/[0-9]*/cmdline; echo searched`),
        probe(`cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline | tr '\\0' '\\n' | sort -u`),
        probe('ps -eww -o pid,user,args'),
        // The filesystem, mounts included (secret volumes are tmpfs), and the usual places.
        // (/usr and node_modules left out: the engine's own code names the key prefix.)
        probe(
          `printf '%s%s\\n' ${MARKER.slice(0, 19)} ${MARKER.slice(19)} >> /tmp/pat; grep -rIls -f /tmp/pat --exclude=pat --exclude-dir=proc --exclude-dir=sys --exclude-dir=usr --exclude-dir=node_modules / ; echo scanned`,
        ),
        probe(`ls -laR /var/run/secrets ${MODEL_KEY_PATH} /var/run/agentplane`),
        probe(`grep -c ' /var/run/agentplane' /proc/self/mountinfo`),
        // The model through the sidecar without a credential, and with its own.
        probe(
          `curl -s http://127.0.0.1:${MODEL_PROXY_PORT}/v1/models || (exec 3<>/dev/tcp/127.0.0.1/${MODEL_PROXY_PORT} && printf 'GET /v1/models HTTP/1.0\\r\\n\\r\\n' >&3 && head -c 300 <&3)`,
        ),
        probe('ls /squad; cat /squad/*/*.txt'),
        '@say probed',
      ].join('\n');
      const created = await ap.rest('POST', '/api/v1/squads', {
        name: 'crew',
        namespace: NS,
        members: [
          { name: 'prober', spec: { role: 'worker', instructions: prober } },
          { name: 'sib', spec: { role: 'worker', instructions: '@bash echo sib > sib.txt\n@say sib ready' } },
        ],
      });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      await eventually(
        async () => ['Complete', 'Failed'].includes(await taskStatus('prober')) && ['Complete', 'Failed'].includes(await taskStatus('sib')),
        240_000,
        'both members',
      );
      out = await toolOutputs(c, NS, 'prober');
      for (const a of ['prober', 'sib', 'rightful']) {
        secrets[`${a} token`] = await secretValue(`agent-${a}-worker`, 'token');
        secrets[`${a} credential`] = await secretValue(`agent-${a}-worker`, 'model-credential');
        secrets[`${a} report credential`] = await secretValue(`agent-${a}-worker`, 'report-credential');
      }
      expect(out, JSON.stringify(out)).to.have.length(8);
    });

    it('both members ran, each with its own credential through the one sidecar of their pod', async () => {
      expect(await taskStatus('prober')).to.equal('Complete');
      expect(await taskStatus('sib')).to.equal('Complete');
      const spec = await podSpec('agentplane.io/squad=crew,!agentplane.io/agent');
      expect(spec.initContainers?.map((x) => x.name)).to.deep.equal([MODEL_PROXY_CONTAINER]);
      expect(spec.initContainers![0].volumeMounts!.map((m) => m.mountPath)).to.include.members([
        '/var/run/agentplane/agents/prober',
        '/var/run/agentplane/agents/sib',
      ]);
    });

    it('finds the model key in no environment, command line or file, and `ps -eww` shows it nowhere', () => {
      expect(out[0]).to.match(/searched\nexit=0$/);
      expect(out[0].replace(/searched\nexit=0$/, '').trim(), 'files with the key prefix').to.equal('');
      expect(out[3]).to.match(/scanned\nexit=0$/);
      expect(out[3].replace(/scanned\nexit=0$/, '').trim(), 'files with the key or a sibling workspace marker').to.equal('');
      for (const o of out) expect(o).not.to.contain(KEY);
      expect(out[2]).to.contain('PID');
    });

    it('finds no other agent’s token or credential: not its squad sibling’s, not another pod’s', () => {
      for (const [what, value] of Object.entries(secrets)) {
        if (what.startsWith('prober')) continue;
        for (const o of out) expect(o, what).not.to.contain(value);
      }
    });

    it('finds not even its own report credential: only the sidecar holds what posts usage to the server', () => {
      const own = secrets['prober report credential'];
      expect(own).to.match(/^apmr_/);
      for (const o of out) expect(o).not.to.contain(own);
    });

    // Its own worker's control token is in its container's environment (/proc/1/environ): the
    // open item of docs/security.md's pods row, not asserted either way here.
    it('sees no model credential but its own (as in the embedded home)', () => {
      const creds = [...out[1].matchAll(new RegExp(`${CREDENTIAL_PREFIX}[A-Za-z0-9_-]+`, 'g'))].map((m) => m[0]);
      expect([...new Set(creds)]).to.deep.equal([secrets['prober credential']]);
    });

    it('has neither the mirrored Secret nor a service-account token mounted; the sidecar refuses a caller without a credential', () => {
      expect(out[4]).to.contain('No such file');
      expect(out[4]).not.to.match(/ANTHROPIC_API_KEY|serviceaccount/);
      expect(out[5].split('\n')[0]).to.equal('0');
      expect(out[6]).to.contain('authentication_error');
    });
  });

  describe('the key in the install namespace changes', () => {
    it('a rotated key reaches the sidecar; a key the model rejects ends the task within 30 s with the readable error', async () => {
      await setKey(REVOKED);
      let last: { end: StoredEvent; ms: number } | undefined;
      // The kubelet refreshes Secret volumes on its own schedule (about a minute).
      await eventually(
        async () => {
          last = await runTask('rightful', '@say still the old key?');
          return last.end.type === 'error';
        },
        240_000,
        'a task failing with the rotated key',
      );
      expect(last!.end.payload).to.deep.include({ reason: 'ModelCredentialRejected' });
      expect(String(last!.end.payload.message)).to.contain('the model credential was rejected');
      expect(last!.ms).to.be.below(30_000);
      expect(model.requests.at(-1)!.apiKey).to.equal(REVOKED);
      for (const e of await agentEvents(c, NS, 'rightful')) expect(JSON.stringify(e.payload)).not.to.contain(KEY);
    });

    it('the key rotated back: the next tasks complete again, without a new pod', async () => {
      const [before] = await livePods(c, NS, 'agentplane.io/agent=rightful');
      await setKey(KEY);
      await eventually(
        async () => (await runTask('rightful', '@say back in business')).end.type === 'task_completed',
        240_000,
        'a task completing with the good key',
      );
      const [after] = await livePods(c, NS, 'agentplane.io/agent=rightful');
      expect(after?.metadata.uid, 'the same pod').to.equal(before?.metadata.uid);
    });
  });
});
