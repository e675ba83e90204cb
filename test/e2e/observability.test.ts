// The Grafana dashboard and alert rules of charts/agentplane/dashboards against the real tools:
// promtool checks the rules and parses every panel query; a running `--demo` server, after tasks
// with a tool call (a create, then a wake after the idle timeout), exports every metric they name;
// a real Prometheus scrapes it, and every panel query (template variables substituted) returns
// data through Prometheus' HTTP API, while every alert rule evaluates without error.

import { expect } from 'chai';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { ALERTS_FILE, alertRules, dashboard, exposedNames, metricNames, panelQueries, recordingRulesOf, substitute } from '../support/dashboards.js';
import { eventually } from '../support/harness.js';
import { Prometheus, prometheusBin, promtool } from '../support/prometheus.js';

const MAIN = fileURLToPath(new URL('../../cmd/agentplane/main.js', import.meta.url));
/** What Grafana would send with namespace "default" chosen and a 5-minute rate window. */
const VARS = { namespace: 'default', rateInterval: '5m' };
const JSON_CT = { 'content-type': 'application/json' };

/** `agentplane serve --demo` on a free port; its URL from the "serving" log line. */
async function startDemo(dataDir: string): Promise<{ child: ChildProcess; url: string; lines: string[] }> {
  const child = spawn(process.execPath, [MAIN, 'serve', '--demo', '--port', '0', '--data-dir', dataDir, '--idle-timeout', '2'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  for (const s of [child.stdout, child.stderr]) s.on('data', (c: Buffer) => lines.push(...String(c).split('\n').filter(Boolean)));
  const url = await eventually(
    async () => {
      if (child.exitCode !== null) throw new Error(`agentplane exited:\n${lines.slice(-20).join('\n')}`);
      for (const l of lines) {
        const m = /"msg":"agentplane is serving".*"url":"([^"]+)"|"url":"([^"]+)".*"msg":"agentplane is serving"/.exec(l);
        if (m) return m[1] ?? m[2];
      }
      return undefined;
    },
    60_000,
    'agentplane serving',
  );
  return { child, url, lines };
}

/** Creates or re-tasks the agent and waits for the task's end, its answer `answer`. */
async function runTask(url: string, name: string, instructions: string, answer: string): Promise<string> {
  const r = await fetch(`${url}/api/v1/agents`, { method: 'POST', headers: JSON_CT, body: JSON.stringify({ name, namespace: 'default', instructions }) });
  expect([200, 201], await r.text()).to.include(r.status);
  const done = await eventually(
    async () => {
      const a = (await (await fetch(`${url}/api/v1/agents/${name}`)).json()) as { taskStatus: string; lastTaskMessage: string };
      return a.taskStatus !== 'InProgress' && a.lastTaskMessage === answer && a;
    },
    180_000,
    `the task answering "${answer}"`,
  );
  return done.taskStatus;
}

const released = async (url: string): Promise<boolean> => /^agentplane_workers_released_total [1-9]/m.test(await (await fetch(`${url}/metrics`)).text());

describe('Grafana dashboard and alerts (promtool, a real Prometheus, a --demo server)', function () {
  this.timeout(10 * 60_000);
  let bin: string;

  before(function () {
    this.timeout(40 * 60_000); // a cold build of Prometheus; cached after
    bin = prometheusBin();
  });

  it('the alert rules pass promtool check rules, each with for:, a severity and its runbook', async () => {
    const r = await promtool(bin, ['check', 'rules', ALERTS_FILE]);
    expect(r.code, r.output).to.equal(0);
    const rules = alertRules();
    expect(r.output).to.contain(`SUCCESS: ${rules.length} rules found`);
    for (const rule of rules) {
      expect(rule.for, rule.alert).to.match(/^\d+[smh]$/);
      expect(rule.labels?.severity, rule.alert).to.be.oneOf(['warning', 'critical']);
      expect(rule.annotations?.summary, rule.alert).to.be.a('string');
      expect(rule.annotations?.description, rule.alert).to.contain(`docs/observability.md#${rule.alert.toLowerCase()}`);
    }
  });

  it('every panel query parses (promtool, as recording rules), and the dashboard uses its two variables', async () => {
    const d = dashboard();
    expect(d.templating.list.map((v) => `${v.name}:${v.type}`)).to.deep.equal(['datasource:datasource', 'namespace:query']);
    for (const p of d.panels.filter((x) => x.type !== 'row')) expect(p.datasource?.uid, p.title).to.equal('${datasource}');
    const queries = panelQueries(d);
    expect(queries.length).to.be.greaterThan(15);
    const dir = mkdtempSync(join(tmpdir(), 'agentplane-panels-'));
    try {
      const file = join(dir, 'panels.yaml');
      writeFileSync(file, recordingRulesOf(queries.map((q) => ({ expr: substitute(q.expr, VARS) }))));
      const r = await promtool(bin, ['check', 'rules', file]);
      expect(r.code, r.output).to.equal(0);
      expect(r.output).to.contain(`SUCCESS: ${queries.length} rules found`);
      // The check does parse: a broken query fails it.
      writeFileSync(file, recordingRulesOf([{ expr: 'sum by (le) (rate(agentplane_tasks_total[5m])' }]));
      expect((await promtool(bin, ['check', 'rules', file])).code).to.not.equal(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  describe('against a running --demo server scraped by Prometheus', () => {
    let dataDir: string;
    let server: Awaited<ReturnType<typeof startDemo>> | undefined;
    let prom: Prometheus | undefined;

    before(async function () {
      this.timeout(5 * 60_000);
      dataDir = mkdtempSync(join(tmpdir(), 'agentplane-observed-'));
      server = await startDemo(dataDir);
      const target = new URL(server.url).host;
      prom = await Prometheus.start(bin, [target], [ALERTS_FILE]);
      await eventually(async () => (await prom!.targets()).some((t) => t.health === 'up'), 30_000, 'target up');
      // A create (first worker) with a tool call; then, once the idle timeout released the worker,
      // a wake: each reaches the model, so both starts are timed.
      expect(await runTask(server.url, 'observed', '@bash echo observed\n@say done', 'done')).to.equal('Complete');
      await eventually(async () => (await released(server!.url)) || undefined, 60_000, 'worker released after the idle timeout');
      expect(await runTask(server.url, 'observed', '@bash echo again\n@say done again', 'done again')).to.equal('Complete');
      // Three more scrapes, and a rule evaluation after them.
      await new Promise((r) => setTimeout(r, 4_000));
    });

    after(async () => {
      await prom?.stop();
      if (server && server.child.exitCode === null) {
        const gone = new Promise((r) => server!.child.once('exit', r));
        server.child.kill('SIGINT');
        await gone;
      }
      rmSync(dataDir, { recursive: true, force: true });
    });

    it('exports every metric a panel or an alert names', async () => {
      const exposed = exposedNames(await (await fetch(`${server!.url}/metrics`)).text());
      const used = [...panelQueries(), ...alertRules()].flatMap((q) => metricNames(q.expr));
      expect(used.length).to.be.greaterThan(20);
      const missing = [...new Set(used)].filter((n) => !exposed.has(n));
      expect(missing, 'used by the dashboard or alerts but not in /metrics').to.deep.equal([]);
    });

    it('returns data for every panel query through the Prometheus HTTP API', async () => {
      const empty: string[] = [];
      for (const q of panelQueries()) {
        const r = await prom!.query(substitute(q.expr, VARS));
        expect(r.status, `${q.panel} ${q.refId}: ${r.error}`).to.equal('success');
        const values = (r.data?.result ?? []).map((s) => Number(s.value[1]));
        // Data: at least one series with a number (not NaN, which an empty rate window gives).
        if (!values.some((v) => Number.isFinite(v))) empty.push(`${q.panel} ${q.refId}: ${JSON.stringify(r.data?.result)}`);
      }
      expect(empty, 'panel queries without data').to.deep.equal([]);
    });

    it('the per-namespace panels see the namespace the tasks ran in', async () => {
      const tokens = await prom!.query(substitute('sum by (namespace) (agentplane_model_tokens_total{namespace=~"$namespace"})', VARS));
      expect(tokens.data?.result.map((s) => s.metric.namespace)).to.deep.equal(['default']);
      const cost = await prom!.query('sum by (namespace) (agentplane_namespace_cost_usd_total)');
      expect(cost.data?.result.map((s) => s.metric.namespace)).to.deep.equal(['default']);
      expect(Number(cost.data?.result[0]?.value[1])).to.be.greaterThan(0);
      const starts = await prom!.query('sum by (start) (agentplane_agent_first_model_request_seconds_count)');
      expect(Object.fromEntries(starts.data!.result.map((s) => [s.metric.start, Number(s.value[1])]))).to.deep.equal({ create: 1, wake: 1 });
    });

    it('every alert rule evaluates without error against the scraped data', async () => {
      for (const rule of alertRules()) {
        const r = await prom!.query(rule.expr);
        expect(r.status, `${rule.alert}: ${r.error}`).to.equal('success');
      }
      const loaded = await eventually(
        async () => {
          const rules = await prom!.rules();
          return rules.length && rules.every((x) => x.lastEvaluation > '2000') ? rules : undefined;
        },
        20_000,
        'every rule evaluated',
      );
      expect(loaded.map((x) => x.name).sort()).to.deep.equal(
        alertRules()
          .map((x) => x.alert)
          .sort(),
      );
      expect(loaded.filter((x) => x.health !== 'ok').map((x) => `${x.name}: ${x.lastError}`)).to.deep.equal([]);
    });
  });
});
