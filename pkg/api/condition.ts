// Conditions, as metav1.Condition: each one has a single writer (its owner), and summary fields
// such as an agent's `status` are derived from them rather than written by several parties.

export type ConditionStatus = 'True' | 'False' | 'Unknown';

export interface Condition {
  type: string;
  status: ConditionStatus;
  /** One CamelCase word saying why. */
  reason: string;
  message: string;
  lastTransitionTime: string;
}

export const conditionSchema = {
  type: 'object',
  required: ['type', 'status', 'reason', 'message', 'lastTransitionTime'],
  properties: {
    type: { type: 'string', description: 'the aspect of the object this condition describes' },
    status: { type: 'string', enum: ['True', 'False', 'Unknown'] },
    reason: { type: 'string', pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$', description: 'why, in one CamelCase word' },
    message: { type: 'string', description: 'why, for a person' },
    lastTransitionTime: { type: 'string', format: 'date-time', description: 'when status last changed' },
  },
} as const;

export const findCondition = (conditions: Condition[] | undefined, type: string): Condition | undefined => conditions?.find((c) => c.type === type);

export const isTrue = (conditions: Condition[] | undefined, type: string): boolean => findCondition(conditions, type)?.status === 'True';

/**
 * Sets a condition in place; the transition time changes only when the status does, as
 * meta.SetStatusCondition does. Returns the list for chaining.
 */
export function setCondition(list: Condition[], c: Omit<Condition, 'lastTransitionTime'>, now: () => string = () => new Date().toISOString()): Condition[] {
  const i = list.findIndex((x) => x.type === c.type);
  const old = list[i];
  const next: Condition = { ...c, lastTransitionTime: old && old.status === c.status ? old.lastTransitionTime : now() };
  if (i < 0) list.push(next);
  else list[i] = next;
  return list;
}
