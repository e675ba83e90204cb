// Squad rules: defaults and validation. Membership rules that need other objects (the agent
// must exist, be asleep, be in no other squad) live in the squad service, which checks and
// writes under one lock.

import { type Cause } from '../../api/errors.js';
import { API_VERSION } from '../../api/meta.js';
import { DEFAULT_ORPHAN_TTL, memberName, memberShapeCauses, parseDuration, type Squad, SQUAD_KIND, squadSpecSchema } from '../../api/squad.js';
import { validateSchema } from '../../api/validation.js';
import { validateObjectName } from '../agent/strategy.js';
import type { Strategy } from '../strategy.js';
import { age, ageColumn, column, nameColumn, objectMetaFields } from '../table.js';

export const squadStrategy: Strategy<Squad> = {
  kind: SQUAD_KIND,
  specSchema: squadSpecSchema,

  prepareForCreate(s) {
    s.apiVersion = API_VERSION;
    s.kind = SQUAD_KIND;
    defaultSpec(s);
    s.status = { phase: 'Pending' };
  },

  prepareForUpdate(s, old) {
    s.status = structuredClone(old.status);
    defaultSpec(s);
  },

  validate(s) {
    const causes: Cause[] = [...validateObjectName(s.metadata.name, s.metadata.namespace), ...validateSchema(squadSpecSchema, s.spec, 'spec')];
    if (s.spec.orphanTTL && causes.every((c) => c.field !== 'spec.orphanTTL') && parseDuration(s.spec.orphanTTL) <= 0) {
      causes.push({ field: 'spec.orphanTTL', message: 'must be longer than zero' });
    }
    const seen = new Set<string>();
    // Missing or not a list: the schema's cause above says so.
    const members = Array.isArray(s.spec.members) ? s.spec.members : [];
    members.forEach((m, i) => causes.push(...memberShapeCauses(m, `spec.members[${i}]`, s.metadata.namespace)));
    members.forEach((m, i) => {
      const name = memberName(m);
      if (seen.has(name)) causes.push({ field: `spec.members[${i}]`, message: `agent "${name}" is listed twice` });
      seen.add(name);
    });
    return causes;
  },

  validateUpdate() {
    return [];
  },

  table: {
    columns: [
      nameColumn,
      column('Phase', 'Pending, Running, Sleeping or Orphaned.'),
      column('Members', 'Number of member agents.', 0, 'integer'),
      ageColumn,
      column('Agents', 'Names of the member agents.', 1),
      column('Break Up', 'Marked for dissolution.', 1, 'boolean'),
    ],
    row: (s, now) => {
      const members = Array.isArray(s.spec.members) ? s.spec.members.map(memberName) : [];
      return [s.metadata.name, s.status.phase, members.length, age(s.metadata, now), members.join(',') || null, s.spec.breakUp];
    },
  },

  selectableFields: (s) => ({
    ...objectMetaFields(s.metadata),
    'spec.breakUp': String(s.spec.breakUp),
    'status.phase': s.status.phase,
  }),
};

/** Defaults of fields left out, on create and on every update. */
function defaultSpec(s: Squad): void {
  s.spec.orphanTTL ||= DEFAULT_ORPHAN_TTL;
  s.spec.breakUp ??= false;
}
