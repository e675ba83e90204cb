// `kubectl agentplane`: the CLI as a kubectl plugin, found by the real kubectl on PATH
// (bin/kubectl-agentplane), going through a real kube-apiserver to agentplane's aggregated API
// with the kubeconfig's context: its server, CA, credentials (a client certificate, then a
// service account's bearer token) and namespace. agentplane runs in the cluster home with
// hack/control-plane.sh register (workers as local processes, the built-in scripted model).

import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { type ControlPlane, controlPlaneUp, REPO, type RunResult } from '../support/control-plane.js';

const run = promisify(execFile);

describe('kubectl agentplane: the CLI as a kubectl plugin (e2e)', function () {
  this.timeout(120_000);
  let cp: ControlPlane;
  /** The admin kubeconfig (client certificate) with its context's namespace set to team-a. */
  let teamA: string;

  /** `kubectl agentplane <args>` with KUBECONFIG=`kubeconfig`, bin/ on PATH, none of the caller's AGENTPLANE_* settings. */
  const plugin = (kubeconfig: string, args: string[]): Promise<RunResult> =>
    new Promise((resolve) => {
      const env: NodeJS.ProcessEnv = { ...process.env, KUBECONFIG: kubeconfig, PATH: `${join(REPO, 'bin')}:${process.env.PATH}`, NO_COLOR: '1' };
      for (const k of Object.keys(env)) if (k.startsWith('AGENTPLANE_')) delete env[k];
      execFile(join(cp.bin, 'kubectl'), ['agentplane', ...args], { env, timeout: 90_000 }, (err, stdout, stderr) => {
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      });
    });
  const kubectl = (...args: string[]) => cp.kubectl(args).then((r) => r.stdout);

  /** A copy of the admin kubeconfig, its context's namespace `ns`; with `token`, that bearer token is its user instead of the client certificate. */
  const kubeconfigFor = async (file: string, ns: string, token?: string): Promise<string> => {
    const path = join(cp.dir, file);
    let cfg = readFileSync(cp.kubeconfig, 'utf8');
    if (token) cfg = cfg.replace(/client-certificate-data: .*\n/, '').replace(/client-key-data: .*/, `token: ${token}`);
    writeFileSync(path, cfg, { mode: 0o600 });
    await run(join(cp.bin, 'kubectl'), ['--kubeconfig', path, 'config', 'set-context', '--current', `--namespace=${ns}`]);
    return path;
  };

  before(async function () {
    this.timeout(45 * 60_000); // a cold machine builds kube-apiserver first
    cp = await controlPlaneUp();
    const env = { ...process.env, AGENTPLANE_CP_DIR: cp.dir };
    await run('bash', [join(REPO, 'hack/control-plane.sh'), 'register'], { env, timeout: 5 * 60_000 });
    await kubectl('create', 'namespace', 'team-a');
    teamA = await kubeconfigFor('team-a.kubeconfig', 'team-a');
  });

  after(async () => {
    await cp?.down();
  });

  it("run creates an agent in the context's namespace, prints the scripted answer and exits 0", async () => {
    const r = await plugin(teamA, ['run', 'hello', '@bash echo from-the-plugin\n@say hello through kube-apiserver']);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stderr).to.contain('created agent/hello in namespace team-a, task 1');
    expect(r.stdout).to.contain('from-the-plugin').and.contain('hello through kube-apiserver');
    expect(r.stdout).to.match(/✔ task 1 completed/);
    expect(await kubectl('get', 'agent', 'hello', '-n', 'team-a', '-o', 'jsonpath={.status.taskStatus}')).to.equal('Complete');
  });

  it("ls lists the context's namespace; -n switches it, as kubectl does", async () => {
    await cp.kubectl(['apply', '-f', '-'], {
      input:
        'apiVersion: agentplane.io/v1alpha1\nkind: Agent\nmetadata: {name: elsewhere, namespace: default}\nspec: {instructions: "@say hi", role: worker}\n',
    });
    const ls = await plugin(teamA, ['ls']);
    expect(ls.code, ls.stderr).to.equal(0);
    expect(ls.stdout).to.match(/^NAME\s+STATUS\s+TASK\s+MODEL\s+AGE/m);
    expect(ls.stdout).to.match(/^hello\s+\S+\s+Complete\s/m);
    expect(ls.stdout).to.not.contain('elsewhere');
    const other = await plugin(teamA, ['ls', '-n', 'default']);
    expect(other.code, other.stderr).to.equal(0);
    expect(other.stdout).to.match(/^elsewhere\s/m);
    expect(other.stdout).to.not.contain('hello');
    // `agentplane --kubeconfig` goes the same way without kubectl.
    const direct = await run(join(REPO, 'bin/agentplane'), ['--kubeconfig', teamA, 'ls'], { env: { ...process.env, NO_COLOR: '1' } });
    expect(direct.stdout).to.match(/^hello\s/m);
    const json = await plugin(teamA, ['get', 'hello', '-o', 'json']);
    expect(JSON.parse(json.stdout)).to.include({ name: 'hello', namespace: 'team-a', taskStatus: 'Complete' });
  });

  it('logs shows the history; describe the agent; run again gives the same words a new task', async () => {
    const logs = await plugin(teamA, ['logs', 'hello']);
    expect(logs.code, logs.stderr).to.equal(0);
    expect(logs.stdout).to.contain('from-the-plugin').and.contain('hello through kube-apiserver');
    const again = await plugin(teamA, ['run', 'hello', '@bash echo from-the-plugin\n@say hello through kube-apiserver']);
    expect(again.code, again.stderr).to.equal(0);
    expect(again.stderr).to.contain('tasked agent/hello in namespace team-a, task 2');
    expect(again.stdout).to.match(/✔ task 2 completed/);
    const describe = await plugin(teamA, ['describe', 'hello']);
    expect(describe.stdout)
      .to.match(/^Namespace:\s+team-a$/m)
      .and.match(/^Task:\s+Complete$/m);
    const byTask = await plugin(teamA, ['logs', 'hello', '--task', '1', '--json']);
    expect(
      byTask.stdout
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { task: number }).task),
    ).to.satisfy((t: number[]) => t.length > 0 && t.every((x) => x === 1));
  });

  it('steer, cancel, sleep, wake and rm act through the aggregated API', async () => {
    const steer = await plugin(teamA, ['steer', 'hello', '@say steered']);
    expect(steer.code, steer.stderr).to.equal(0);
    expect(steer.stdout).to.contain('agent/hello was idle: started task 3');
    expect((await plugin(teamA, ['cancel', 'hello'])).stdout).to.match(/nothing to cancel|task cancelled/);
    expect((await plugin(teamA, ['sleep', 'hello'])).stdout).to.contain('agent/hello asked to sleep');
    expect(await kubectl('get', 'agent', 'hello', '-n', 'team-a', '-o', 'jsonpath={.spec.lifecycle}')).to.equal('Sleep');
    expect((await plugin(teamA, ['wake', 'hello'])).stdout).to.contain('agent/hello woken');
    expect(await kubectl('get', 'agent', 'hello', '-n', 'team-a', '-o', 'jsonpath={.spec.lifecycle}')).to.equal('Wake');
    const rm = await plugin(teamA, ['rm', 'hello']);
    expect(rm.code, rm.stderr).to.equal(0);
    expect(rm.stdout).to.match(/agent\/hello (deleted|deletion started)/);
  });

  it('a command without a mapping says it is not available through kubectl yet (exit 2)', async () => {
    const r = await plugin(teamA, ['secret', 'ls']);
    expect(r.code).to.equal(2);
    expect(r.stderr).to.contain('`secret ls` is not available through kubectl agentplane yet');
    // Listings that are the aggregated API's Table work as for agents.
    const squads = await plugin(teamA, ['squad', 'ls']);
    expect(squads.code, squads.stderr).to.equal(0);
    expect(squads.stderr).to.contain('No squads found in namespace team-a.');
  });

  describe("credentials and RBAC are Kubernetes'", () => {
    before(async () => {
      // "runner" may do anything with agentplane.io objects in team-a; "nobody" has no Role at all.
      await cp.kubectl(['apply', '-f', '-'], {
        input: `apiVersion: v1
kind: ServiceAccount
metadata: {name: runner, namespace: team-a}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: nobody, namespace: team-a}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: agents-all, namespace: team-a}
rules:
- apiGroups: [agentplane.io]
  resources: [agents, agents/log, agents/events, agents/cancel, agents/messages]
  verbs: ["*"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: runner-runs-agents, namespace: team-a}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: agents-all}
subjects:
- {kind: ServiceAccount, name: runner, namespace: team-a}
`,
      });
    });

    it('a kubeconfig whose user is a bearer token runs and lists as the client-certificate one does', async () => {
      const token = (await kubectl('create', 'token', 'runner', '-n', 'team-a')).trim();
      const cfg = await kubeconfigFor('runner.kubeconfig', 'team-a', token);
      const r = await plugin(cfg, ['run', 'by-token', '@say ran with a bearer token']);
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stdout).to.contain('ran with a bearer token');
      const ls = await plugin(cfg, ['ls']);
      expect(ls.stdout).to.match(/^by-token\s+\S+\s+Complete\s/m);
      const logs = await plugin(cfg, ['logs', 'by-token']);
      expect(logs.stdout).to.contain('ran with a bearer token');
    });

    it("a user RBAC grants nothing gets Kubernetes' 403 as a clear message (exit 4)", async () => {
      const token = (await kubectl('create', 'token', 'nobody', '-n', 'team-a')).trim();
      const cfg = await kubeconfigFor('nobody.kubeconfig', 'team-a', token);
      const ls = await plugin(cfg, ['ls']);
      expect(ls.code).to.equal(4);
      expect(ls.stderr).to.match(
        /^error: agents\.agentplane\.io is forbidden: User "system:serviceaccount:team-a:nobody" cannot list resource "agents" in API group "agentplane\.io" in the namespace "team-a" \(Forbidden, HTTP 403\)$/m,
      );
      expect(ls.stderr).to.match(/^hint: Kubernetes RBAC does not allow this/m);
      const r = await plugin(cfg, ['run', 'sneaky', '@say no']);
      expect(r.code).to.equal(4);
      // run's first read (the agent's newest event) is what RBAC refuses first.
      expect(r.stderr).to.match(/forbidden: User "system:serviceaccount:team-a:nobody" cannot get resource "agents\/events"/);
    });
  });
});
