// Patch documents: JSON merge patch (RFC 7386), JSON patch (RFC 6902, fast-json-patch) and server-side apply configurations
// (application/apply-patch+yaml, parsed with `yaml`; JSON is YAML too).

import jsonpatch from 'fast-json-patch';
import { parse as parseYaml } from 'yaml';
import { ApiError, badRequest } from '../../api/errors.js';
import { checkBodyDepth, MAX_BODY_DEPTH, textDepth } from '../body.js';

export type PatchType = 'merge' | 'json' | 'apply';

// Strategic merge patch is refused (415), as custom resources refuse it: its directives
// (`$patch: delete`, `$retainKeys`) would be mangled by a merge patch. Clients that try it first
// (kube-controller-manager's garbage collector) fall back to a merge patch on 415.

export const PATCH_CONTENT_TYPES: Record<string, PatchType> = {
  'application/merge-patch+json': 'merge',
  'application/json-patch+json': 'json',
  'application/apply-patch+yaml': 'apply',
};

export function patchTypeOf(contentType: string | undefined): PatchType {
  const type = (contentType ?? '').split(';')[0].trim().toLowerCase();
  const t = PATCH_CONTENT_TYPES[type];
  if (!t) {
    throw new ApiError(
      'UnsupportedMediaType',
      415,
      `the body of a PATCH must be one of ${Object.keys(PATCH_CONTENT_TYPES).join(', ')}; got "${type || '(none)'}"`,
    );
  }
  return t;
}

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/** RFC 7386: objects merge recursively, null removes, anything else replaces (lists too). */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return structuredClone(patch);
  const out: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/** Applies an RFC 6902 patch; a failed `test` or a missing path is 422, a malformed patch 400. */
export function jsonPatch(doc: unknown, ops: unknown): unknown {
  if (!Array.isArray(ops)) throw badRequest('a JSON patch must be an array of operations');
  const err = jsonpatch.validate(ops as jsonpatch.Operation[], doc);
  if (err) throw patchError(err);
  try {
    return jsonpatch.applyPatch(structuredClone(doc), ops as jsonpatch.Operation[], false, true, true).newDocument;
  } catch (e) {
    throw patchError(e);
  }
}

function patchError(e: unknown): ApiError {
  const name = (e as { name?: string }).name ?? '';
  const message = (e as Error).message?.split('\n')[0] ?? String(e);
  const failed = [
    'TEST_OPERATION_FAILED',
    'OPERATION_PATH_UNRESOLVABLE',
    'OPERATION_FROM_UNRESOLVABLE',
    'OPERATION_PATH_CANNOT_ADD',
    'OPERATION_VALUE_OUT_OF_BOUNDS',
  ];
  if (failed.includes(name)) return new ApiError('Invalid', 422, `the JSON patch could not be applied: ${message}`);
  return badRequest(`invalid JSON patch: ${message}`);
}

/** The applied configuration of a server-side apply request. */
export function parseApplyConfiguration(body: unknown): Record<string, unknown> {
  let doc: unknown = body;
  if (typeof body === 'string' || Buffer.isBuffer(body)) {
    const text = String(body);
    // The YAML parser recurses and allocates per level: a body of a million "[" ran it out of
    // memory. Deep flow collections are refused before it runs; JSON (what kubectl sends) skips it.
    if (textDepth(text) > MAX_BODY_DEPTH) throw badRequest(`the apply configuration is nested deeper than ${MAX_BODY_DEPTH} levels`);
    try {
      doc = parseYaml(text);
    } catch (e) {
      throw badRequest(`the apply configuration is not valid YAML: ${(e as Error).message.split('\n')[0]}`);
    }
  }
  checkBodyDepth(doc);
  if (!isObject(doc)) throw badRequest('the apply configuration must be an object');
  if (typeof doc.apiVersion !== 'string' || !doc.apiVersion) throw badRequest('the apply configuration must set apiVersion');
  if (typeof doc.kind !== 'string' || !doc.kind) throw badRequest('the apply configuration must set kind');
  return doc;
}
