// Squad rules: defaults and validation. Membership rules that need other objects (the agent
// must exist, be asleep, be in no other squad) live in the squad service, which checks and
// writes under one lock.

import { type Cause } from '../../api/errors.js';
import { API_VERSION } from '../../api/meta.js';
import { DEFAULT_ORPHAN_TTL, memberName, memberShapeCauses, parseDuration, type Squad, SQUAD_KIND, squadSpecSchema } from '../../api/squad.js';
import { validateSchema } from '../../api/validation.js';
import { validateObjectName } from '../agent/strategy.js';
import type { Strategy } from '../strategy.js';

export const squadStrategy: Strategy<Squad> = {
  kind: SQUAD_KIND,
  finalized: false,

  prepareForCreate(s) {
    s.apiVersion = API_VERSION;
    s.kind = SQUAD_KIND;
    s.spec.orphanTTL ||= DEFAULT_ORPHAN_TTL;
    s.spec.breakUp ??= false;
    s.status = { phase: 'Pending' };
  },

  prepareForUpdate(s, old) {
    s.status = structuredClone(old.status);
  },

  validate(s) {
    const causes: Cause[] = [
      ...validateObjectName(s.metadata.name, s.metadata.namespace),
      ...validateSchema(squadSpecSchema, s.spec, 'spec'),
    ];
    if (s.spec.orphanTTL && causes.every((c) => c.field !== 'spec.orphanTTL') && parseDuration(s.spec.orphanTTL) <= 0) {
      causes.push({ field: 'spec.orphanTTL', message: 'must be longer than zero' });
    }
    const seen = new Set<string>();
    s.spec.members.forEach((m, i) => causes.push(...memberShapeCauses(m, `spec.members[${i}]`)));
    s.spec.members.forEach((m, i) => {
      const name = memberName(m);
      if (seen.has(name)) causes.push({ field: `spec.members[${i}]`, message: `agent "${name}" is listed twice` });
      seen.add(name);
    });
    return causes;
  },

  validateUpdate() {
    return [];
  },
};
