// kubectl-native: agentplane registered as an aggregated API on a real kube-apiserver, driven by
// the real kubectl. The control plane and agentplane are started by hack/control-plane.sh (up,
// register), exactly as a developer would; only the model's words are scripted (--demo).

import { execFile, spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { type ControlPlane, controlPlaneUp, REPO } from '../support/control-plane.js';
import { eventually } from '../support/harness.js';

const run = promisify(execFile);

const agentYaml = (name: string, instructions: string, ns = 'default'): string => `apiVersion: agentplane.io/v1alpha1
kind: Agent
metadata:
  name: ${name}
  namespace: ${ns}
  labels: {team: e2e}
spec:
  instructions: ${JSON.stringify(instructions)}
  role: worker
`;

describe('kubectl against the aggregated API (e2e)', function () {
  this.timeout(120_000);
  let cp: ControlPlane;
  let agentplaneUrl: string;

  const kubectl = (...args: string[]) => cp.kubectl(args).then((r) => r.stdout);
  const apply = (yaml: string) => cp.kubectl(['apply', '-f', '-'], { input: yaml }).then((r) => r.stdout);
  const jsonpath = (ref: string, path: string, ns = 'default') => kubectl('get', ref, '-n', ns, '-o', `jsonpath={${path}}`);

  before(async function () {
    this.timeout(45 * 60_000); // a cold machine builds kube-apiserver first
    cp = await controlPlaneUp();
    const env = { ...process.env, AGENTPLANE_CP_DIR: cp.dir };
    const reg = await run('bash', [join(REPO, 'hack/control-plane.sh'), 'register'], { env, timeout: 5 * 60_000 });
    agentplaneUrl = reg.stdout.trim().split('\n').at(-1)!;
    await kubectl('create', 'namespace', 'team-a');
    await kubectl('create', 'namespace', 'team-b');
  });

  after(async () => {
    await cp?.down();
  });

  it('registers an Available APIService and lists the resources in api-resources', async () => {
    const cond = await jsonpath('apiservice/v1alpha1.agentplane.io', '.status.conditions[?(@.type=="Available")].status', '');
    expect(cond).to.equal('True');
    const out = await kubectl('api-resources', '--api-group=agentplane.io');
    for (const r of ['agents', 'squads', 'connectors', 'agentcheckpoints', 'budgets', 'schedules', 'skills', 'memories'])
      expect(out).to.match(new RegExp(`^${r}\\s`, 'm'));
    expect(out).to.contain('agentplane.io/v1alpha1');
  });

  it('explains agent.spec from the served OpenAPI', async () => {
    const out = await kubectl('explain', 'agent.spec');
    expect(out).to.contain('KIND:');
    expect(out).to.contain('Agent');
    for (const f of ['instructions', 'systemPrompt', 'model', 'role', 'connectors']) expect(out).to.contain(f);
  });

  it('explains agent.spec.budget and budget.spec; a Budget applied shows in get with its table, spend computed', async () => {
    const budget = await kubectl('explain', 'agent.spec.budget');
    for (const f of ['maxTokens', 'maxCostUsd', 'perTask', 'onExceed']) expect(budget).to.contain(f);
    const spec = await kubectl('explain', 'budget.spec');
    expect(spec).to.contain('Budget');
    for (const f of ['period', 'maxTokens', 'maxCostUsd', 'onExceed']) expect(spec).to.contain(f);
    const created = await apply(`apiVersion: agentplane.io/v1alpha1
kind: Budget
metadata: {name: monthly, namespace: team-a}
spec: {period: month, maxCostUsd: 40, onExceed: Pause}
`);
    expect(created).to.contain('budget.agentplane.io/monthly created');
    const table = await kubectl('get', 'budgets', '-n', 'team-a');
    expect(table).to.match(/^NAME\s+PERIOD\s+LIMIT\s+USED\s+ONEXCEED\s+AGE/m);
    expect(table).to.match(/^monthly\s+month\s+\$40\s+0%\s+Pause/m);
    expect(await jsonpath('budget/monthly', '.status.periodStart', 'team-a')).to.equal(new Date().toISOString().slice(0, 7));
    const bad = await cp.kubectl(['apply', '-f', '-'], {
      input: 'apiVersion: agentplane.io/v1alpha1\nkind: Budget\nmetadata: {name: nolimit, namespace: team-a}\nspec: {period: day, onExceed: Stop}\n',
      allowFail: true,
    });
    expect(bad.code).to.not.equal(0);
    expect(bad.stderr).to.contain('must set maxTokens or maxCostUsd');
    expect(await kubectl('delete', 'budget', 'monthly', '-n', 'team-a')).to.contain('deleted');
  });

  it('explains skill.spec and memory.spec; Skills and Memories applied show in get skills,memories with their tables', async () => {
    expect(await kubectl('explain', 'skill.spec'))
      .to.match(/KIND:\s+Skill/)
      .and.contain('files');
    expect(await kubectl('explain', 'memory.spec'))
      .to.match(/KIND:\s+Memory/)
      .and.contain('text');
    expect(await kubectl('explain', 'agent.spec'))
      .to.contain('skills')
      .and.contain('memories');
    const created = await apply(`apiVersion: agentplane.io/v1alpha1
kind: Skill
metadata: {name: review, namespace: team-a}
spec:
  files:
    SKILL.md: "---\\nname: review\\ndescription: Use when reviewing diffs\\n---\\nRead the diff.\\n"
    checklist.md: "- tests"
---
apiVersion: agentplane.io/v1alpha1
kind: Memory
metadata: {name: team-notes, namespace: team-a}
spec: {text: "the build needs make twice", description: what the team learned}
`);
    expect(created).to.contain('skill.agentplane.io/review created').and.contain('memory.agentplane.io/team-notes created');
    const table = await kubectl('get', 'skills,memories', '-n', 'team-a');
    expect(table).to.match(/^NAME\s+DESCRIPTION\s+FILES\s+AGE/m);
    expect(table).to.match(/^skill\.agentplane\.io\/review\s+Use when reviewing diffs\s+2\s/m);
    expect(table).to.match(/^NAME\s+DESCRIPTION\s+BYTES\s+LASTWRITER\s+AGE/m);
    expect(table, table).to.match(/^memory\.agentplane\.io\/team-notes\s+what the team learned\s+26\s/m);
    const bad = await cp.kubectl(['apply', '-f', '-'], {
      input: 'apiVersion: agentplane.io/v1alpha1\nkind: Skill\nmetadata: {name: broken, namespace: team-a}\nspec: {files: {"../x.md": "x"}}\n',
      allowFail: true,
    });
    expect(bad.code).to.not.equal(0);
    expect(bad.stderr).to.contain('SKILL.md').and.contain('the path must be a relative path');
    expect(await kubectl('delete', 'skill', 'review', '-n', 'team-a')).to.contain('deleted');
    expect(await kubectl('delete', 'memory', 'team-notes', '-n', 'team-a')).to.contain('deleted');
  });

  it('apply creates an agent whose task really runs; get shows the table; -o yaml the object', async () => {
    const created = await apply(agentYaml('kube-bot', '@bash echo from-kubectl > k.txt && cat k.txt\n@say applied'));
    expect(created).to.contain('agent.agentplane.io/kube-bot created');
    await eventually(async () => (await jsonpath('agent/kube-bot', '.status.taskStatus')) === 'Complete', 60_000, 'task complete');

    const table = await kubectl('get', 'agents');
    const [header, ...rows] = table.trim().split('\n');
    expect(header).to.match(/^NAME\s+STATUS\s+TASK\s+MODEL\s+AGE/);
    expect(rows.find((r) => r.startsWith('kube-bot'))).to.match(/kube-bot\s+Running\s+Complete\s+claude-sonnet-4-5/);
    expect(await kubectl('get', 'agents', '-o', 'wide')).to.contain('applied');

    const yaml = await kubectl('get', 'agent', 'kube-bot', '-o', 'yaml');
    for (const s of [
      'apiVersion: agentplane.io/v1alpha1',
      'kind: Agent',
      'uid:',
      'resourceVersion:',
      'creationTimestamp:',
      'generation:',
      'team: e2e',
      'instructions:',
      'taskStatus: Complete',
    ]) {
      expect(yaml).to.contain(s);
    }
    expect(readFileSync(join(cp.dir, 'agentplane/workspaces/default/kube-bot/k.txt'), 'utf8')).to.equal('from-kubectl\n');
  });

  it('takes an AgentCheckpoint with kubectl apply, and an agent applied fromCheckpoint starts with its files', async () => {
    expect(await kubectl('explain', 'agentcheckpoint.spec')).to.match(/KIND:\s+AgentCheckpoint/);
    const cp1 = 'apiVersion: agentplane.io/v1alpha1\nkind: AgentCheckpoint\nmetadata: {name: kube-bot.first, namespace: default}\nspec: {agent: kube-bot}\n';
    expect(await apply(cp1)).to.contain('agentcheckpoint.agentplane.io/kube-bot.first created');
    await eventually(async () => (await jsonpath('agentcheckpoint/kube-bot.first', '.status.phase')) === 'Ready', 60_000, 'checkpoint Ready');
    const [header, row] = (await kubectl('get', 'agcp', '--field-selector', 'spec.agent=kube-bot')).trim().split('\n');
    expect(header).to.match(/^NAME\s+AGENT\s+PHASE\s+TASK\s+SIZE\s+AGE/);
    expect(row).to.match(/^kube-bot\.first\s+kube-bot\s+Ready\s+1\s/);
    const fork = agentYaml('kube-fork', '@bash cat k.txt\n@say forked').replace('  role: worker', '  role: worker\n  fromCheckpoint: kube-bot/first');
    await apply(fork);
    await eventually(async () => (await jsonpath('agent/kube-fork', '.status.taskStatus')) === 'Complete', 60_000, 'fork task complete');
    expect(readFileSync(join(cp.dir, 'agentplane/workspaces/default/kube-fork/k.txt'), 'utf8')).to.equal('from-kubectl\n');
    const bad = await cp.kubectl(['apply', '-f', '-'], {
      input: agentYaml('kube-fork2', '@say x').replace('  role: worker', '  role: worker\n  fromCheckpoint: kube-bot/none'),
      allowFail: true,
    });
    expect(bad.code).to.not.equal(0);
    expect(bad.stderr).to.contain('checkpoint "kube-bot/none" not found');
    await kubectl('delete', 'agent', 'kube-fork', '--wait');
  });

  it('describe shows the agent', async () => {
    const out = await kubectl('describe', 'agent', 'kube-bot');
    expect(out).to.match(/Name:\s+kube-bot/);
    expect(out).to.match(/Namespace:\s+default/);
    expect(out).to.contain('Instructions:');
    expect(out).to.contain('Task Status:');
  });

  it('apply with changed instructions runs a new task; events and log read through the aggregator', async () => {
    const out = await apply(agentYaml('kube-bot', '@bash cat k.txt\n@say changed'));
    expect(out).to.contain('configured');
    await eventually(async () => (await jsonpath('agent/kube-bot', '.status.lastTaskMessage')) === 'changed', 60_000, 'second task');
    const events = JSON.parse(await kubectl('get', '--raw', '/apis/agentplane.io/v1alpha1/namespaces/default/agents/kube-bot/events?limit=200'));
    const types = (events.items ?? events.events).map((e: { type: string }) => e.type);
    expect(types.filter((t: string) => t === 'task_completed')).to.have.length(2);
    const log = await kubectl('get', '--raw', '/apis/agentplane.io/v1alpha1/namespaces/default/agents/kube-bot/log');
    expect(log).to.contain('task_completed');
  });

  it('patch --type merge changes the spec', async () => {
    const out = await kubectl('patch', 'agent', 'kube-bot', '--type', 'merge', '-p', '{"spec":{"lifecycle":"Wake","systemPrompt":"Be brief."}}');
    expect(out).to.contain('patched');
    expect(await jsonpath('agent/kube-bot', '.spec.systemPrompt')).to.equal('Be brief.');
  });

  it('get agents -w sees a status change', async () => {
    const child = spawn(join(cp.bin, 'kubectl'), ['--kubeconfig', cp.kubeconfig, 'get', 'agents', '-w', '--output-watch-events']);
    let seen = '';
    child.stdout.on('data', (d) => (seen += String(d)));
    try {
      await eventually(async () => seen.includes('kube-bot'), 20_000, 'initial row');
      await apply(agentYaml('kube-bot', '@bash echo watched\n@say watched'));
      await eventually(async () => /MODIFIED\s+kube-bot\s+\S+\s+InProgress/.test(seen), 30_000, 'a MODIFIED row with InProgress');
      await eventually(async () => /MODIFIED\s+kube-bot\s+\S+\s+Complete/.test(seen.slice(seen.search(/InProgress/))), 60_000, 'then Complete');
    } finally {
      child.kill();
    }
  });

  it('get agents -A lists every namespace', async () => {
    await apply(agentYaml('other-bot', '@say hi', 'team-a'));
    const out = await kubectl('get', 'agents', '-A');
    expect(out).to.match(/^NAMESPACE\s+NAME\s+STATUS/m);
    expect(out).to.match(/^team-a\s+other-bot/m);
    expect(out).to.match(/^default\s+kube-bot/m);
  });

  it('get agents --chunk-size=2 pages with limit/continue; a GET right after a write sees it', async () => {
    const names = ['pa', 'pb', 'pc', 'pd', 'pe'];
    await apply(names.map((n) => agentYaml(n, '@say paged', 'team-b').replace('role: worker', 'role: worker\n  lifecycle: Sleep')).join('---\n'));
    const paged = await cp.kubectl(['get', 'agents', '-n', 'team-b', '--chunk-size=2', '-o', 'name', '-v=6']);
    expect(paged.stdout.trim().split('\n')).to.deep.equal(names.map((n) => `agent.agentplane.io/${n}`));
    const requests = paged.stderr.split('\n').filter((l) => l.includes('/apis/agentplane.io/v1alpha1/namespaces/team-b/agents?'));
    expect(requests, paged.stderr).to.have.length(3);
    expect(requests[0]).to.contain('limit=2');
    expect(requests[1]).to.match(/continue=[A-Za-z0-9_-]+/);
    // Read-your-writes through the aggregator: the label is there in the very next read.
    await kubectl('label', 'agent', 'pc', '-n', 'team-b', 'fresh=yes');
    expect(await jsonpath('agent/pc', '.metadata.labels.fresh', 'team-b')).to.equal('yes');
    const table = await kubectl('get', 'agents', '-n', 'team-b', '-l', 'fresh=yes', '--chunk-size=1');
    expect(table).to.match(/^NAME\s+STATUS/);
    expect(table).to.contain('pc');
  });

  it('errors come back as Kubernetes Status: NotFound, Invalid with causes, AlreadyExists', async () => {
    const missing = await cp.kubectl(['get', 'agent', 'nope'], { allowFail: true });
    expect(missing.code).to.not.equal(0);
    expect(missing.stderr).to.contain('agents.agentplane.io "nope" not found');
    const bad = await cp.kubectl(['apply', '-f', '-'], { input: agentYaml('bad', '', 'default').replace('role: worker', 'role: boss'), allowFail: true });
    expect(bad.code).to.not.equal(0);
    expect(bad.stderr).to.match(/is invalid/);
    expect(bad.stderr).to.contain('role');
    const dup = await cp.kubectl(['create', '-f', '-'], { input: agentYaml('kube-bot', 'x'), allowFail: true });
    expect(dup.stderr).to.contain('already exists');
  });

  it('delete --wait returns once the agent and its workspace are gone', async () => {
    const out = await kubectl('delete', 'agent', 'kube-bot', '--wait=true', '--timeout=60s');
    expect(out).to.contain('agent.agentplane.io "kube-bot" deleted');
    const after = await cp.kubectl(['get', 'agent', 'kube-bot'], { allowFail: true });
    expect(after.stderr).to.contain('not found');
    expect(() => readFileSync(join(cp.dir, 'agentplane/workspaces/default/kube-bot/k.txt'))).to.throw();
  });

  it('a namespace capped by the ConfigMap agentplane-limits queues its agents: kubectl get agents shows Queued:N; raising the cap starts them', async () => {
    await kubectl('create', 'namespace', 'team-q');
    await kubectl('create', 'configmap', 'agentplane-limits', '-n', 'agentplane-system', '--from-literal=team-q={"maxWorkers": 1}');
    await apply(agentYaml('q-hold', '@bash node -e "setTimeout(() => {}, 120000)"\n@say held', 'team-q'));
    await eventually(async () => (await jsonpath('agent/q-hold', '.status.status', 'team-q')) === 'Running' || undefined, 60_000, 'q-hold running');
    await apply(agentYaml('q-one', '@say one', 'team-q'));
    await apply(agentYaml('q-two', '@say two', 'team-q'));
    const rows = await eventually(
      async () => {
        const out = await kubectl('get', 'agents', '-n', 'team-q', '--no-headers');
        const status = Object.fromEntries(
          out
            .trim()
            .split('\n')
            .map((l) => l.split(/\s+/).slice(0, 2)),
        );
        return status['q-one'] === 'Queued:1' && status['q-two'] === 'Queued:2' ? status : undefined;
      },
      60_000,
      'q-one and q-two queued in order',
    );
    expect(rows['q-hold']).to.equal('Running');
    expect(await jsonpath('agent/q-two', '.status.queue.position', 'team-q')).to.equal('2');
    expect(await jsonpath('agent/q-two', '.status.conditions[?(@.type=="Queued")].reason', 'team-q')).to.equal('NamespaceWorkerLimit');
    expect(await kubectl('get', 'agents', '-n', 'team-q', '--field-selector', 'status.status=Queued', '-o', 'name')).to.equal(
      'agent.agentplane.io/q-one\nagent.agentplane.io/q-two\n',
    );

    await kubectl('patch', 'configmap', 'agentplane-limits', '-n', 'agentplane-system', '--type=merge', '-p', '{"data":{"team-q":"{\\"maxWorkers\\": 3}"}}');
    for (const n of ['q-one', 'q-two']) {
      await eventually(
        async () => (await jsonpath(`agent/${n}`, '.status.taskStatus', 'team-q')) === 'Complete' || undefined,
        60_000,
        `${n} ran once the cap rose`,
      );
    }
    expect(await jsonpath('agent/q-hold', '.status.taskStatus', 'team-q')).to.equal('InProgress');
    await kubectl('delete', 'configmap', 'agentplane-limits', '-n', 'agentplane-system');
  });

  describe('RBAC through the aggregator and the /api/v1 mirror', () => {
    let token: string;
    let limited: string;

    before(async () => {
      await apply(agentYaml('visible', '@say hello', 'team-a'));
      await apply(agentYaml('hidden', '@say hello', 'team-b'));
      // A service account that may only get agents in team-a.
      await apply(`apiVersion: v1
kind: ServiceAccount
metadata: {name: reader, namespace: team-a}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: agent-getter, namespace: team-a}
rules:
- apiGroups: [agentplane.io]
  resources: [agents]
  verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: reader-gets-agents, namespace: team-a}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: agent-getter}
subjects:
- {kind: ServiceAccount, name: reader, namespace: team-a}
`);
      token = (await kubectl('create', 'token', 'reader', '-n', 'team-a')).trim();
      const cfg = readFileSync(cp.kubeconfig, 'utf8')
        .replace(/client-certificate-data: .*\n/, '')
        .replace(/client-key-data: .*/, `token: ${token}`);
      limited = join(cp.dir, 'reader.kubeconfig');
      writeFileSync(limited, cfg, { mode: 0o600 });
    });

    const as = (...args: string[]) => cp.kubectl(args, { kubeconfig: limited, allowFail: true });

    it('auth can-i agrees with the role', async () => {
      expect((await as('auth', 'can-i', 'get', 'agents.agentplane.io', '-n', 'team-a')).stdout.trim()).to.equal('yes');
      expect((await as('auth', 'can-i', 'create', 'agents.agentplane.io', '-n', 'team-a')).stdout.trim()).to.equal('no');
      expect((await as('auth', 'can-i', 'get', 'agents.agentplane.io', '-n', 'team-b')).stdout.trim()).to.equal('no');
      for (const r of ['skills', 'memories']) expect((await as('auth', 'can-i', 'get', `${r}.agentplane.io`, '-n', 'team-a')).stdout.trim(), r).to.equal('no');
      const mem = await as('get', 'memories', '-n', 'team-a');
      expect(mem.stderr).to.match(/cannot list resource "memories" in API group "agentplane.io"/);
    });

    it('kubectl: get in team-a works; create in team-a and get in team-b are forbidden', async () => {
      const ok = await as('get', 'agent', 'visible', '-n', 'team-a', '-o', 'name');
      expect(ok.code).to.equal(0);
      expect(ok.stdout.trim()).to.equal('agent.agentplane.io/visible');
      const create = await cp.kubectl(['create', '-f', '-'], { kubeconfig: limited, input: agentYaml('sneaky', '@say x', 'team-a'), allowFail: true });
      expect(create.code).to.not.equal(0);
      expect(create.stderr).to.match(
        /forbidden: User "system:serviceaccount:team-a:reader" cannot create resource "agents" in API group "agentplane.io" in the namespace "team-a"/,
      );
      const other = await as('get', 'agent', 'hidden', '-n', 'team-b');
      expect(other.stderr).to.contain('forbidden');
    });

    it('the /api/v1 mirror applies the same RBAC to the same kube token', async () => {
      const call = async (method: string, path: string, body?: unknown) => {
        const res = await curl(agentplaneUrl + path, method, token, join(cp.dir, 'pki/serving-ca.crt'), body);
        return res;
      };
      const got = await call('GET', '/api/v1/agents/visible?namespace=team-a');
      expect(got.status).to.equal(200);
      expect(JSON.parse(got.body).name).to.equal('visible');
      const create = await call('POST', '/api/v1/agents', { name: 'sneaky', namespace: 'team-a', instructions: 'x' });
      expect(create.status).to.equal(403);
      expect(JSON.parse(create.body).reason).to.equal('Forbidden');
      const other = await call('GET', '/api/v1/agents/hidden?namespace=team-b');
      expect(other.status).to.equal(403);
      const anonymous = await curl(agentplaneUrl + '/api/v1/agents?namespace=team-a', 'GET', undefined, join(cp.dir, 'pki/serving-ca.crt'));
      expect(anonymous.status).to.equal(401);
    });

    it('/mcp on the same port applies the same RBAC to each tool call (docs/mcp.md "In the cluster home")', async () => {
      const tool = async (name: string, args: object, as: string | undefined = token) => {
        const msg = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } };
        const res = await curl(agentplaneUrl + '/mcp', 'POST', as, join(cp.dir, 'pki/serving-ca.crt'), msg, { accept: 'application/json, text/event-stream' });
        return {
          status: res.status,
          result: res.status === 200 ? (JSON.parse(res.body) as { result: { isError?: boolean; content: { text: string }[] } }).result : undefined,
        };
      };
      const got = await tool('get_agent', { name: 'visible', namespace: 'team-a' });
      expect(got.status).to.equal(200);
      expect(got.result!.isError, got.result!.content[0].text).to.not.equal(true);
      expect(got.result!.content[0].text).to.contain('team-a/visible');
      const create = await tool('create_agent', { name: 'sneaky', namespace: 'team-a', instructions: 'x' });
      expect(create.result!.isError).to.equal(true);
      expect(create.result!.content[0].text).to.contain(
        'User "system:serviceaccount:team-a:reader" cannot create resource "agents" in API group "agentplane.io" in the namespace "team-a"',
      );
      const other = await tool('get_agent', { name: 'hidden', namespace: 'team-b' });
      expect(other.result!.isError).to.equal(true);
      expect(other.result!.content[0].text).to.contain('Forbidden (403)');
      expect((await tool('list_agents', {}, '')).status).to.equal(401); // no credential
    });
  });

  describe('schedules: get, explain, table and RBAC per verb', () => {
    let apiserver: string;
    const apiserverCa = (): string => join(cp.dir, 'apiserver-ca.crt');
    const tokens: Record<string, string> = {};
    const trigger = (token: string) =>
      curl(`${apiserver}/apis/agentplane.io/v1alpha1/namespaces/team-a/schedules/weekly/trigger`, 'POST', token, apiserverCa(), {});

    before(async () => {
      // One service account may only read schedules; the other may read and trigger them, not change them.
      await apply(`apiVersion: v1
kind: ServiceAccount
metadata: {name: sched-reader, namespace: team-a}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: sched-runner, namespace: team-a}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: schedule-reader, namespace: team-a}
rules:
- apiGroups: [agentplane.io]
  resources: [schedules]
  verbs: [get, list]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: schedule-runner, namespace: team-a}
rules:
- apiGroups: [agentplane.io]
  resources: [schedules]
  verbs: [get, list]
- apiGroups: [agentplane.io]
  resources: [schedules/trigger]
  verbs: [create]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: sched-reader-reads, namespace: team-a}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: schedule-reader}
subjects:
- {kind: ServiceAccount, name: sched-reader, namespace: team-a}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: sched-runner-runs, namespace: team-a}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: schedule-runner}
subjects:
- {kind: ServiceAccount, name: sched-runner, namespace: team-a}
`);
      for (const sa of ['sched-reader', 'sched-runner']) tokens[sa] = (await kubectl('create', 'token', sa, '-n', 'team-a')).trim();
      apiserver = (await kubectl('config', 'view', '--raw', '-o', 'jsonpath={.clusters[0].cluster.server}')).trim();
      const ca = (await kubectl('config', 'view', '--raw', '-o', 'jsonpath={.clusters[0].cluster.certificate-authority-data}')).trim();
      writeFileSync(apiserverCa(), Buffer.from(ca, 'base64'));
      await apply(agentYaml('sched-target', '@say ready', 'team-a'));
      await eventually(async () => (await jsonpath('agent/sched-target', '.status.taskStatus', 'team-a')) === 'Complete', 60_000, 'the first task');
    });

    it('explains schedule.spec; an applied Schedule shows in get with its columns; a bad cron is 422 naming spec.cron', async () => {
      const spec = await kubectl('explain', 'schedule.spec');
      for (const f of ['agent', 'cron', 'timeZone', 'instructions', 'concurrencyPolicy', 'suspend', 'startingDeadlineSeconds']) expect(spec).to.contain(f);
      const created = await apply(`apiVersion: agentplane.io/v1alpha1
kind: Schedule
metadata: {name: weekly, namespace: team-a}
spec: {agent: sched-target, cron: "0 9 * * 1", timeZone: Europe/Paris, instructions: "@say scheduled hello", concurrencyPolicy: Forbid}
`);
      expect(created).to.contain('schedule.agentplane.io/weekly created');
      const table = await eventually(
        async () => {
          const t = await kubectl('get', 'schedules', '-n', 'team-a');
          return t.includes(' in ') ? t : undefined;
        },
        30_000,
        'a next time in the table',
      );
      expect(table).to.match(/NAME\s+AGENT\s+SCHEDULE\s+SUSPEND\s+LAST SCHEDULE\s+NEXT\s+AGE/);
      // No last schedule yet (an empty cell), the next one days ahead.
      expect(table, table).to.match(/weekly\s+sched-target\s+0 9 \* \* 1\s+false\s+in \d/);
      expect(await jsonpath('schedule/weekly', '.status.conditions[?(@.type=="Ready")].status', 'team-a')).to.equal('True');
      const bad = await cp.kubectl(['apply', '-f', '-'], {
        input:
          'apiVersion: agentplane.io/v1alpha1\nkind: Schedule\nmetadata: {name: bad, namespace: team-a}\nspec: {agent: x, cron: "not a cron", instructions: hi}\n',
        allowFail: true,
      });
      expect(bad.stderr).to.contain('spec.cron');
      expect(bad.stderr).to.contain('is invalid');
    });

    it('auth can-i and the aggregator tell read, trigger and change apart', async () => {
      const can = async (sa: string, ...what: string[]) =>
        (await cp.kubectl(['auth', 'can-i', ...what, '-n', 'team-a', `--as=system:serviceaccount:team-a:${sa}`], { allowFail: true })).stdout.trim();
      expect(await can('sched-reader', 'get', 'schedules.agentplane.io')).to.equal('yes');
      expect(await can('sched-reader', 'create', 'schedules.agentplane.io', '--subresource=trigger')).to.equal('no');
      expect(await can('sched-runner', 'create', 'schedules.agentplane.io', '--subresource=trigger')).to.equal('yes');
      expect(await can('sched-runner', 'patch', 'schedules.agentplane.io')).to.equal('no');
      const denied = await trigger(tokens['sched-reader']);
      expect(denied.status).to.equal(403);
      expect(JSON.parse(denied.body).message).to.contain('cannot create resource "schedules/trigger"');
      const mirror = await curl(
        `${agentplaneUrl}/api/v1/schedules/weekly/trigger?namespace=team-a`,
        'POST',
        tokens['sched-reader'],
        join(cp.dir, 'pki/serving-ca.crt'),
        {},
      );
      expect(mirror.status).to.equal(403);
      const ok = await trigger(tokens['sched-runner']);
      expect(ok.status, ok.body).to.equal(200);
      expect(JSON.parse(ok.body).status.lastRun).to.include({ outcome: 'Started', task: 2, triggered: true });
      await eventually(async () => (await jsonpath('agent/sched-target', '.status.lastTaskMessage', 'team-a')) === 'scheduled hello', 60_000, 'the run done');
      expect(await kubectl('delete', 'schedule', 'weekly', '-n', 'team-a')).to.contain('deleted');
    });
  });

  describe('tool-call approvals: RBAC on agents/approvals', () => {
    const base = '/apis/agentplane.io/v1alpha1/namespaces/team-a/agents/gated';
    let id: string;
    let approver: string;
    let editor: string;
    let editorToken: string;

    const kubeconfigFor = (sa: string, token: string): string => {
      const cfg = readFileSync(cp.kubeconfig, 'utf8')
        .replace(/client-certificate-data: .*\n/, '')
        .replace(/client-key-data: .*/, `token: ${token}`);
      const path = join(cp.dir, `${sa}.kubeconfig`);
      writeFileSync(path, cfg, { mode: 0o600 });
      return path;
    };
    let approverToken: string;
    let apiserver: string;
    const apiserverCa = (): string => join(cp.dir, 'apiserver-ca.crt');
    // Through kube-apiserver (the aggregator), as any client of the aggregated API sends a body:
    // `kubectl create --raw -f` (kubectl 1.34) sends none.
    const decide = (token: string, decision: string) =>
      curl(`${apiserver}${base}/approvals`, 'POST', token, apiserverCa(), { id, decision, reason: 'checked' });

    before(async () => {
      // One service account may decide approvals (and read agents), the other may change agents but not decide.
      await apply(`apiVersion: v1
kind: ServiceAccount
metadata: {name: approver, namespace: team-a}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: editor, namespace: team-a}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: agent-approver, namespace: team-a}
rules:
- apiGroups: [agentplane.io]
  resources: [agents]
  verbs: [get]
- apiGroups: [agentplane.io]
  resources: [agents/approvals]
  verbs: [get, create]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: agent-editor, namespace: team-a}
rules:
- apiGroups: [agentplane.io]
  resources: [agents]
  verbs: [get, list, create, update, patch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: approver-approves, namespace: team-a}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: agent-approver}
subjects:
- {kind: ServiceAccount, name: approver, namespace: team-a}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: editor-edits, namespace: team-a}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: agent-editor}
subjects:
- {kind: ServiceAccount, name: editor, namespace: team-a}
`);
      approverToken = (await kubectl('create', 'token', 'approver', '-n', 'team-a')).trim();
      approver = kubeconfigFor('approver', approverToken);
      apiserver = (await kubectl('config', 'view', '--raw', '-o', 'jsonpath={.clusters[0].cluster.server}')).trim();
      const ca = (await kubectl('config', 'view', '--raw', '-o', 'jsonpath={.clusters[0].cluster.certificate-authority-data}')).trim();
      writeFileSync(apiserverCa(), Buffer.from(ca, 'base64'));
      editorToken = (await kubectl('create', 'token', 'editor', '-n', 'team-a')).trim();
      editor = kubeconfigFor('editor', editorToken);
      await apply(`apiVersion: agentplane.io/v1alpha1
kind: Agent
metadata: {name: gated, namespace: team-a}
spec:
  instructions: ${JSON.stringify('@bash echo gated-by-rbac\n@say approved through rbac')}
  role: worker
  approval: {tools: [Bash], timeoutSeconds: 600}
`);
      id = await eventually(async () => (await jsonpath('agent/gated', '.status.approvals[0].id', 'team-a')) || undefined, 60_000, 'an approval request');
    });

    it('explains spec.approval and shows the pending approval in the status', async () => {
      const out = await kubectl('explain', 'agent.spec.approval');
      for (const f of ['tools', 'allowedCommands', 'timeoutSeconds', 'onTimeout']) expect(out).to.contain(f);
      expect(await jsonpath('agent/gated', '.status.approvals[0].tool', 'team-a')).to.equal('Bash');
      expect(await jsonpath('agent/gated', '.status.taskStatus', 'team-a')).to.equal('InProgress');
    });

    it('auth can-i tells the two apart', async () => {
      const can = async (kubeconfig: string) =>
        (
          await cp.kubectl(['auth', 'can-i', 'create', 'agents.agentplane.io', '--subresource=approvals', '-n', 'team-a'], { kubeconfig, allowFail: true })
        ).stdout.trim();
      expect(await can(approver)).to.equal('yes');
      expect(await can(editor)).to.equal('no');
    });

    it('forbids a user who may update agents but not create agents/approvals (403), through the aggregator and the mirror', async () => {
      const denied = await decide(editorToken, 'deny');
      expect(denied.status).to.equal(403);
      expect(JSON.parse(denied.body).message).to.match(/User "system:serviceaccount:team-a:editor" cannot create resource "agents\/approvals"/);
      const mirror = await curl(
        `${agentplaneUrl}/api/v1/agents/gated/approvals/${id}?namespace=team-a`,
        'POST',
        editorToken,
        join(cp.dir, 'pki/serving-ca.crt'),
        {
          decision: 'deny',
        },
      );
      expect(mirror.status).to.equal(403);
      expect(JSON.parse(mirror.body).reason).to.equal('Forbidden');
      // Still pending: nothing was decided.
      expect(await jsonpath('agent/gated', '.status.approvals[0].decision', 'team-a')).to.equal('');
    });

    it('lets a user with agents/approvals but not agents update decide; the tool runs and the decider is recorded', async () => {
      const cannotUpdate = await cp.kubectl(['patch', 'agent', 'gated', '-n', 'team-a', '--type', 'merge', '-p', '{"spec":{"priority":1}}'], {
        kubeconfig: approver,
        allowFail: true,
      });
      expect(cannotUpdate.stderr).to.contain('forbidden');
      const ok = await decide(approverToken, 'allow');
      expect(ok.status, ok.body).to.equal(200);
      const answer = JSON.parse(ok.body);
      expect(answer).to.include({ kind: 'AgentApproval', id, decision: 'allow', decidedBy: 'system:serviceaccount:team-a:approver', reason: 'checked' });
      await eventually(async () => (await jsonpath('agent/gated', '.status.taskStatus', 'team-a')) === 'Complete', 60_000, 'the task to complete');
      expect(await jsonpath('agent/gated', '.status.lastTaskMessage', 'team-a')).to.equal('approved through rbac');
      const events = JSON.parse(await kubectl('get', '--raw', `${base}/events?limit=200`));
      const decided = events.items.find((e: { type: string }) => e.type === 'approval_decided');
      expect(decided.payload).to.include({ id, decision: 'allow', decidedBy: 'system:serviceaccount:team-a:approver' });
      const result = events.items.find((e: { type: string }) => e.type === 'tool_result');
      expect(result.payload.output).to.contain('gated-by-rbac');
      const again = await decide(approverToken, 'deny');
      expect(again.status).to.equal(404);
      expect(JSON.parse(again.body).message).to.contain(`no approval "${id}"`);
    });
  });
  describe('triggers and webhooks: get, explain, RBAC per verb, and the hook without a token', () => {
    let adminToken: string;
    let viewer: string;
    const ca = (): string => join(cp.dir, 'pki/serving-ca.crt');

    before(async () => {
      // The shipped roles themselves (this control plane aggregates none into view/edit/admin).
      await kubectl('apply', '-f', join(REPO, 'manifests/rbac-aggregated.yaml'));
      await apply(`apiVersion: v1
kind: ServiceAccount
metadata: {name: hooks-admin, namespace: team-a}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: hooks-viewer, namespace: team-a}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: hooks-admin, namespace: team-a}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: agentplane-admin}
subjects:
- {kind: ServiceAccount, name: hooks-admin, namespace: team-a}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: secret-writer, namespace: team-a}
rules:
- apiGroups: [""]
  resources: [secrets]
  verbs: [create]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: hooks-admin-secrets, namespace: team-a}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: secret-writer}
subjects:
- {kind: ServiceAccount, name: hooks-admin, namespace: team-a}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: hooks-viewer, namespace: team-a}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: agentplane-view}
subjects:
- {kind: ServiceAccount, name: hooks-viewer, namespace: team-a}
`);
      adminToken = (await kubectl('create', 'token', 'hooks-admin', '-n', 'team-a')).trim();
      const cfg = readFileSync(cp.kubeconfig, 'utf8')
        .replace(/client-certificate-data: .*\n/, '')
        .replace(/client-key-data: .*/, `token: ${(await kubectl('create', 'token', 'hooks-viewer', '-n', 'team-a')).trim()}`);
      viewer = join(cp.dir, 'hooks-viewer.kubeconfig');
      writeFileSync(viewer, cfg, { mode: 0o600 });
    });

    it('lists them in api-resources and explains their specs', async () => {
      const out = await kubectl('api-resources', '--api-group=agentplane.io');
      for (const r of ['triggers', 'webhooks']) expect(out).to.match(new RegExp(`^${r}\\s`, 'm'));
      const t = await kubectl('explain', 'trigger.spec');
      for (const f of ['agent', 'secretRef', 'signature', 'deliveryIdHeader', 'instructions']) expect(t).to.contain(f);
      const w = await kubectl('explain', 'webhook.spec');
      for (const f of ['url', 'eventTypes', 'agents', 'secretRef']) expect(w).to.contain(f);
    });

    it('RBAC per verb: agentplane-view gets and lists, may not create or delete (auth can-i and kubectl)', async () => {
      const can = async (verb: string, res: string, kubeconfig?: string) =>
        (
          await cp.kubectl(['auth', 'can-i', verb, `${res}.agentplane.io`, '-n', 'team-a'], { ...(kubeconfig ? { kubeconfig } : {}), allowFail: true })
        ).stdout.trim();
      for (const res of ['triggers', 'webhooks']) {
        expect(await can('list', res, viewer), `list ${res}`).to.equal('yes');
        expect(await can('create', res, viewer), `create ${res}`).to.equal('no');
        expect(await can('delete', res, viewer), `delete ${res}`).to.equal('no');
      }
      const refused = await cp.kubectl(['apply', '-f', '-'], {
        kubeconfig: viewer,
        input:
          'apiVersion: agentplane.io/v1alpha1\nkind: Webhook\nmetadata: {name: w, namespace: team-a}\nspec: {url: "https://example.com/h", eventTypes: [error], secretRef: {name: s}}\n',
        allowFail: true,
      });
      expect(refused.code).to.not.equal(0);
      expect(refused.stderr).to.match(/cannot (create|patch|get) resource "webhooks"/);
      const listed = await cp.kubectl(['get', 'webhooks', '-n', 'team-a'], { kubeconfig: viewer, allowFail: true });
      expect(listed.code, listed.stderr).to.equal(0);
    });

    it('a signed delivery to the hook, with no token, starts a task; get shows the Table columns', async () => {
      const secret = await curl(`${agentplaneUrl}/api/v1/secrets`, 'POST', adminToken, ca(), {
        name: 'gh-hook',
        namespace: 'team-a',
        data: { secret: 'e2e-hook-secret' },
      });
      expect(secret.status, secret.body).to.equal(201);
      await apply(agentYaml('hooked', '@say first', 'team-a'));
      await eventually(async () => (await jsonpath('agent/hooked', '.status.taskStatus', 'team-a')) === 'Complete', 60_000, 'first task');
      expect(
        await apply(`apiVersion: agentplane.io/v1alpha1
kind: Trigger
metadata: {name: gh, namespace: team-a}
spec: {agent: hooked, secretRef: {name: gh-hook}, instructions: "@say PR {{pull_request.number}}"}
`),
      ).to.contain('trigger.agentplane.io/gh created');
      const body = JSON.stringify({ pull_request: { number: 7 } });
      const sig = `sha256=${createHmac('sha256', 'e2e-hook-secret').update(body).digest('hex')}`;
      const post = (signature: string) =>
        run(
          'curl',
          [
            '-s',
            '-X',
            'POST',
            '--cacert',
            ca(),
            '-w',
            '\n%{http_code}',
            '-H',
            'content-type: application/json',
            '-H',
            `X-Hub-Signature-256: ${signature}`,
            '-H',
            'X-GitHub-Delivery: e2e-1',
            '-d',
            body,
            `${agentplaneUrl}/api/v1/triggers/gh/hook?namespace=team-a`,
          ],
          { timeout: 30_000 },
        ).then((r) => r.stdout.slice(r.stdout.lastIndexOf('\n') + 1));
      expect(await post('sha256=00')).to.equal('401');
      expect(await post(sig)).to.equal('202');
      await eventually(async () => (await jsonpath('agent/hooked', '.status.lastTaskMessage', 'team-a')) === 'PR 7', 60_000, 'the triggered task');
      const table = await kubectl('get', 'triggers', '-n', 'team-a');
      expect(table).to.match(/^NAME\s+AGENT\s+LAST\s+STARTED\s+AGE/m);
      expect(table).to.match(/^gh\s+hooked\s+Started\s+1\s/m);
      await apply(`apiVersion: agentplane.io/v1alpha1
kind: Webhook
metadata: {name: out, namespace: team-a}
spec: {url: "https://hooks.example.com/x", eventTypes: [error], agents: [nobody], secretRef: {name: gh-hook}}
`);
      expect(await kubectl('get', 'webhooks', '-n', 'team-a')).to.match(/^out\s+https:\/\/hooks\.example\.com\/x\s+error\s+0\s+0\s/m);
      expect(await kubectl('delete', 'triggers,webhooks', '--all', '-n', 'team-a')).to.contain('deleted');
    });
  });
});

/** HTTPS with a CA file and a bearer token, via curl: the mirror as any client would call it. */
async function curl(
  url: string,
  method: string,
  token: string | undefined,
  ca: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  const args = ['-s', '-X', method, '--cacert', ca, '-w', '\n%{http_code}', url];
  if (token) args.push('-H', `Authorization: Bearer ${token}`);
  for (const [k, v] of Object.entries(headers)) args.push('-H', `${k}: ${v}`);
  if (body !== undefined) args.push('-H', 'content-type: application/json', '-d', JSON.stringify(body));
  const { stdout } = await run('curl', args, { timeout: 30_000 });
  const i = stdout.lastIndexOf('\n');
  return { status: Number(stdout.slice(i + 1)), body: stdout.slice(0, i) };
}
