// Server-side apply with kube-apiserver as the oracle: the same sequences of writes go to an
// Agent (agentplane registered as an aggregated API, cluster home) and to an object of a CRD with
// the Agent's schema on the same control plane; the response codes, conflicts, objects and
// managedFields must match after every step. The oracle's outcomes are the fixture the embedded
// home is held to (test/integration/server-side-apply.test.ts); AGENTPLANE_RECORD_SSA_FIXTURE=1
// rewrites it from this run.

import { execFile } from 'node:child_process';
import https from 'node:https';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import { type ControlPlane, controlPlaneUp, REPO } from '../support/control-plane.js';
import {
  createConnectors,
  FIXTURE,
  GROUP,
  NAMESPACE,
  oracleCrd,
  ORACLE_GROUP,
  type Outcome,
  OWNERS,
  type Reply,
  runSequence,
  type Send,
  SEQUENCES,
} from '../support/ssa-differential.js';

const run = promisify(execFile);

describe('server-side apply against kube-apiserver as the oracle (e2e)', function () {
  this.timeout(120_000);
  let cp: ControlPlane;
  let send: Send;
  const oracle: Record<string, Outcome[]> = {};
  const uids: Record<string, string> = {};

  before(async function () {
    this.timeout(45 * 60_000); // a cold machine builds kube-apiserver first
    cp = await controlPlaneUp();
    const env = { ...process.env, AGENTPLANE_CP_DIR: cp.dir };
    await run('bash', [join(REPO, 'hack/control-plane.sh'), 'register'], { env, timeout: 5 * 60_000 });
    const kc = new KubeConfig();
    kc.loadFromFile(cp.kubeconfig);
    const server = new URL(kc.getCurrentCluster()!.server);
    send = async (method, path, headers, body) => {
      const opts: https.RequestOptions = { host: server.hostname, port: server.port, method, path, headers: { accept: 'application/json', ...headers } };
      await kc.applyToHTTPSOptions(opts);
      return new Promise<Reply>((resolve, reject) => {
        const req = https.request(opts, (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () => {
            let parsed: unknown = text;
            try {
              parsed = JSON.parse(text);
            } catch {
              // not JSON: kept as text, the comparison shows it
            }
            resolve({ status: res.statusCode!, body: parsed });
          });
        });
        req.on('error', reject);
        req.end(body);
      });
    };
    await cp.kubectl(['create', 'namespace', NAMESPACE]);
    await cp.kubectl(['apply', '-f', '-'], { input: JSON.stringify(oracleCrd()) });
    await cp.kubectl(['wait', '--for=condition=Established', `crd/agents.${ORACLE_GROUP}`, '--timeout=60s']);
    await createConnectors(send);
    // Real owners, so the garbage collector keeps the objects that name them.
    for (const name of OWNERS) {
      await cp.kubectl(['create', 'configmap', name, '-n', NAMESPACE]);
      uids[name] = (await cp.kubectl(['get', 'configmap', name, '-n', NAMESPACE, '-o', 'jsonpath={.metadata.uid}'])).stdout.trim();
    }
  });

  after(async () => {
    if (process.env.AGENTPLANE_RECORD_SSA_FIXTURE === '1' && Object.keys(oracle).length === SEQUENCES.length) {
      writeFileSync(
        join(REPO, FIXTURE),
        `${JSON.stringify({ recordedFrom: 'kube-apiserver (test/e2e/server-side-apply.test.ts)', sequences: oracle }, null, 2)}\n`,
      );
    }
    await cp?.down();
  });

  it('kubectl apply --server-side: a second manager gets the conflict, --force-conflicts takes the field', async () => {
    const yaml = (model: string): string =>
      `apiVersion: agentplane.io/v1alpha1\nkind: Agent\nmetadata: {name: kubectl-ssa, namespace: ${NAMESPACE}}\n` +
      `spec: {instructions: compare fields, lifecycle: Sleep, task: 0, model: ${model}}\n`;
    const apply = (manager: string, model: string, ...more: string[]) =>
      cp.kubectl(['apply', '--server-side', `--field-manager=${manager}`, ...more, '-f', '-'], { input: yaml(model), allowFail: true });
    expect((await apply('first', 'm-1')).code).to.equal(0);
    const refused = await apply('second', 'm-2');
    expect(refused.code).to.not.equal(0);
    expect(refused.stderr).to.contain('conflict with "first"').and.to.contain('.spec.model');
    expect((await apply('second', 'm-2', '--force-conflicts')).code).to.equal(0);
    const got = JSON.parse((await cp.kubectl(['get', 'agent', 'kubectl-ssa', '-n', NAMESPACE, '-o', 'json', '--show-managed-fields'])).stdout);
    expect(got.spec.model).to.equal('m-2');
    expect(got.metadata.managedFields.find((e: { manager: string }) => e.manager === 'second')?.fieldsV1).to.deep.equal({
      'f:spec': { 'f:instructions': {}, 'f:lifecycle': {}, 'f:model': {}, 'f:task': {} },
    });
    expect(got.metadata.managedFields.find((e: { manager: string }) => e.manager === 'first')?.fieldsV1).to.deep.equal({
      'f:spec': { 'f:instructions': {}, 'f:lifecycle': {}, 'f:task': {} },
    });
  });

  for (const seq of SEQUENCES) {
    it(`${seq.name}: the Agent behaves as the CRD object, step by step`, async () => {
      const expected = await runSequence(seq, send, ORACLE_GROUP, uids);
      const actual = await runSequence(seq, send, GROUP, uids);
      oracle[seq.name] = expected;
      expected.forEach((e, i) => expect(actual[i], `step "${e.step}"`).to.deep.equal(e));
      // The fixture the embedded home is held to is what the oracle does today.
      if (process.env.AGENTPLANE_RECORD_SSA_FIXTURE !== '1') {
        const fixture = JSON.parse(readFileSync(join(REPO, FIXTURE), 'utf8')) as { sequences: Record<string, Outcome[]> };
        expect(fixture.sequences[seq.name], `${FIXTURE} is current (AGENTPLANE_RECORD_SSA_FIXTURE=1 rewrites it)`).to.deep.equal(expected);
      }
    });
  }
});
