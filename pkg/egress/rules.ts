// What an agent's tools may reach through the egress proxy: the decision, apart from the
// sockets, so that it is tested on its own. An agent's rule comes from its template (`egress`,
// `egressAllow`); whatever the rule, only public addresses are reached, and never the agentplane
// server itself.

import type { EgressMode } from '../api/template-settings.js';
import type { AddressClass } from './addresses.js';

export type { EgressMode };

export interface EgressRule {
  /** `Open`: any public address. `Proxy`: only hosts on `allow` (still public addresses only). `None`: nothing. */
  mode: EgressMode;
  /**
   * With `Proxy`: host names as the tool asks for them, exactly (`api.github.com`) or any name
   * below a domain (`*.pypi.org`: `files.pypi.org`, not `pypi.org` itself); an IP literal only
   * when listed as written.
   */
  allow?: readonly string[];
}

const normalHost = (h: string): string =>
  h
    .toLowerCase()
    .replace(/\.$/, '')
    .replace(/^\[|\]$/g, '');

/** Why the rule refuses `host` by name (before any lookup); undefined when it may be tried. */
export function hostRefusal(rule: EgressRule, host: string): string | undefined {
  if (rule.mode === 'None') return 'egress is None for this agent: no connection is allowed';
  if (rule.mode === 'Open') return undefined;
  const h = normalHost(host);
  for (const entry of rule.allow ?? []) {
    const e = normalHost(entry);
    if (e.startsWith('*.') ? h.endsWith(e.slice(1)) && h.length > e.length - 1 : h === e) return undefined;
  }
  return `host "${host}" is not on this agent's egress allow-list (egressAllow)`;
}

/** Why a tool may not connect to an address of this class: everything but public is refused, whatever the rule. */
export function addressRefusal(cls: AddressClass, what: string): string | undefined {
  return cls === 'public' ? undefined : `${what} is a ${cls} address; tools reach public addresses only`;
}
