// OpenAPI definitions (Swagger 2.0 dialect, refs to #/definitions/) of agentplane.io/v1alpha1:
// each resource's object and list, built from the same JSON Schemas the strategies validate
// with, and the meta.k8s.io types they refer to, under kube-apiserver's names so its aggregator
// can merge them and kubectl can explain and validate.

import { agentCostResponseSchema } from '../../api/agent-cost.js';
import { compactResponseSchema } from '../../api/agent-ops.js';
import { messageRequestSchema, messageResponseSchema } from '../../api/agent-message.js';
import { approvalDecisionRequestSchema, approvalSchema } from '../../api/approval.js';
import { EVENT_TYPES } from '../../api/event.js';
import { GROUP, VERSION } from '../../api/meta.js';
import type { ResourceDef } from './resources.js';

export type Schema = Record<string, unknown>;

export const META = 'io.k8s.apimachinery.pkg.apis.meta.v1';
export const RUNTIME = 'io.k8s.apimachinery.pkg.runtime';
/** Definition names of our kinds: the reversed group, the version, the kind (as for CRDs). */
export const OWN = `${GROUP.split('.').reverse().join('.')}.${VERSION}`;

export const ref = (name: string): Schema => ({ $ref: `#/definitions/${name}` });
const gvk = (kind: string, group = GROUP, version = VERSION) => [{ group, kind, version }];

const apiVersion = {
  type: 'string',
  description:
    'APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values.',
};
const kindField = {
  type: 'string',
  description: 'Kind is a string value representing the REST resource this object represents. In CamelCase.',
};

/**
 * A JSON Schema of ours as an OpenAPI schema: no $id, and no `additionalProperties: false`
 * (unknown fields are refused by the server's validation; OpenAPI readers take a boolean there
 * poorly). Everything else (types, enums, patterns, limits, descriptions) carries over.
 */
export function toOpenApiSchema(schema: unknown): Schema {
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (!v || typeof v !== 'object') return v;
    const out: Schema = {};
    for (const [k, x] of Object.entries(v)) {
      if (k === '$id' || (k === 'additionalProperties' && typeof x === 'boolean')) continue;
      out[k] = k === 'properties' ? Object.fromEntries(Object.entries(x as object).map(([p, s]) => [p, walk(s)])) : walk(x);
    }
    return out;
  };
  return walk(schema) as Schema;
}

function resourceDefinitions(r: ResourceDef): Record<string, Schema> {
  return {
    [`${OWN}.${r.kind}`]: {
      description: r.description,
      type: 'object',
      properties: {
        apiVersion,
        kind: kindField,
        metadata: { ...ref(`${META}.ObjectMeta`), description: "Standard object's metadata." },
        spec: { ...ref(`${OWN}.${r.kind}Spec`), description: `The desired state of the ${r.kind}.` },
        status: { ...ref(`${OWN}.${r.kind}Status`), description: `The observed state of the ${r.kind} (read-only).` },
      },
      'x-kubernetes-group-version-kind': gvk(r.kind),
    },
    [`${OWN}.${r.listKind}`]: {
      description: `A list of ${r.kind} objects.`,
      type: 'object',
      required: ['items'],
      properties: {
        apiVersion,
        kind: kindField,
        metadata: { ...ref(`${META}.ListMeta`), description: 'Standard list metadata.' },
        items: { type: 'array', items: ref(`${OWN}.${r.kind}`), description: `The ${r.plural}.` },
      },
      'x-kubernetes-group-version-kind': gvk(r.listKind),
    },
    [`${OWN}.${r.kind}Spec`]: {
      description: `${r.kind}Spec: what the user sets; fields left out get their defaults.`,
      ...toOpenApiSchema(r.specSchema),
      required: r.specRequired,
    },
    [`${OWN}.${r.kind}Status`]: { description: `${r.kind}Status: written by agentplane; ignored on writes.`, ...toOpenApiSchema(r.statusSchema) },
  };
}

