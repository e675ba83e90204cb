// The verbs on objects: get, list, create, update, patch (merge, JSON, server-side apply),
// delete and deletecollection. Every write goes through the generic Registry, so the
// resource's strategy decides defaults, validation and update rules.

import { ApiError, badRequest, invalid, notFound } from '../../api/errors.js';
import { PROPAGATION_POLICIES, type PropagationPolicy } from '../../api/deletion.js';
import { API_VERSION } from '../../api/meta.js';
import { managerFromUserAgent, MAX_MANAGER_LENGTH, type WriteOwner } from '../../registry/fieldmanager/field-manager.js';
import type { DeleteOptions } from '../../registry/registry.js';
import type { StoredObject } from '../../registry/store.js';
import { negotiate, type Target } from './negotiation.js';
import { applyIncoming, type DecodeContext, decodeObject } from './objects.js';
import { jsonPatch, mergePatch, parseApplyConfiguration, patchTypeOf } from './patch.js';
import { parse as parseYaml } from 'yaml';
import { MAX_BODY_DEPTH, textDepth } from '../body.js';
import { boolParam, checkListOptions, dryRun, fieldValidation, includeObject, intParam, type Query, single } from './query.js';
import { renderList, renderObject } from './render.js';
import type { ResourceDef } from './resources.js';
import { selection } from './selection.js';

export interface VerbRequest {
  def: ResourceDef;
  /** Absent for requests across all namespaces. */
  namespace?: string;
  name?: string;
  query: Query;
  accept?: string;
  contentType?: string;
  /** The manager of an Update that names none in `fieldManager` comes from it. */
  userAgent?: string;
  body: unknown;
}

export interface VerbResponse {
  code: number;
  body: unknown;
  /** Sent as `Warning: 299 - "<text>"` headers (kubectl prints them). */
  warnings?: string[];
}

const ns = (r: VerbRequest): string => r.namespace!;
const name = (r: VerbRequest): string => r.name!;

/** Reads come from the informer cache with Kubernetes' resourceVersion rules (registry/cache/reads.ts). */
const readOptions = (q: Query) => {
  const resourceVersion = single(q, 'resourceVersion');
  return resourceVersion !== undefined ? { resourceVersion } : {};
};

export async function getVerb(r: VerbRequest): Promise<VerbResponse> {
  const target = negotiate(r.accept, ['Table', 'PartialObjectMetadata']);
  const inc = includeObject(r.query);
  const obj = await r.def.reads.get(ns(r), name(r), readOptions(r.query));
  if (!obj) throw notFound(r.def.kind, name(r), ns(r));
  return { code: 200, body: renderObject(r.def, obj, target, inc) };
}

export async function listVerb(r: VerbRequest): Promise<VerbResponse> {
  const target = negotiate(r.accept, ['Table', 'PartialObjectMetadataList']);
  const inc = includeObject(r.query);
  checkListOptions(r.query);
  if (single(r.query, 'sendInitialEvents') !== undefined) {
    throw invalid('ListOptions', undefined, [{ field: 'sendInitialEvents', message: 'is forbidden for list' }]);
  }
  const sel = selection(r.def, r.query, r.namespace);
  const match = single(r.query, 'resourceVersionMatch');
  const limit = intParam(r.query, 'limit', { min: 0 });
  const cont = single(r.query, 'continue');
  const page = await r.def.reads.list({
    ...readOptions(r.query),
    ...(match ? { resourceVersionMatch: match } : {}),
    ...(r.namespace !== undefined ? { namespace: r.namespace } : {}),
    matches: sel.matches,
    ...(limit ? { limit } : {}),
    ...(cont ? { continue: cont } : {}),
  });
  return { code: 200, body: renderList(r.def, page.items, page.resourceVersion, target, inc, page) };
}

export async function createVerb(r: VerbRequest): Promise<VerbResponse> {
  const target = negotiate(r.accept, ['Table', 'PartialObjectMetadata']);
  const dry = dryRun(r.query);
  const { obj, warnings } = decodeObject(r.def, r.body, { namespace: ns(r), validation: fieldValidation(r.query) });
  const created = await create(r.def, obj, dry, updater(r, 'CreateOptions'));
  return { code: 201, body: renderObject(r.def, created, target, includeObject(r.query)), warnings };
}

