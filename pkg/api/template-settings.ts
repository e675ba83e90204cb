// What a template says besides where a pod runs: settings both homes apply to the agents that
// name it. In the embedded home a template is a name in the server's configuration, optionally
// with these settings (config file "templates"); in the cluster home they are fields of the
// template ConfigMap's `template.yaml` (docs/kubernetes-runtime.md "Templates").

import { TEMPLATE_NAME_MAX_LENGTH, TEMPLATE_NAME_PATTERN, TEMPLATE_NAME_RULE } from './agent.js';

export interface TemplateSettings {
  /**
   * How long after a task began the model proxy still retries a failed model request; default
   * the server's `--model-task-deadline` (docs/security.md "Model proxy").
   */
  modelTaskDeadlineSeconds?: number;
  /**
   * Where the agents' tools may connect through the egress proxy (docs/security.md "Tool
   * egress"): `Open` (default) any public address, `Proxy` only the hosts of `egressAllow`,
   * `None` nothing.
   */
  egress?: EgressMode;
  /** With `egress: Proxy`: host names (`api.github.com`), `*.<domain>` (`*.pypi.org`) or IP addresses. */
  egressAllow?: string[];
}

export type EgressMode = 'Open' | 'Proxy' | 'None';
export const EGRESS_MODES: readonly EgressMode[] = ['Open', 'Proxy', 'None'];

/** An `egressAllow` entry: a host name, `*.` and a domain, or an IP address. */
const HOST_PATTERN = /^(\*\.)?[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$/;
const IP_PATTERN = /^(\d{1,3}(\.\d{1,3}){3}|\[?[0-9a-f:.]*:[0-9a-f:.]*\]?)$/;

/** What is wrong with an `egressAllow` entry, or undefined when it is one. */
export function allowEntryProblem(v: unknown): string | undefined {
  if (typeof v !== 'string' || v.length === 0 || v.length > 253) return `must be a host name, "*.<domain>" or an IP address, got ${JSON.stringify(v)}`;
  return HOST_PATTERN.test(v) || IP_PATTERN.test(v) ? undefined : `must be a lowercase host name, "*.<domain>" or an IP address, got ${JSON.stringify(v)}`;
}

/** What is wrong with a template's egress settings, or undefined. */
function egressProblem(s: Record<string, unknown>): string | undefined {
  if (s.egress !== undefined && !(EGRESS_MODES as readonly unknown[]).includes(s.egress)) return `egress must be one of ${EGRESS_MODES.join(', ')}, got ${JSON.stringify(s.egress)}`;
  if (s.egressAllow === undefined) return undefined;
  if (!Array.isArray(s.egressAllow)) return 'egressAllow must be an array of host names';
  if (s.egress !== 'Proxy') return 'egressAllow needs egress: Proxy';
  for (const [i, e] of s.egressAllow.entries()) {
    const problem = allowEntryProblem(e);
    if (problem) return `egressAllow[${i}] ${problem}`;
  }
  return undefined;
}

/** An embedded-home template: its name and settings (a bare name in the config is `{name}`). */
export interface TemplateConfig extends TemplateSettings {
  name: string;
}

export const TEMPLATE_SETTINGS = ['modelTaskDeadlineSeconds', 'egress', 'egressAllow'] as const;

/** What is wrong with a deadline in seconds, or undefined when it is one. */
export function deadlineSecondsProblem(v: unknown): string | undefined {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? undefined : `must be a positive number of seconds, got ${JSON.stringify(v)}`;
}

/** A configured template (a name or `{name, ...settings}`), or what is wrong with it. */
export function templateConfig(v: unknown): TemplateConfig | string {
  const t = typeof v === 'string' ? { name: v } : v;
  if (typeof t !== 'object' || t === null || Array.isArray(t)) return `template ${JSON.stringify(v)}: must be a name or {"name", ${TEMPLATE_SETTINGS.map((s) => `"${s}"`).join(', ')}}`;
  const { name, ...settings } = t as Record<string, unknown>;
  if (typeof name !== 'string' || name.length > TEMPLATE_NAME_MAX_LENGTH || !new RegExp(TEMPLATE_NAME_PATTERN).test(name)) {
    return `template ${JSON.stringify(name ?? v)}: must be ${TEMPLATE_NAME_RULE}`;
  }
  const unknown = Object.keys(settings).filter((k) => !(TEMPLATE_SETTINGS as readonly string[]).includes(k));
  if (unknown.length) return `template "${name}": unknown field(s) ${unknown.join(', ')}; known: name, ${TEMPLATE_SETTINGS.join(', ')}`;
  if (settings.modelTaskDeadlineSeconds !== undefined) {
    const problem = deadlineSecondsProblem(settings.modelTaskDeadlineSeconds);
    if (problem) return `template "${name}": modelTaskDeadlineSeconds ${problem}`;
  }
  const egress = egressProblem(settings);
  if (egress) return `template "${name}": ${egress}`;
  return { name, ...(settings as TemplateSettings) };
}

/** Every configured template, or an Error naming the first that is wrong. */
export function templateConfigs(list: readonly unknown[]): TemplateConfig[] {
  return list.map((v) => {
    const t = templateConfig(v);
    if (typeof t === 'string') throw new Error(t);
    return t;
  });
}
