// charts/agentplane/dashboards as the observability tests read them: every PromQL expression of
// the Grafana dashboard (with its template variables substituted) and of the alert rules, and
// the metric names they use.

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

export const DASHBOARDS_DIR = fileURLToPath(new URL('../../../charts/agentplane/dashboards/', import.meta.url));
export const DASHBOARD_FILE = `${DASHBOARDS_DIR}agentplane.json`;
export const ALERTS_FILE = `${DASHBOARDS_DIR}alerts.yaml`;

interface Target {
  refId: string;
  expr: string;
}
interface Panel {
  id: number;
  type: string;
  title: string;
  datasource?: { uid?: string };
  targets?: (Target & { datasource?: { uid?: string } })[];
}
export interface Dashboard {
  panels: Panel[];
  templating: { list: { name: string; type: string }[] };
}
export interface PanelQuery {
  panel: string;
  refId: string;
  expr: string;
}
export interface AlertRule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export const dashboard = (): Dashboard => JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8')) as Dashboard;

/** What Grafana would send: `$namespace` as the value chosen, `$__rate_interval` as a window. */
export function substitute(expr: string, vars: { namespace: string; rateInterval: string }): string {
  return expr.replaceAll('$__rate_interval', vars.rateInterval).replaceAll('$namespace', vars.namespace);
}

/** Every query of every panel (rows hold none), as written in the dashboard. */
export function panelQueries(d: Dashboard = dashboard()): PanelQuery[] {
  return d.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, refId: t.refId, expr: t.expr })));
}

export function alertRules(): AlertRule[] {
  const doc = parse(readFileSync(ALERTS_FILE, 'utf8')) as { groups: { rules: AlertRule[] }[] };
  return doc.groups.flatMap((g) => g.rules);
}

/** The agentplane_* sample names an expression reads (a histogram's as its _bucket, _count, _sum). */
export function metricNames(expr: string): string[] {
  return [...new Set(expr.match(/\bagentplane_[a-z0-9_]+/g) ?? [])];
}

/** The sample names of a Prometheus text exposition (what a scrape of /metrics stores). */
export function exposedNames(text: string): Set<string> {
  return new Set(
    text
      .split('\n')
      .filter((l) => l && !l.startsWith('#'))
      .map((l) => /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(l)![0]),
  );
}

/** A rules file with one recording rule per query: `promtool check rules` then parses them all. */
export function recordingRulesOf(queries: { expr: string }[]): string {
  const rules = queries.map((q, i) => ({ record: `agentplane:dashboard_query:${i}`, expr: q.expr }));
  return JSON.stringify({ groups: [{ name: 'dashboard-queries', rules }] }, null, 2);
}