function create(def: ResourceDef, obj: StoredObject, dry: boolean, owner: WriteOwner): Promise<StoredObject> {
  return def.registry.create(obj, { dryRun: dry, owner });
}

/** `fieldManager` as kube-apiserver checks it: at most 128 printable characters. */
function fieldManager(r: VerbRequest, options: 'CreateOptions' | 'UpdateOptions' | 'PatchOptions'): string | undefined {
  const m = single(r.query, 'fieldManager');
  if (m !== undefined && (m.length > MAX_MANAGER_LENGTH || /[^\x20-\x7e]/.test(m))) {
    throw invalid(options, undefined, [{ field: 'fieldManager', message: `must be at most ${MAX_MANAGER_LENGTH} printable characters` }]);
  }
  return m || undefined;
}

/** The owner of a create, update or (non-apply) patch: `fieldManager`, else from the User-Agent. */
function updater(r: VerbRequest, options: 'CreateOptions' | 'UpdateOptions' | 'PatchOptions'): WriteOwner {
  return { manager: fieldManager(r, options) ?? managerFromUserAgent(r.userAgent), operation: 'Update' };
}

export async function updateVerb(r: VerbRequest): Promise<VerbResponse> {
  const target = negotiate(r.accept, ['Table', 'PartialObjectMetadata']);
  const dry = dryRun(r.query);
  const { obj: incoming, warnings } = decodeObject(r.def, r.body, { namespace: ns(r), name: name(r), validation: fieldValidation(r.query) });
  const after = await update(r.def, ns(r), name(r), () => incoming, dry, updater(r, 'UpdateOptions'));
  return { code: 200, body: renderObject(r.def, after, target, includeObject(r.query)), warnings };
}

/**
 * Read-modify-write through the registry: `next` computes the incoming object from the latest
 * stored one (a patch is re-applied on each retry); spec, labels and annotations are taken from it.
 */
function update(
  def: ResourceDef,
  namespace: string,
  n: string,
  next: (cur: StoredObject) => StoredObject,
  dry: boolean,
  owner: WriteOwner,
): Promise<StoredObject> {
  return def.registry.update(namespace, n, (obj) => applyIncoming(def, obj, next(obj)), { dryRun: dry, owner });
}

export async function patchVerb(r: VerbRequest): Promise<VerbResponse> {
  const target = negotiate(r.accept, ['Table', 'PartialObjectMetadata']);
  const type = patchTypeOf(r.contentType);
  const dry = dryRun(r.query);
  const validation = fieldValidation(r.query);
  const ctx = { namespace: ns(r), name: name(r), validation };
  const inc = includeObject(r.query);
  if (type === 'apply') return apply(r, ctx, dry, target);
  if (single(r.query, 'force') !== undefined) throw badRequest('force may only be set on apply (server-side apply) patches');
  const owner = updater(r, 'PatchOptions');

  const patched = (cur: StoredObject): unknown => (type === 'json' ? jsonPatch(cur, r.body) : mergePatch(cur, r.body));
  if (type !== 'json' && (!r.body || typeof r.body !== 'object' || Array.isArray(r.body))) throw badRequest('a merge patch must be a JSON object');
  let warnings: string[] = [];
  const after = await update(
    r.def,
    ns(r),
    name(r),
    (cur) => {
      const d = decodeObject(r.def, patched(cur), ctx);
      warnings = d.warnings;
      return d.obj;
    },
    dry,
    owner,
  );
  return { code: 200, body: renderObject(r.def, after, target, inc), warnings };
}

/**
 * Server-side apply: creates the object when absent, else merges the applied configuration into
 * it by the schema's list and map types, removing the fields the manager stopped applying that
 * nobody else owns (the field manager); the registry then refuses changes to fields other
 * managers own (409) unless `force`.
 */