/** The agent's event stream (events and log subresources). */
function eventDefinitions(): Record<string, Schema> {
  return {
    [`${OWN}.AgentEvent`]: {
      description: `One event of an agent (${EVENT_TYPES.join(', ')}).`,
      type: 'object',
      required: ['seq', 'agentName', 'namespace', 'task', 'type', 'timestamp', 'payload'],
      properties: {
        seq: { type: 'integer', format: 'int64', description: "Position in the agent's stream: 1, 2, 3..." },
        agentName: { type: 'string' },
        namespace: { type: 'string' },
        task: { type: 'integer', format: 'int64', description: 'The task the event belongs to.' },
        type: { type: 'string', description: 'The event kind.' },
        timestamp: { type: 'string', format: 'date-time' },
        payload: { type: 'object', description: 'Depends on type.', 'x-kubernetes-preserve-unknown-fields': true },
      },
    },
    [`${OWN}.AgentEventList`]: agentListOf('AgentEvent', 'The most recent events of an agent, oldest first.'),
  };
}

/** What the agent's compact and cost subresources answer: the REST mirror's shapes as objects. */
function agentOpDefinitions(): Record<string, Schema> {
  const object = (kind: string, description: string, schema: unknown): Schema => {
    const s = toOpenApiSchema(schema);
    return {
      description,
      type: 'object',
      properties: { apiVersion, kind: kindField, metadata: ref(`${META}.ObjectMeta`), ...(s.properties as Schema) },
      'x-kubernetes-group-version-kind': gvk(kind),
    };
  };
  return {
    [`${OWN}.AgentCompaction`]: object(
      'AgentCompaction',
      "The running task's session is compacted after its current turn (a context_compacted event follows).",
      compactResponseSchema,
    ),
    [`${OWN}.AgentCost`]: object('AgentCost', "An agent's spending per task and per model, summed from its events.", agentCostResponseSchema),
    [`${OWN}.AgentApproval`]: object('AgentApproval', 'A tool-call approval of the running task, as decided.', approvalSchema),
    [`${OWN}.AgentApprovalDecision`]: object('AgentApprovalDecision', 'A decision on a pending tool-call approval.', {
      ...approvalDecisionRequestSchema,
      properties: { id: { type: 'string', description: 'the approval to decide' }, ...approvalDecisionRequestSchema.properties },
    }),
    [`${OWN}.AgentMessageRequest`]: object('AgentMessageRequest', 'A message to an agent (docs/messages.md).', messageRequestSchema),
    [`${OWN}.AgentMessage`]: object(
      'AgentMessage',
      'How a message reached the agent: a follow-up, a new task, or queued while it sleeps.',
      messageResponseSchema,
    ),
    [`${OWN}.AgentApprovalList`]: agentListOf('AgentApproval', "The running task's tool-call approvals, pending first."),
  };
}

