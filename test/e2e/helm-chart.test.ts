// charts/agentplane with the real helm and kubeconform (hack/build-tools.sh): helm lint --strict,
// every rendering validated against Kubernetes 1.34's schemas (generated from the local
// kube-apiserver, test/support/kube-schemas.ts), the values doing what docs/helm.md says, and no
// drift from manifests/: the default rendering equals `kubectl kustomize manifests/` object by
// object, but for the differences docs/helm.md lists.

import { join } from 'node:path';

import { expect } from 'chai';

import { REPO } from '../support/control-plane.js';
import { CHART, chartTools, controlPlaneBin, type K8sObject, parseAll, tool } from '../support/helm.js';
import { kubeSchemas } from '../support/kube-schemas.js';

const EVERYTHING = join(REPO, 'test/fixtures/helm/everything.yaml');
const NS = 'agentplane-system';
/** The labels Helm charts add by convention; manifests/ has only app.kubernetes.io/name. */
const HELM_LABELS = ['helm.sh/chart', 'app.kubernetes.io/instance', 'app.kubernetes.io/managed-by', 'app.kubernetes.io/version'];

describe('e2e: the Helm chart (charts/agentplane)', function () {
  this.timeout(120_000);
  let bin: string;
  let schemas: string;
  let kubectl: string;
  // The chart as it is: its dashboard and alert rules are part of it (charts/agentplane/dashboards).
  const chart = CHART;

  before(async function () {
    this.timeout(60 * 60_000); // a first run builds helm, kubeconform (and kube-apiserver)
    bin = await chartTools();
    schemas = await kubeSchemas();
    kubectl = join(await controlPlaneBin(), 'kubectl');
  });

  const helm = (args: string[], allowFail = false) => tool(join(bin, 'helm'), args, { allowFail });
  const template = async (args: string[], at = CHART) => parseAll((await helm(['template', 'agentplane', at, '-n', NS, ...args])).stdout);
  const one = (objs: K8sObject[], kind: string, name: string) => {
    const o = objs.find((x) => x.kind === kind && x.metadata.name === name);
    if (!o) throw new Error(`no ${kind}/${name} among ${objs.map((x) => `${x.kind}/${x.metadata.name}`).join(', ')}`);
    return o;
  };

  /** kubeconform -strict against the generated schemas; resolves with its summary. */
  async function conform(yaml: string): Promise<string> {
    const res = await tool(
      join(bin, 'kubeconform'),
      [
        '-strict',
        '-summary',
        '-output',
        'text',
        '-kubernetes-version',
        '1.34.4',
        '-schema-location',
        `${schemas}/{{ .ResourceKind }}{{ .KindSuffix }}.json`,
        '-',
      ],
      { input: yaml, allowFail: true },
    );
    expect(res.code, `${res.stdout}${res.stderr}`).to.equal(0);
    expect(res.stdout).to.match(/Skipped: 0$/m);
    return res.stdout;
  }

  it('passes helm lint --strict with the default values and with everything on', async () => {
    const plain = await helm(['lint', '--strict', CHART]);
    expect(plain.stdout).to.contain('1 chart(s) linted, 0 chart(s) failed');
    const all = await helm(['lint', '--strict', chart, '-f', EVERYTHING]);
    expect(all.stdout).to.contain('1 chart(s) linted, 0 chart(s) failed');
  });

  it('renders, with the default values and the CRDs, only objects valid against the Kubernetes 1.34 schemas', async () => {
    const out = (await helm(['template', 'agentplane', CHART, '-n', NS, '--include-crds'])).stdout;
    expect(await conform(out)).to.match(/Valid: 2\d, Invalid: 0, Errors: 0/);
    // And so does manifests/ itself (the drift test below compares the two).
    expect(await conform((await tool(kubectl, ['kustomize', join(REPO, 'manifests')])).stdout)).to.match(/Invalid: 0, Errors: 0/);
  });

  it('renders everything on (Redis, certificate, templates, warm pool, traces, ServiceMonitor, PrometheusRule, dashboard) validly', async () => {
    const yaml = (await helm(['template', 'agentplane', chart, '-n', NS, '-f', EVERYTHING])).stdout;
    await conform(yaml);
    const objs = parseAll(yaml);
    const deploy = one(objs, 'Deployment', 'agentplane');
    const c = deploy.spec.template.spec.containers[0];
    expect(deploy.spec.replicas).to.equal(3);
    expect(c.args).to.include.members(['--leader-elect-lease-duration=20s', '--no-metrics-auth', '--allowed-hosts=agentplane.example.com', '--max-workers=40']);
    const env = Object.fromEntries(c.env.map((e: { name: string }) => [e.name, e]));
    expect(env.AGENTPLANE_REDIS_URL.value).to.equal(`redis://agentplane-redis.${NS}.svc:6379`);
    expect(env.AGENTPLANE_REDIS_PASSWORD.valueFrom.secretKeyRef).to.deep.equal({ name: 'agentplane-redis', key: 'password', optional: false });
    expect(env.OTEL_EXPORTER_OTLP_ENDPOINT.value).to.equal('http://otel-collector.observability.svc:4318');
    expect(env.OTEL_EXPORTER_OTLP_PROTOCOL.value).to.equal('http/protobuf');
    expect(env.OTEL_TRACES_SAMPLER.value).to.equal('parentbased_traceidratio');
    expect(env.OTEL_TRACES_SAMPLER_ARG.value).to.equal('0.25');
    // The headers may hold a credential: from a Secret, never in the pod spec.
    expect(env.OTEL_EXPORTER_OTLP_HEADERS.valueFrom.secretKeyRef).to.deep.equal({ name: 'agentplane-otel', key: 'headers' });
    expect(JSON.stringify(deploy)).not.to.contain('not-a-secret');
    expect(one(objs, 'Secret', 'agentplane-otel').stringData.headers).to.equal('authorization=Bearer not-a-secret');
    expect(one(objs, 'StatefulSet', 'agentplane-redis').spec.persistentVolumeClaimRetentionPolicy.whenDeleted).to.equal('Delete');
    // The chart's certificate: its CA is the APIService's caBundle.
    const cert = one(objs, 'Secret', 'agentplane-serving-cert');
    expect(one(objs, 'APIService', 'v1alpha1.agentplane.io').spec.caBundle).to.equal(cert.data['ca.crt']);
    const gpu = one(objs, 'ConfigMap', 'agentplane-template-gpu');
    expect(gpu.metadata.labels!['agentplane.io/template']).to.equal('gpu');
    expect(parseAll(gpu.data['template.yaml'])[0]).to.deep.include({ warmPool: { size: 2, namespaces: ['team-a'], role: 'worker' } });
    const dflt = parseAll(one(objs, 'ConfigMap', 'agentplane-template-default').data['template.yaml'])[0];
    expect(dflt).to.deep.equal({ egress: 'Proxy', egressAllow: ['api.example.com', '*.pypi.org'] });
    expect(one(objs, 'NetworkPolicy', 'agentplane').spec.podSelector.matchLabels).to.deep.equal(deploy.spec.selector.matchLabels);
    const dash = one(objs, 'ConfigMap', 'agentplane-dashboard');
    expect(dash.metadata.labels!.grafana_dashboard).to.equal('1');
    expect(JSON.parse(dash.data['agentplane.json'])).to.have.property('panels');
    const rule = one(objs, 'PrometheusRule', 'agentplane');
    expect(rule.spec.groups).to.be.an('array').with.length.greaterThan(0);
    expect(one(objs, 'ServiceMonitor', 'agentplane').spec.endpoints[0]).to.deep.include({
      port: 'https',
      scheme: 'https',
      path: '/metrics',
      honorLabels: true,
    });
  });

  it('renders the ServiceMonitor and PrometheusRule on auto only when the cluster serves monitoring.coreos.com/v1', async () => {
    const kinds = (objs: K8sObject[]) => objs.map((o) => o.kind);
    expect(kinds(await template([], chart))).not.to.include.members(['ServiceMonitor']);
    expect(kinds(await template([], chart))).not.to.include('PrometheusRule');
    const withCrds = kinds(await template(['--api-versions', 'monitoring.coreos.com/v1'], chart));
    expect(withCrds).to.include.members(['ServiceMonitor', 'PrometheusRule']);
    expect(kinds(await template(['--api-versions', 'monitoring.coreos.com/v1', '--set', 'serviceMonitor.enabled=false'], chart))).not.to.include(
      'ServiceMonitor',
    );
  });

  it('runs one replica with SQLite on a volume, and refuses SQLite with several replicas and OIDC in Kubernetes mode', async () => {
    const yaml = (await helm(['template', 'agentplane', CHART, '-n', NS, '--set', 'eventStore.type=sqlite', '--set', 'replicas=1'])).stdout;
    await conform(yaml);
    const objs = parseAll(yaml);
    const deploy = one(objs, 'Deployment', 'agentplane');
    expect(deploy.spec.strategy.type).to.equal('Recreate');
    expect(deploy.spec.template.spec.containers[0].args).to.include('--plugins=event-store-sqlite,sleep-wake,credential-mirror');
    expect(deploy.spec.template.spec.volumes.find((v: { name: string }) => v.name === 'data').persistentVolumeClaim.claimName).to.equal('agentplane-data');
    expect(objs.map((o) => o.kind)).not.to.include('PodDisruptionBudget');
    const several = await helm(['template', 'x', CHART, '--set', 'eventStore.type=sqlite'], true);
    expect(several.code).to.not.equal(0);
    expect(several.stderr).to.contain('set replicas=1');
    const oidc = await helm(['template', 'x', CHART, '--set', 'auth.oidc.issuerUrl=https://sso.example.com'], true);
    expect(oidc.code).to.not.equal(0);
    expect(oidc.stderr).to.contain('configure OIDC on kube-apiserver');
  });

  it('does not drift from manifests/: the same objects, field by field, but for the documented differences', async () => {
    const chartObjs = await template(['--include-crds']);
    const kustomized = parseAll((await tool(kubectl, ['kustomize', join(REPO, 'manifests')])).stdout);
    const key = (o: K8sObject) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
    // Difference 1: the namespace is Helm's (-n, --create-namespace), not an object of the chart.
    const fromKustomize = new Map(kustomized.filter((o) => o.kind !== 'Namespace').map((o) => [key(o), o]));
    const fromChart = new Map(chartObjs.map((o) => [key(o), normalize(o)]));
    expect([...fromChart.keys()].sort()).to.deep.equal([...fromKustomize.keys()].sort());
    for (const [k, o] of fromKustomize) expect(fromChart.get(k), k).to.deep.equal(o);
  });

  /** The chart's object without what docs/helm.md lists as the chart's own: Helm's labels. */
  function normalize(o: K8sObject): K8sObject {
    const copy = structuredClone(o);
    for (const l of HELM_LABELS) delete copy.metadata.labels?.[l];
    return copy;
  }
});