async function apply(r: VerbRequest, ctx: DecodeContext & { name: string }, dry: boolean, target: Target): Promise<VerbResponse> {
  const inc = includeObject(r.query);
  if (!single(r.query, 'fieldManager')) {
    throw invalid('PatchOptions', undefined, [{ field: 'fieldManager', message: 'is required for apply patch' }]);
  }
  const manager = fieldManager(r, 'PatchOptions')!;
  const owner: WriteOwner = { manager, operation: 'Apply', force: boolParam(r.query, 'force') === true };
  const fm = r.def.registry.fieldManager;
  const config = parseApplyConfiguration(r.body);
  if (config.apiVersion !== API_VERSION) {
    throw badRequest(`the API version in the data (${String(config.apiVersion)}) does not match the expected API version (${API_VERSION})`);
  }
  if (!(await r.def.registry.get(ctx.namespace, ctx.name))) {
    const { obj, warnings } = decodeObject(r.def, config, ctx);
    obj.metadata.managedFields = fm.applyConfiguration(undefined, config, manager).metadata.managedFields;
    try {
      return { code: 201, body: renderObject(r.def, await create(r.def, obj, dry, owner), target, inc), warnings };
    } catch (err) {
      if (!(err instanceof ApiError && err.reason === 'AlreadyExists')) throw err;
      // Created meanwhile by someone else: apply to it.
    }
  }
  let warnings: string[] = [];
  const after = await update(
    r.def,
    ctx.namespace,
    ctx.name,
    (cur) => {
      const merged = fm.applyConfiguration(cur, config, manager);
      const d = decodeObject(r.def, merged, ctx);
      warnings = d.warnings;
      d.obj.metadata.managedFields = merged.metadata.managedFields;
      return d.obj;
    },
    dry,
    owner,
  );
  return { code: 200, body: renderObject(r.def, after, target, inc), warnings };
}

export async function deleteVerb(r: VerbRequest): Promise<VerbResponse> {
  const target = negotiate(r.accept, ['Table', 'PartialObjectMetadata']);
  const opts = deleteOptions(r);
  const obj = await remove(r.def, ns(r), name(r), opts);
  if (!obj) throw notFound(r.def.kind, name(r), ns(r));
  return { code: 200, body: renderObject(r.def, obj, target, includeObject(r.query)) };
}

/** Deletes (or, while finalizers hold it, marks) one object; undefined when it is gone. */
async function remove(def: ResourceDef, namespace: string, n: string, opts: DeleteOptions): Promise<StoredObject | undefined> {
  try {
    return await def.registry.delete(namespace, n, opts);
  } catch (err) {
    if (err instanceof ApiError && err.reason === 'NotFound') return undefined;
    throw err;
  }
}

export async function deleteCollectionVerb(r: VerbRequest): Promise<VerbResponse> {
  const opts = deleteOptions(r);
  if (opts.preconditions) throw badRequest('preconditions are not supported by deletecollection');
  checkListOptions(r.query);
  const sel = selection(r.def, r.query, r.namespace);
  const { items, resourceVersion } = await r.def.registry.list({ namespace: ns(r) });
  const deleted: StoredObject[] = [];
  let failure: unknown;
  for (const obj of items.filter(sel.matches)) {
    try {
      const gone = await remove(r.def, obj.metadata.namespace, obj.metadata.name, opts);
      if (gone) deleted.push(gone);
    } catch (err) {
      if (!(err instanceof ApiError && err.reason === 'NotFound')) failure ??= err;
    }
  }
  // eslint-disable-next-line @typescript-eslint/only-throw-error -- the first failure is rethrown as caught (an ApiError or a store error)
  if (failure) throw failure;
  return { code: 200, body: { apiVersion: API_VERSION, kind: r.def.listKind, metadata: { resourceVersion }, items: deleted } };
}

