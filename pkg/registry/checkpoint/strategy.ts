// AgentCheckpoint rules: the name is "<agent>.<checkpoint>" of the agent it copies, the spec is
// fixed once created (a checkpoint is a moment; another moment is another checkpoint), and the
// status is the checkpoint controller's.

import { type AgentCheckpoint, CHECKPOINT_KIND, checkpointSpecSchema, checkpointStatusSchema } from '../../api/checkpoint.js';
import { API_VERSION, NAME_MAX_LENGTH, NAME_PATTERN, NAME_RULE, NAMESPACE_PATTERN, NAMESPACE_RULE } from '../../api/meta.js';
import { validateSchema } from '../../api/validation.js';
import type { Strategy } from '../strategy.js';
import { ageColumn, age, column, nameColumn, objectMetaFields } from '../table.js';

const nameRe = new RegExp(NAME_PATTERN);
const nsRe = new RegExp(NAMESPACE_PATTERN);

export const checkpointStrategy: Strategy<AgentCheckpoint> = {
  kind: CHECKPOINT_KIND,
  specSchema: checkpointSpecSchema,

  prepareForCreate(c) {
    c.apiVersion = API_VERSION;
    c.kind = CHECKPOINT_KIND;
    c.status = { phase: 'Pending', message: 'waiting to be taken' };
  },

  prepareForUpdate(c, old) {
    c.status = structuredClone(old.status);
  },

  validate(c) {
    const causes = validateSchema(checkpointSpecSchema, c.spec, 'spec');
    if (!nsRe.test(c.metadata.namespace)) causes.push({ field: 'metadata.namespace', message: `must be ${NAMESPACE_RULE}` });
    const agent = typeof c.spec?.agent === 'string' ? c.spec.agent : '';
    const rest = c.metadata.name.startsWith(`${agent}.`) ? c.metadata.name.slice(agent.length + 1) : undefined;
    if (rest === undefined) {
      causes.push({ field: 'metadata.name', message: `must be "<agent>.<checkpoint>": "${agent}." followed by the checkpoint's name` });
    } else if (!rest || rest.length > NAME_MAX_LENGTH || !nameRe.test(rest)) {
      causes.push({ field: 'metadata.name', message: `the checkpoint's name after "${agent}." must be ${NAME_RULE}` });
    }
    return causes;
  },

  validateUpdate(c, old) {
    if (c.spec.agent !== old.spec.agent) return [{ field: 'spec.agent', message: 'may not change: a checkpoint copies one agent' }];
    if (c.spec.squad !== old.spec.squad) return [{ field: 'spec.squad', message: 'may not change: a checkpoint is taken once' }];
    return [];
  },

  validateStatusUpdate(c) {
    return validateSchema(checkpointStatusSchema, c.status, 'status');
  },

  table: {
    columns: [
      nameColumn,
      column('Agent', 'The agent it copies.'),
      column('Squad', "The squad whose members' checkpoints of this name were taken together.", 1),
      column('Phase', 'Pending until taken, then Ready or Failed.'),
      column('Task', 'The last task it includes.', 0, 'integer'),
      column('Size', 'Size of the copy.'),
      ageColumn,
      column('Message', 'Why it is Pending or Failed.', 1),
    ],
    row: (c, now) => [
      c.metadata.name,
      c.spec.agent,
      c.spec.squad ?? null,
      c.status.phase,
      c.status.task ?? null,
      c.status.bytes === undefined ? null : humanBytes(c.status.bytes),
      age(c.metadata, now),
      c.status.message || null,
    ],
  },

  selectableFields: (c) => ({ ...objectMetaFields(c.metadata), 'spec.agent': c.spec.agent, 'spec.squad': c.spec.squad ?? '', 'status.phase': c.status.phase }),
};

function humanBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return i === 0 ? `${n}B` : `${n.toFixed(1)}${units[i]}`;
}
