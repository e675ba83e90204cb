// The server-side apply differential suite: sequences of writes (create, applies by two managers,
// a conflicting and a forced apply, field removal, merge and JSON patch, update, status in an
// applied configuration and in a patch, finalizers and owner references) run against an Agent
// and, on a real control plane, against an object of a CRD with the Agent's schema
// (kube-apiserver is the oracle). After every step the outcome is the response code (with
// reason, message and causes of a conflict) and the object's labels, annotations, finalizers,
// owner references, spec and managedFields (without times), so two runs compare as JSON.
//
// Owner references name real owners on the control plane (ConfigMaps the e2e creates, so the
// garbage collector leaves their dependents alone); a step writes `@uid(<owner>)` where an
// owner's uid goes, and outcomes show uids the same way, so runs with other uids compare.
//
// The agents are created with `task: 0` and `lifecycle: Sleep`: no task is assigned and no
// worker runs, so agentplane's controllers never write the agent and every field change is the
// sequence's own. `task` is given on create and update because its default differs: agentplane
// assigns task 1 on create and keeps the counter on an update that omits it, a CRD default can
// do neither.

import { DEFAULT_MODEL, DEFAULT_TEMPLATE, agentSpecSchema } from '../../pkg/api/agent.js';
import { SERVER_FINALIZERS } from '../../pkg/api/deletion.js';

export const NAMESPACE = 'ssa';
/** The oracle's group: its kind is Agent too, with the same schema, markers and defaults. */
export const ORACLE_GROUP = 'ssa-oracle.agentplane.io';
export const GROUP = 'agentplane.io';
export const VERSION = 'v1alpha1';
export const FIXTURE = 'test/fixtures/ssa-differential.json';
/** Connectors the agents list (agentplane checks they exist; the CRD does not). */
export const CONNECTORS = ['c1', 'c2'];

export type Verb = 'create' | 'apply' | 'merge' | 'json' | 'update';

export interface Step {
  name: string;
  verb: Verb;
  fieldManager?: string;
  force?: boolean;
  userAgent?: string;
  /** The object (create, update, apply: apiVersion and metadata.name are filled in) or the patch. */
  body: unknown;
}

export interface Sequence {
  name: string;
  object: string;
  steps: Step[];
}

export interface Outcome {
  step: string;
  code: number;
  reason?: string;
  message?: string;
  causes?: { field?: string; message?: string; reason?: string }[];
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: unknown[];
  spec?: unknown;
  managedFields?: { manager: string; operation: string; apiVersion: string; subresource?: string; fieldsV1: unknown }[];
}

const base = { instructions: 'compare fields', lifecycle: 'Sleep', task: 0 };

