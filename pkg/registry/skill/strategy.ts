// Skill rules: a named instruction pack (docs/skills-and-memories.md). Field validation by the
// schema, and skillRuleCauses for what it cannot say: each file's path stays inside the skill,
// the sizes are bounded, and SKILL.md's frontmatter names the skill and describes it (what the
// engine needs to list it). No status: nothing acts on a skill but the tasks that load it.

import { API_VERSION } from '../../api/meta.js';
import { SKILL_KIND, type Skill, skillDescription, skillRuleCauses, skillSpecSchema, skillStatusSchema } from '../../api/skill.js';
import { validateSchema } from '../../api/validation.js';
import { validateObjectName } from '../agent/strategy.js';
import type { Strategy } from '../strategy.js';
import { age, ageColumn, column, nameColumn, objectMetaFields, orNone } from '../table.js';

const bytesOf = (s: Skill): number => Object.values(s.spec.files ?? {}).reduce((n, t) => n + Buffer.byteLength(t), 0);

export const skillStrategy: Strategy<Skill> = {
  kind: SKILL_KIND,
  specSchema: skillSpecSchema,

  prepareForCreate(s) {
    s.apiVersion = API_VERSION;
    s.kind = SKILL_KIND;
    s.status = {};
  },

  prepareForUpdate(s) {
    s.status = {};
  },

  prepareForStatusUpdate(s) {
    s.status = {};
  },

  validateStatusUpdate(s) {
    return validateSchema(skillStatusSchema, s.status, 'status');
  },

  validate(s) {
    return [
      ...validateObjectName(s.metadata.name, s.metadata.namespace),
      ...validateSchema(skillSpecSchema, s.spec, 'spec'),
      ...skillRuleCauses(s.metadata.name, s.spec),
    ];
  },

  validateUpdate() {
    return [];
  },

  table: {
    columns: [
      nameColumn,
      column('Description', "What the skill is for (its own, else its SKILL.md's)."),
      column('Files', 'Files in the skill, SKILL.md included.', 0, 'integer'),
      ageColumn,
      column('Bytes', 'Size of its files in all.', 1, 'integer'),
    ],
    row: (s, now) => [s.metadata.name, orNone(skillDescription(s.spec)), Object.keys(s.spec.files ?? {}).length, age(s.metadata, now), bytesOf(s)],
  },

  selectableFields: (s) => objectMetaFields(s.metadata),
};
