// Which objects a list, watch or deletecollection request selects: namespace, label selector and
// field selector (metadata.name, metadata.namespace and the strategy's selectable fields).

import type { StoredObject } from '../../registry/store.js';
import { type Query, single } from './query.js';
import type { ResourceDef } from './resources.js';
import { matchesFields, matchesLabels, parseFieldSelector, parseLabelSelector, unsupportedField } from './selectors.js';

export interface Selection {
  namespace?: string;
  matches: (obj: StoredObject) => boolean;
}

export function selection(def: ResourceDef, q: Query, namespace?: string, name?: string): Selection {
  const labels = parseLabelSelector(single(q, 'labelSelector'));
  const fields = parseFieldSelector(single(q, 'fieldSelector'));
  if (name !== undefined) fields.push({ field: 'metadata.name', op: 'eq', value: name });
  // Refuse unknown field names up front, not only when an object is there to be matched.
  const known = fieldsOf(def, probe(namespace));
  for (const f of fields) if (known && !(f.field in known)) throw unsupportedField(f.field, def.plural, known);
  const strategy = def.registry.strategy;
  return {
    ...(namespace !== undefined ? { namespace } : {}),
    matches: (obj) =>
      (namespace === undefined || obj.metadata.namespace === namespace) &&
      matchesLabels(labels, obj.metadata.labels) &&
      matchesFields(fields, strategy.selectableFields(obj), def.plural),
  };
}

/** A skeleton object: enough for a strategy to name its selectable fields. */
const probe = (namespace = ''): StoredObject => ({
  apiVersion: '',
  kind: '',
  metadata: { name: '', namespace, uid: '', resourceVersion: '', generation: 0, creationTimestamp: '' },
  spec: {},
  status: {},
});

function fieldsOf(def: ResourceDef, obj: StoredObject): Record<string, string> | undefined {
  try {
    return def.registry.strategy.selectableFields(obj);
  } catch {
    return undefined; // checked per object instead
  }
}
