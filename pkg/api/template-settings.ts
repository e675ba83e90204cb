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
   * Where the agent's tools may connect (default `Open`): `Open` public addresses, `Proxy` only
   * the hosts of `egressAllow` through agentplane's egress proxy, `None` nowhere but agentplane
   * (docs/security.md "Agent egress").
   */
  egress?: EgressMode;
  /** With `Proxy`: the hosts tools may reach, exact names or `*.suffix`. */
  egressAllow?: string[];
}

export const EGRESS_MODES = ['Open', 'Proxy', 'None'] as const;
export type EgressMode = (typeof EGRESS_MODES)[number];
export const DEFAULT_EGRESS: EgressMode = 'Open';
/** At most this many host patterns in one allow-list. */
export const EGRESS_ALLOW_MAX = 256;

/** An agent's effective egress: its template's mode, and for `Proxy` the hosts allowed (else empty). */
export interface EgressPolicy {
  mode: EgressMode;
  allow: string[];
}

/** The effective egress of a template's settings (absent: `Open`, nothing listed). */
export function egressPolicy(s: TemplateSettings | undefined): EgressPolicy {
  const mode = s?.egress ?? DEFAULT_EGRESS;
  return { mode, allow: mode === 'Proxy' ? [...(s?.egressAllow ?? [])] : [] };
}

const HOST_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** What is wrong with an egress mode, or undefined when it is one. */
export function egressModeProblem(v: unknown): string | undefined {
  return typeof v === 'string' && (EGRESS_MODES as readonly string[]).includes(v)
    ? undefined
    : `must be one of ${EGRESS_MODES.join(', ')}, got ${JSON.stringify(v)}`;
}

/**
 * The allow-list as stored (lower case, duplicates dropped), or what is wrong with it: a list of
 * host names (`api.example.com`) or suffix patterns (`*.example.com`, any name under it).
 */
export function egressAllowList(v: unknown): string[] | string {
  if (!Array.isArray(v)) return `must be a list of host names or *.suffix patterns, got ${JSON.stringify(v)}`;
  if (v.length > EGRESS_ALLOW_MAX) return `has ${v.length} entries; at most ${EGRESS_ALLOW_MAX}`;
  const out: string[] = [];
  for (const [i, x] of v.entries()) {
    const problem = hostPatternProblem(x);
    if (problem) return `[${i}] ${problem}`;
    const h = (x as string).toLowerCase();
    if (!out.includes(h)) out.push(h);
  }
  return out;
}

function hostPatternProblem(x: unknown): string | undefined {
  const bad = `must be a host name (api.example.com) or *.suffix (*.example.com), got ${JSON.stringify(x)}`;
  if (typeof x !== 'string') return bad;
  const name = (x.startsWith('*.') ? x.slice(2) : x).toLowerCase();
  if (!name || name.length > 253 || !name.split('.').every((l) => HOST_LABEL.test(l))) return bad;
  return undefined;
}

/**
 * Checks the egress fields of a template after its own fields are laid over what it inherits:
 * `egressAllow` only goes with `Proxy`. Returns the settings to store, or the field and problem.
 */
export function egressSettings(
  mode: unknown,
  allow: unknown,
): { egress?: EgressMode; egressAllow?: string[] } | { field: 'egress' | 'egressAllow'; message: string } {
  if (mode !== undefined) {
    const problem = egressModeProblem(mode);
    if (problem) return { field: 'egress', message: problem };
  }
  if (allow === undefined) return mode === undefined ? {} : { egress: mode as EgressMode };
  const list = egressAllowList(allow);
  if (typeof list === 'string') return { field: 'egressAllow', message: list };
  if (mode !== 'Proxy')
    return { field: 'egressAllow', message: `applies only with egress: Proxy (egress is ${(mode as EgressMode | undefined) ?? DEFAULT_EGRESS})` };
  return { egress: mode, egressAllow: list };
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
  if (typeof t !== 'object' || t === null || Array.isArray(t))
    return `template ${JSON.stringify(v)}: must be a name or {"name", ${TEMPLATE_SETTINGS.map((s) => `"${s}"`).join(', ')}}`;
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
  const egress = egressSettings(settings.egress, settings.egressAllow);
  if ('field' in egress) return `template "${name}": ${egress.field} ${egress.message}`;
  const out: TemplateConfig = { name, ...egress };
  if (settings.modelTaskDeadlineSeconds !== undefined) out.modelTaskDeadlineSeconds = settings.modelTaskDeadlineSeconds as number;
  return out;
}

/** Every configured template, or an Error naming the first that is wrong. */
export function templateConfigs(list: readonly unknown[]): TemplateConfig[] {
  return list.map((v) => {
    const t = templateConfig(v);
    if (typeof t === 'string') throw new Error(t);
    return t;
  });
}