/** The meta.k8s.io types our objects and operations refer to. */
function metaDefinitions(): Record<string, Schema> {
  const time = ref(`${META}.Time`);
  return {
    [`${META}.Time`]: {
      description: 'Time is a wrapper around time.Time which supports correct marshaling to YAML and JSON (RFC 3339).',
      type: 'string',
      format: 'date-time',
    },
    [`${META}.ObjectMeta`]: {
      description: 'ObjectMeta is metadata that all persisted resources must have, which includes all objects users must create.',
      type: 'object',
      properties: {
        annotations: {
          type: 'object',
          additionalProperties: { type: 'string', default: '' },
          description:
            'Annotations is an unstructured key value map stored with a resource that may be set by external tools to store and retrieve arbitrary metadata.',
        },
        creationTimestamp: { ...time, description: 'The time this object was created (set by the server, read-only).' },
        deletionTimestamp: {
          ...time,
          description: 'Set by the server when deletion was requested; the object stays visible until its last finalizer is removed (read-only).',
        },
        finalizers: {
          type: 'array',
          items: { type: 'string', default: '' },
          description:
            'Must be empty before the object is deleted from the registry. Each entry is an identifier for the responsible component that will remove the entry from the list.',
          'x-kubernetes-list-type': 'set',
          'x-kubernetes-patch-strategy': 'merge',
        },
        generateName: { type: 'string', description: 'A prefix the server uses to generate a unique name when name is not given.' },
        generation: { type: 'integer', format: 'int64', description: 'A sequence number representing a specific generation of the desired state (read-only).' },
        labels: {
          type: 'object',
          additionalProperties: { type: 'string', default: '' },
          description: 'Map of string keys and values that can be used to organize and categorize (scope and select) objects.',
        },
        managedFields: {
          type: 'array',
          items: ref(`${META}.ManagedFieldsEntry`),
          description: 'Which manager owns which fields (server-side apply); kept by the server, not taken from requests.',
        },
        name: { type: 'string', description: 'Name must be unique within a namespace.' },
        namespace: { type: 'string', description: 'Namespace defines the space within which each name must be unique.' },
        ownerReferences: {
          type: 'array',
          items: { default: {}, allOf: [ref(`${META}.OwnerReference`)] },
          description: 'List of objects depended by this object. If ALL objects in the list have been deleted, this object will be garbage collected.',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['uid'],
          'x-kubernetes-patch-merge-key': 'uid',
          'x-kubernetes-patch-strategy': 'merge',
        },
        resourceVersion: {
          type: 'string',
          description:
            'An opaque value that represents the internal version of this object, used for optimistic concurrency, change detection and watch (read-only).',
        },
        uid: { type: 'string', description: 'UID is the unique in time and space value for this object (read-only).' },
      },
    },
    [`${META}.ManagedFieldsEntry`]: {
      description: 'ManagedFieldsEntry is a workflow-id, a FieldSet and the group version of the resource that the fieldset applies to.',
      type: 'object',
      properties: {
        apiVersion: { type: 'string', description: 'The version of the resource the fields belong to.' },
        fieldsType: { type: 'string', description: 'The format of fieldsV1: always "FieldsV1".' },
        fieldsV1: { ...ref(`${META}.FieldsV1`), description: 'The set of fields (FieldsV1 encoding).' },
        manager: { type: 'string', description: 'The manager: fieldManager, else the User-Agent up to its first "/".' },
        operation: { type: 'string', description: 'Apply or Update.' },
        subresource: { type: 'string', description: 'The subresource written, if any.' },
        time: { ...time, description: 'When the manager last changed its fields.' },
      },
    },
    [`${META}.FieldsV1`]: {
      description: 'FieldsV1 stores a set of fields in a data structure like a Trie, in JSON format.',
      type: 'object',
    },
    [`${META}.ListMeta`]: {
      description: 'ListMeta describes metadata that synthetic resources must have, including lists.',
      type: 'object',
      properties: {
        continue: { type: 'string', description: 'Set when more objects follow: pass it as the continue parameter for the next page.' },
        remainingItemCount: { type: 'integer', format: 'int64', description: 'How many objects follow this page.' },
        resourceVersion: { type: 'string', description: 'The version of the list, to watch from.' },
        selfLink: { type: 'string' },
      },
    },
    [`${META}.StatusCause`]: {
      description: 'StatusCause provides more information about an api.Status failure, including cases when multiple errors are encountered.',
      type: 'object',
      properties: {
        field: { type: 'string', description: 'The field of the resource that has caused this error.' },
        message: { type: 'string', description: 'A human-readable description of the cause of the error.' },
        reason: { type: 'string', description: 'A machine-readable description of the cause of the error.' },
      },
    },
    [`${META}.StatusDetails`]: {
      description: 'StatusDetails is a set of additional properties that MAY be set by the server to provide additional information about a response.',
      type: 'object',
      properties: {
        causes: { type: 'array', items: ref(`${META}.StatusCause`) },
        group: { type: 'string' },
        kind: { type: 'string' },
        name: { type: 'string' },
        retryAfterSeconds: { type: 'integer', format: 'int32' },
        uid: { type: 'string' },
      },
    },
    [`${META}.Status`]: {
      description: "Status is a return value for calls that don't return other objects.",
      type: 'object',
      properties: {
        apiVersion,
        code: { type: 'integer', format: 'int32', description: 'Suggested HTTP return code for this status, 0 if not set.' },
        details: ref(`${META}.StatusDetails`),
        kind: kindField,
        message: { type: 'string', description: 'A human-readable description of the status of this operation.' },
        metadata: ref(`${META}.ListMeta`),
        reason: { type: 'string', description: 'A machine-readable description of why this operation is in the "Failure" status.' },
        status: { type: 'string', description: 'Status of the operation: "Success" or "Failure".' },
      },
      'x-kubernetes-group-version-kind': gvk('Status', '', 'v1'),
    },
    [`${META}.Preconditions`]: {
      description: 'Preconditions must be fulfilled before an operation (update, delete, etc.) is carried out.',
      type: 'object',
      properties: { resourceVersion: { type: 'string' }, uid: { type: 'string' } },
    },
    [`${META}.OwnerReference`]: {
      description: 'OwnerReference contains enough information to let you identify an owning object.',
      type: 'object',
      required: ['apiVersion', 'kind', 'name', 'uid'],
      properties: {
        apiVersion: { type: 'string', default: '', description: 'API version of the referent.' },
        blockOwnerDeletion: {
          type: 'boolean',
          description: 'If true, the owner cannot be deleted from the key-value store until this reference is removed (foreground deletion).',
        },
        controller: { type: 'boolean', description: 'If true, this reference points to the managing controller.' },
        kind: { type: 'string', default: '', description: 'Kind of the referent.' },
        name: { type: 'string', default: '', description: 'Name of the referent.' },
        uid: { type: 'string', default: '', description: 'UID of the referent.' },
      },
      'x-kubernetes-map-type': 'atomic',
    },
    [`${META}.DeleteOptions`]: {
      description: 'DeleteOptions may be provided when deleting an API object.',
      type: 'object',
      properties: {
        apiVersion,
        dryRun: { type: 'array', items: { type: 'string', default: '' }, description: 'When present, modifications are not persisted. Valid value: All.' },
        gracePeriodSeconds: { type: 'integer', format: 'int64', description: 'Accepted and ignored.' },
        kind: kindField,
        orphanDependents: { type: 'boolean', description: 'Deprecated: true is propagationPolicy Orphan, false Background.' },
        preconditions: ref(`${META}.Preconditions`),
        propagationPolicy: {
          type: 'string',
          description: 'Whether and how garbage collection will be performed: Orphan, Background (the default) or Foreground.',
        },
      },
      'x-kubernetes-group-version-kind': [...gvk('DeleteOptions'), ...gvk('DeleteOptions', '', 'v1')],
    },
    [`${META}.Patch`]: {
      description: 'Patch is provided to give a concrete name and type to the Kubernetes PATCH request body.',
      type: 'object',
    },
    [`${META}.WatchEvent`]: {
      description: 'Event represents a single event to a watched resource.',
      type: 'object',
      required: ['type', 'object'],
      properties: {
        object: {
          ...ref(`${RUNTIME}.RawExtension`),
          description: 'The object (ADDED, MODIFIED, DELETED), a Status (ERROR), or an object with only a resourceVersion (BOOKMARK).',
        },
        type: { type: 'string', default: '' },
      },
      'x-kubernetes-group-version-kind': [...gvk('WatchEvent'), ...gvk('WatchEvent', '', 'v1')],
    },
    [`${RUNTIME}.RawExtension`]: {
      description: 'RawExtension is used to hold extensions in external versions.',
      type: 'object',
    },
  };
}

export function definitions(resources: ResourceDef[]): Record<string, Schema> {
  const out: Record<string, Schema> = {};
  for (const d of [...resources.map(resourceDefinitions), eventDefinitions(), agentOpDefinitions(), metaDefinitions()]) Object.assign(out, d);
  return out;
}

/** A subresource's list of an agent's `item`s: AgentEventList, AgentApprovalList. */
function agentListOf(item: string, description: string): Schema {
  return {
    description,
    type: 'object',
    required: ['items'],
    properties: {
      apiVersion,
      kind: kindField,
      metadata: ref(`${META}.ListMeta`),
      agent: { type: 'string' },
      namespace: { type: 'string' },
      items: { type: 'array', items: ref(`${OWN}.${item}`) },
    },
    'x-kubernetes-group-version-kind': gvk(`${item}List`),
  };
}
