// Memory rules: named text agents keep and share (docs/skills-and-memories.md). The status says
// which agent's tool wrote the text last; a write of the text by anyone else clears it (the
// service that serves the agents' tool sets it again after its own write).

import { API_VERSION } from '../../api/meta.js';
import { MEMORY_KIND, type Memory, memorySpecSchema, memoryStatusSchema, memoryTextCauses } from '../../api/memory.js';
import { validateSchema } from '../../api/validation.js';
import { validateObjectName } from '../agent/strategy.js';
import type { Strategy } from '../strategy.js';
import { age, ageColumn, column, nameColumn, objectMetaFields, orNone } from '../table.js';

/** The text's first line, cut short, for the table. */
const preview = (text: string): string => {
  const line = text.split('\n', 1)[0] ?? '';
  return line.length > 60 ? `${line.slice(0, 57)}...` : line;
};

export const memoryStrategy: Strategy<Memory> = {
  kind: MEMORY_KIND,
  specSchema: memorySpecSchema,

  prepareForCreate(m) {
    m.apiVersion = API_VERSION;
    m.kind = MEMORY_KIND;
    m.status = {};
  },

  prepareForUpdate(m, old) {
    m.status = m.spec.text === old.spec.text ? structuredClone(old.status) : {};
  },

  validateStatusUpdate(m) {
    return validateSchema(memoryStatusSchema, m.status, 'status');
  },

  validate(m) {
    return [
      ...validateObjectName(m.metadata.name, m.metadata.namespace),
      ...validateSchema(memorySpecSchema, m.spec, 'spec'),
      ...memoryTextCauses(m.spec?.text, 'spec.text'),
    ];
  },

  validateUpdate() {
    return [];
  },

  table: {
    columns: [
      nameColumn,
      column('Description', 'What the memory holds.'),
      column('Bytes', 'Size of its text.', 0, 'integer'),
      column('LastWriter', "The agent whose tool wrote the text last (none: a person's write)."),
      ageColumn,
      column('Text', "The text's first line.", 1),
    ],
    row: (m, now) => [
      m.metadata.name,
      orNone(m.spec.description),
      Buffer.byteLength(m.spec.text ?? ''),
      orNone(m.status.lastWriter),
      age(m.metadata, now),
      preview(m.spec.text ?? ''),
    ],
  },

  selectableFields: (m) => objectMetaFields(m.metadata),
};