export const SEQUENCES: Sequence[] = [
  {
    name: 'two appliers, a conflict, force and removal',
    object: 'two-appliers',
    steps: [
      {
        name: 'alice applies (create)',
        verb: 'apply',
        fieldManager: 'alice',
        body: { metadata: { labels: { team: 'a' } }, spec: { ...base, model: 'm-1', connectors: ['c1'] } },
      },
      {
        name: 'bob applies the same instructions (shared) and another connector and label',
        verb: 'apply',
        fieldManager: 'bob',
        body: { metadata: { labels: { owner: 'b' } }, spec: { instructions: base.instructions, connectors: ['c2'] } },
      },
      {
        name: 'bob applies a model alice owns: conflict',
        verb: 'apply',
        fieldManager: 'bob',
        body: { metadata: { labels: { owner: 'b' } }, spec: { instructions: base.instructions, connectors: ['c2'], model: 'm-2' } },
      },
      {
        name: 'bob forces the model',
        verb: 'apply',
        fieldManager: 'bob',
        force: true,
        body: { metadata: { labels: { owner: 'b' } }, spec: { instructions: base.instructions, connectors: ['c2'], model: 'm-2' } },
      },
      { name: 'alice stops applying model and c1', verb: 'apply', fieldManager: 'alice', body: { metadata: { labels: { team: 'a' } }, spec: base } },
      { name: 'bob stops applying model, label and connectors', verb: 'apply', fieldManager: 'bob', body: { spec: { instructions: base.instructions } } },
      { name: 'alice re-applies unchanged (no-op)', verb: 'apply', fieldManager: 'alice', body: { metadata: { labels: { team: 'a' } }, spec: base } },
    ],
  },
  {
    name: 'updates by name and User-Agent, patches, replace, status',
    object: 'updates',
    steps: [
      {
        name: 'create, manager from the User-Agent',
        verb: 'create',
        userAgent: 'ssa-diff-client/1.0 (linux)',
        body: { metadata: { labels: { a: '1' } }, spec: { ...base, model: 'm-1' } },
      },
      {
        name: 'flux applies equal values: shared',
        verb: 'apply',
        fieldManager: 'flux',
        body: { metadata: { labels: { a: '1' } }, spec: { ...base, model: 'm-1' } },
      },
      {
        name: "flux changes the creator's model: conflict",
        verb: 'apply',
        fieldManager: 'flux',
        body: { metadata: { labels: { a: '1' } }, spec: { ...base, model: 'm-2' } },
      },
      {
        name: 'merge patch by kubectl-patch',
        verb: 'merge',
        fieldManager: 'kubectl-patch',
        body: { metadata: { labels: { b: '2' } }, spec: { role: 'worker' } },
      },
      {
        name: 'JSON patch by the User-Agent manager',
        verb: 'json',
        userAgent: 'ssa-diff-json/2',
        body: [
          { op: 'add', path: '/spec/systemPrompt', value: 'be brief' },
          { op: 'add', path: '/metadata/annotations', value: { note: 'x' } },
        ],
      },
      {
        name: 'flux applies a role kubectl-patch owns: conflict',
        verb: 'apply',
        fieldManager: 'flux',
        body: { metadata: { labels: { a: '1' } }, spec: { ...base, model: 'm-1', role: 'manager' } },
      },
      {
        name: 'replace (PUT) by kubectl-replace drops the label b, role and systemPrompt',
        verb: 'update',
        fieldManager: 'kubectl-replace',
        body: { metadata: { labels: { a: '1' }, annotations: { note: 'x' } }, spec: { ...base, model: 'm-1' } },
      },
      {
        name: 'flux forces the model',
        verb: 'apply',
        fieldManager: 'flux',
        force: true,
        body: { metadata: { labels: { a: '1' } }, spec: { ...base, model: 'm-2' } },
      },
      {
        name: 'status in a merge patch of the main resource is ignored',
        verb: 'merge',
        fieldManager: 'kubectl-patch',
        body: { status: { status: 'Failed', message: 'written by a client' } },
      },
      {
        name: 'status in an applied configuration is not owned',
        verb: 'apply',
        fieldManager: 'flux',
        body: { metadata: { labels: { a: '1' } }, spec: { ...base, model: 'm-2' }, status: { status: 'Running' } },
      },
      { name: 'apply without fieldManager: 422', verb: 'apply', body: { spec: base } },
    ],
  },
  {
    name: 'an object created by apply, then edited',
    object: 'apply-create',
    steps: [
      { name: "argo applies (create): defaults are nobody's", verb: 'apply', fieldManager: 'argocd', body: { spec: base } },
      {
        name: 'kubectl-edit sets the model and a label (merge patch)',
        verb: 'merge',
        fieldManager: 'kubectl-edit',
        body: { metadata: { labels: { e: '1' } }, spec: { model: 'edited' } },
      },
      {
        name: 'argo applies model without force: conflict with an Update manager',
        verb: 'apply',
        fieldManager: 'argocd',
        body: { spec: { ...base, model: 'argo' } },
      },
      { name: 'argo applies connectors as a set', verb: 'apply', fieldManager: 'argocd', body: { spec: { ...base, connectors: ['c2', 'c1'] } } },
      {
        name: 'helm applies one connector argo has too: shared',
        verb: 'apply',
        fieldManager: 'helm',
        body: { spec: { instructions: base.instructions, connectors: ['c1'] } },
      },
      { name: 'argo drops both connectors: c1 stays (helm)', verb: 'apply', fieldManager: 'argocd', body: { spec: base } },
    ],
  },
  {
    name: 'finalizers, owner references and annotations',
    object: 'metadata-lists',
    steps: [
      {
        name: 'alice applies (create) a finalizer, an owner reference and an annotation',
        verb: 'apply',
        fieldManager: 'alice',
        body: {
          metadata: {
            annotations: { 'example.com/by': 'alice' },
            finalizers: ['example.com/alice'],
            ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner-a', uid: '@uid(owner-a)' }],
          },
          spec: base,
        },
      },
      {
        name: 'bob applies his own finalizer and owner reference: both kept (a set, a map by uid)',
        verb: 'apply',
        fieldManager: 'bob',
        body: {
          metadata: {
            finalizers: ['example.com/bob'],
            ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner-b', uid: '@uid(owner-b)', controller: true }],
          },
          spec: { instructions: base.instructions },
        },
      },
      {
        name: "bob applies alice's annotation with his value: conflict",
        verb: 'apply',
        fieldManager: 'bob',
        body: {
          metadata: {
            annotations: { 'example.com/by': 'bob' },
            finalizers: ['example.com/bob'],
            ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner-b', uid: '@uid(owner-b)', controller: true }],
          },
          spec: { instructions: base.instructions },
        },
      },
      {
        name: "bob changes alice's owner reference, which is owned whole: conflict",
        verb: 'apply',
        fieldManager: 'bob',
        body: {
          metadata: {
            finalizers: ['example.com/bob'],
            ownerReferences: [
              { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner-b', uid: '@uid(owner-b)', controller: true },
              { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner-a', uid: '@uid(owner-a)', controller: true },
            ],
          },
          spec: { instructions: base.instructions },
        },
      },
      {
        name: 'a merge patch adds an annotation and replaces the finalizers',
        verb: 'merge',
        fieldManager: 'kubectl-patch',
        body: { metadata: { annotations: { note: 'x' }, finalizers: ['example.com/alice', 'example.com/bob', 'example.com/patch'] } },
      },
      {
        name: 'alice stops applying her finalizer, owner reference and annotation: removed',
        verb: 'apply',
        fieldManager: 'alice',
        body: { spec: base },
      },
      {
        name: 'a JSON patch removes the first finalizer',
        verb: 'json',
        userAgent: 'ssa-diff-json/2',
        body: [{ op: 'remove', path: '/metadata/finalizers/0' }],
      },
      { name: 'bob applies none: only what others own is left', verb: 'apply', fieldManager: 'bob', body: { spec: { instructions: base.instructions } } },
      { name: 'the last finalizer is removed by a merge patch', verb: 'merge', fieldManager: 'kubectl-patch', body: { metadata: { finalizers: null } } },
    ],
  },
];

/** Names of the owners the sequences refer to (`@uid(<name>)`): ConfigMaps in NAMESPACE on a control plane. */
export const OWNERS = ['owner-a', 'owner-b'];

/** The CRD the oracle serves: the Agent's spec schema as a structural schema, with agentplane's defaults. */
export function oracleCrd(): Record<string, unknown> {
  const spec = structural(agentSpecSchema) as Record<string, unknown>;
  spec.required = ['instructions'];
  const props = spec.properties as Record<string, Record<string, unknown>>;
  props.model.default = DEFAULT_MODEL;
  props.templateRef.default = DEFAULT_TEMPLATE;
  props.role.default = 'manager';
  props.connectors.default = [];
  props.lifecycle.default = '';
  props.task.default = 0;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `agents.${ORACLE_GROUP}` },
    spec: {
      group: ORACLE_GROUP,
      scope: 'Namespaced',
      names: { kind: 'Agent', listKind: 'AgentList', plural: 'agents', singular: 'agent' },
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          // As agentplane: status is not written through the main resource.
          subresources: { status: {} },
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: { spec, status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
            },
          },
        },
      ],
    },
  };
}

