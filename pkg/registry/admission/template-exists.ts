// An agent names a pod template that exists. The known ones come from the runtime: in the
// embedded home "default" and those the server is configured with (`templates` in the config
// file, or --templates); in the cluster home "default" and the template ConfigMaps of the
// install namespace (docs/kubernetes-runtime.md "Templates"). Checked when an agent is created, when an update changes its `templateRef` (an
// agent whose template was dropped from the configuration keeps working until that is edited),
// and for the new agents a squad embeds, before the squad is stored (the squad controller creates
// them later, and must not meet a refusal then). The name's shape (a DNS-1123 name) is the agent
// schema's rule; this one is only existence.

import { AGENT_KIND, type Agent, DEFAULT_TEMPLATE } from '../../api/agent.js';
import { type Cause, invalid } from '../../api/errors.js';
import { memberName, type Squad, SQUAD_KIND } from '../../api/squad.js';
import type { AdmissionPlugin, Attributes } from './admission.js';

export function templateExists(configured: readonly string[] | (() => readonly string[]) = []): AdmissionPlugin {
  const known = (): string[] => [...new Set([DEFAULT_TEMPLATE, ...(typeof configured === 'function' ? configured() : configured)])];
  const unknown = (ref: string | undefined, field: string): Cause[] => {
    const names = known();
    if (ref === undefined || names.includes(ref)) return [];
    return [{ field, message: `template "${ref}" not found; known templates: ${names.map((t) => `"${t}"`).join(', ')}` }];
  };

  const validateAgent = (a: Attributes): void => {
    const ref = (a.object as Agent).spec.templateRef;
    const old = a.oldObject as Agent | undefined;
    if (old && old.spec.templateRef === ref) return;
    const causes = unknown(ref, 'spec.templateRef');
    if (causes.length) throw invalid(AGENT_KIND, a.name, causes);
  };

  const validateSquad = (a: Attributes): void => {
    const before = new Set((a.oldObject as Squad | undefined)?.spec.members.map(memberName) ?? []);
    for (const m of (a.object as Squad).spec.members) {
      if (!('spec' in m) || before.has(m.name)) continue;
      // As the squad membership rule names an embedded member's fields: the agent's own.
      const causes = unknown(m.spec.templateRef, 'templateRef');
      if (causes.length) throw invalid(AGENT_KIND, m.name, causes);
    }
  };

  return {
    name: 'TemplateExists',
    kinds: [AGENT_KIND, SQUAD_KIND],
    operations: ['CREATE', 'UPDATE'],
    validate(a: Attributes) {
      if (a.kind === AGENT_KIND) validateAgent(a);
      else validateSquad(a);
    },
  };
}