/** DeleteOptions from the body (kubectl sends one) and the query. */
function deleteOptions(r: VerbRequest): DeleteOptions {
  const body = deleteBody(r.body);
  if (body.kind !== undefined && body.kind !== 'DeleteOptions')
    throw badRequest(`the body of a DELETE must be a DeleteOptions, not a ${typeof body.kind === 'string' ? body.kind : JSON.stringify(body.kind)}`);
  // Fields of the wrong type are refused as kube-apiserver's decoder refuses them (make fuzz found this).
  if (body.apiVersion !== undefined && typeof body.apiVersion !== 'string') throw badRequest('apiVersion of a DeleteOptions must be a string');
  if (body.preconditions !== undefined && body.preconditions !== null && (typeof body.preconditions !== 'object' || Array.isArray(body.preconditions)))
    throw badRequest('preconditions of a DeleteOptions must be an object {uid?, resourceVersion?}');
  const pre = body.preconditions && typeof body.preconditions === 'object' ? (body.preconditions as Record<string, unknown>) : undefined;
  const preconditions = pre
    ? {
        ...(typeof pre.uid === 'string' && pre.uid ? { uid: pre.uid } : {}),
        ...(typeof pre.resourceVersion === 'string' && pre.resourceVersion ? { resourceVersion: pre.resourceVersion } : {}),
      }
    : undefined;
  const dry = dryRun(r.query, body);
  const policy = propagationPolicy(r, body);
  // Taken and not used (deletion is immediate once finalizers are done), but checked as
  // kube-apiserver checks it: an int64 of 0 or more.
  const grace = body.gracePeriodSeconds ?? single(r.query, 'gracePeriodSeconds');
  const numeric = typeof grace === 'number' || (typeof grace === 'string' && grace.trim() !== '');
  if (grace !== undefined && grace !== null && !(numeric && Number.isSafeInteger(Number(grace)) && Number(grace) >= 0)) {
    throw badRequest(`gracePeriodSeconds must be an integer 0 or more, not ${JSON.stringify(grace)}`);
  }
  return {
    dryRun: dry,
    ...(preconditions && Object.keys(preconditions).length ? { preconditions } : {}),
    ...(policy ? { propagationPolicy: policy } : {}),
  };
}

/** A DELETE's body as an object: JSON (parsed already), or YAML (a string, as the YAML parser is for apply). */
function deleteBody(raw: unknown): Record<string, unknown> {
  let body = raw;
  if (typeof raw === 'string' && raw.trim() !== '') {
    if (textDepth(raw) > MAX_BODY_DEPTH) throw badRequest(`the body is nested deeper than ${MAX_BODY_DEPTH} levels`);
    try {
      body = parseYaml(raw);
    } catch (e) {
      throw badRequest(`the body is not valid YAML: ${(e as Error).message.split('\n')[0]}`);
    }
  }
  if (body === undefined || body === null || (typeof body === 'string' && body.trim() === '')) return {};
  if (typeof body !== 'object' || Array.isArray(body)) throw badRequest('the body of a DELETE must be a DeleteOptions object');
  return body as Record<string, unknown>;
}

/** propagationPolicy (body or query), or the older orphanDependents; at most one of the two. */
function propagationPolicy(r: VerbRequest, body: Record<string, unknown>): PropagationPolicy | undefined {
  const policy = body.propagationPolicy ?? single(r.query, 'propagationPolicy');
  const orphan = body.orphanDependents ?? single(r.query, 'orphanDependents');
  if (policy !== undefined && policy !== null && orphan !== undefined && orphan !== null) {
    throw invalid('DeleteOptions', undefined, [{ field: 'orphanDependents', message: 'orphanDependents and propagationPolicy cannot both be set' }]);
  }
  if (orphan !== undefined && orphan !== null) {
    if (orphan === true || orphan === 'true') return 'Orphan';
    if (orphan === false || orphan === 'false') return 'Background';
    throw badRequest(`orphanDependents must be true or false, not ${JSON.stringify(orphan)}`);
  }
  if (policy === undefined || policy === null || policy === '') return undefined;
  if (!PROPAGATION_POLICIES.includes(policy as PropagationPolicy)) {
    throw invalid('DeleteOptions', undefined, [
      {
        field: 'propagationPolicy',
        message: `Unsupported value: ${JSON.stringify(policy)}: supported values: ${PROPAGATION_POLICIES.map((p) => `"${p}"`).join(', ')}`,
      },
    ]);
  }
  return policy as PropagationPolicy;
}