/** A JSON Schema of ours as a CRD accepts it: no $id, no additionalProperties: false, no uniqueItems (a set list checks that). */
function structural(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(structural);
  if (!v || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    if (k === '$id' || k === 'uniqueItems' || (k === 'additionalProperties' && x === false)) continue;
    out[k] = k === 'properties' ? Object.fromEntries(Object.entries(x as object).map(([p, s]) => [p, structural(s)])) : structural(x);
  }
  return out;
}

export interface Reply {
  status: number;
  body: any;
}
/** One HTTP request; `path` starts at /apis. */
export type Send = (method: string, path: string, headers: Record<string, string>, body?: string) => Promise<Reply>;

const CONTENT: Record<Verb, string> = {
  create: 'application/json',
  update: 'application/json',
  apply: 'application/apply-patch+yaml',
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
};

/** Runs one sequence against `group`'s agents; outcomes are written in agentplane.io's terms, uids as `@uid(<owner>)`. */
export async function runSequence(seq: Sequence, send: Send, group: string, uids: Record<string, string>): Promise<Outcome[]> {
  const withUids = (v: unknown): unknown => JSON.parse(JSON.stringify(v).replace(/@uid\(([a-z0-9-]+)\)/g, (_, n: string) => uids[n] ?? n));
  const asOwners = <T>(v: T): T => {
    let text = JSON.stringify(v);
    for (const [n, uid] of Object.entries(uids)) text = text.split(uid).join(`@uid(${n})`);
    return JSON.parse(text) as T;
  };
  const apiVersion = `${group}/${VERSION}`;
  const collection = `/apis/${apiVersion}/namespaces/${NAMESPACE}/agents`;
  const item = `${collection}/${seq.object}`;
  const out: Outcome[] = [];
  for (const step of seq.steps) {
    const q = new URLSearchParams();
    if (step.fieldManager) q.set('fieldManager', step.fieldManager);
    if (step.force) q.set('force', 'true');
    const headers: Record<string, string> = { 'content-type': CONTENT[step.verb], 'user-agent': step.userAgent ?? 'ssa-differential/1.0' };
    let body = withUids(step.body);
    if (step.verb === 'create' || step.verb === 'update' || step.verb === 'apply') {
      const o = structuredClone(body) as Record<string, any>;
      o.apiVersion = apiVersion;
      o.kind = 'Agent';
      o.metadata = { ...(o.metadata ?? {}), name: seq.object };
      // Custom resources refuse an update without a resourceVersion; agentplane would not.
      if (step.verb === 'update') o.metadata.resourceVersion = (await send('GET', item, {})).body.metadata.resourceVersion;
      body = o;
    }
    const method = step.verb === 'create' ? 'POST' : step.verb === 'update' ? 'PUT' : 'PATCH';
    const path = (step.verb === 'create' ? collection : item) + (q.size ? `?${q}` : '');
    const res = await send(method, path, headers, JSON.stringify(body));
    const o: Outcome = { step: step.name, code: res.status };
    if (res.status >= 400) {
      o.reason = res.body?.reason;
      // Messages of other errors are each server's own words; conflicts must match kube-apiserver's.
      if (res.body?.reason === 'Conflict') {
        o.message = asOwners(inOurGroup(res.body.message, group));
        o.causes = asOwners((res.body.details?.causes ?? []) as NonNullable<Outcome['causes']>)
          .map((c) => ({ ...c, message: inOurGroup(c.message ?? '', group) }))
          .sort((a, b) => (a.field ?? '').localeCompare(b.field ?? ''));
      }
    }
    const now = await send('GET', item, {});
    if (now.status === 200) {
      const m = now.body.metadata ?? {};
      o.labels = m.labels ?? {};
      o.annotations = m.annotations ?? {};
      // agentplane's own clean-up finalizer is the server's (nobody's field); kube-apiserver has none.
      o.finalizers = ((m.finalizers ?? []) as string[]).filter((f) => !SERVER_FINALIZERS.includes(f));
      o.ownerReferences = asOwners(m.ownerReferences ?? []);
      o.spec = now.body.spec;
      o.managedFields = asOwners((m.managedFields ?? []) as any[])
        .map((e) => ({
          manager: e.manager,
          operation: e.operation,
          apiVersion: inOurGroup(e.apiVersion, group),
          ...(e.subresource ? { subresource: e.subresource } : {}),
          fieldsV1: e.fieldsV1,
        }))
        .sort((a, b) => `${a.manager}\0${a.operation}`.localeCompare(`${b.manager}\0${b.operation}`));
    }
    out.push(o);
  }
  return out;
}

const inOurGroup = (s: string, group: string): string => s.split(`${group}/`).join(`${GROUP}/`);

/** The connectors the sequences attach, created in agentplane (a setup step, not compared). */
export async function createConnectors(send: Send): Promise<void> {
  for (const name of CONNECTORS) {
    const res = await send(
      'POST',
      `/apis/${GROUP}/${VERSION}/namespaces/${NAMESPACE}/connectors`,
      { 'content-type': 'application/json' },
      JSON.stringify({ apiVersion: `${GROUP}/${VERSION}`, kind: 'Connector', metadata: { name }, spec: { url: 'https://mcp.example.com/mcp' } }),
    );
    if (res.status !== 201) throw new Error(`creating connector ${name}: ${res.status} ${JSON.stringify(res.body)}`);
  }
}
