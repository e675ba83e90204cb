// An audit event in the shape of Kubernetes' audit.k8s.io/v1 Event, for one request at stage
// ResponseComplete. Empty strings are left out, as Go's omitempty leaves them out.

import type { RequestAttributes } from '../auth/attributes.js';
import type { UserInfo } from '../auth/user.js';
import type { AuditLevel } from './policy.js';
import { loggableRequestObject } from './redact.js';

export const ANONYMOUS: Pick<UserInfo, 'username' | 'groups'> = { username: 'system:anonymous', groups: ['system:unauthenticated'] };

export interface ObjectReference {
  resource?: string;
  namespace?: string;
  name?: string;
  subresource?: string;
  apiGroup?: string;
  apiVersion?: string;
}

export interface AuditEvent {
  kind: 'Event';
  apiVersion: 'audit.k8s.io/v1';
  level: Exclude<AuditLevel, 'None'>;
  auditID: string;
  stage: 'ResponseComplete';
  requestURI: string;
  verb: string;
  user: { username: string; uid?: string; groups: string[] };
  sourceIPs: string[];
  userAgent?: string;
  objectRef?: ObjectReference;
  responseStatus: { metadata: Record<string, never>; code: number; status?: 'Failure' };
  requestObject?: unknown;
  /** As kube-apiserver's: here a tool-call approval's decision and id, at every level (approvalAnnotations). */
  annotations?: Record<string, string>;
  requestReceivedTimestamp: string;
  stageTimestamp: string;
}

export interface RequestRecord {
  auditID: string;
  requestURI: string;
  attributes: RequestAttributes;
  user?: UserInfo;
  sourceIPs: string[];
  userAgent?: string;
  code: number;
  body?: unknown;
  received: Date;
  completed: Date;
}

export function auditEvent(level: Exclude<AuditLevel, 'None'>, r: RequestRecord, omitManagedFields = false): AuditEvent {
  const attrs = r.attributes;
  const objectRef = 'resource' in attrs ? objectRefOf(attrs.resource, r.body) : undefined;
  const user = r.user
    ? { username: r.user.username, ...(r.user.uid ? { uid: r.user.uid } : {}), groups: [...r.user.groups] }
    : { ...ANONYMOUS, groups: [...ANONYMOUS.groups] };
  const ev: AuditEvent = {
    kind: 'Event',
    apiVersion: 'audit.k8s.io/v1',
    level,
    auditID: r.auditID,
    stage: 'ResponseComplete',
    requestURI: r.requestURI,
    verb: 'resource' in attrs ? attrs.resource.verb : attrs.nonResource.verb,
    user,
    sourceIPs: r.sourceIPs,
    ...(r.userAgent ? { userAgent: r.userAgent } : {}),
    ...(objectRef ? { objectRef } : {}),
    responseStatus: { metadata: {}, code: r.code, ...(r.code >= 400 ? { status: 'Failure' as const } : {}) },
    ...approvalAnnotations(objectRef, r),
    requestReceivedTimestamp: r.received.toISOString(),
    stageTimestamp: r.completed.toISOString(),
  };
  if (level === 'Request') {
    const obj = loggableRequestObject(objectRef?.resource, r.body);
    if (obj !== undefined) ev.requestObject = omitManagedFields ? withoutManagedFields(obj) : obj;
  }
  return ev;
}

function objectRefOf(a: Extract<RequestAttributes, { resource: unknown }>['resource'], body: unknown): ObjectReference {
  // A create is authorized without a name (the object does not exist yet); the log names what
  // was asked for, as kube-apiserver fills objectRef.name from the object.
  const name = a.name || (a.verb === 'create' && !a.subresource ? nameInBody(body) : '');
  const ref: ObjectReference = {};
  const set = (k: keyof ObjectReference, v: string | undefined): void => void (v ? (ref[k] = v) : undefined);
  set('resource', a.resource);
  set('namespace', a.namespace);
  set('name', name);
  set('subresource', a.subresource);
  set('apiGroup', a.group);
  set('apiVersion', a.version);
  return ref;
}

function nameInBody(body: unknown): string {
  if (!body || typeof body !== 'object' || Array.isArray(body) || Buffer.isBuffer(body)) return '';
  const b = body as { name?: unknown; metadata?: { name?: unknown } };
  if (typeof b.name === 'string') return b.name;
  if (b.metadata && typeof b.metadata === 'object' && typeof b.metadata.name === 'string') return b.metadata.name;
  return '';
}

/** The policy's omitManagedFields: the body without metadata.managedFields (a copy). */
function withoutManagedFields(obj: unknown): unknown {
  const o = obj as { metadata?: unknown };
  if (!o || typeof o !== 'object' || !o.metadata || typeof o.metadata !== 'object' || !('managedFields' in o.metadata)) return obj;
  const { managedFields: _, ...metadata } = o.metadata as Record<string, unknown>;
  return { ...o, metadata };
}

/**
 * A decision on a tool-call approval (create on agents/approvals) is recorded with its decision
 * and the approval's id even at Metadata level, which logs no body: who decided what is what an
 * auditor of approvals asks. The id is the REST path's last segment, or the aggregated body's `id`.
 */
function approvalAnnotations(ref: ObjectReference | undefined, r: RequestRecord): { annotations?: Record<string, string> } {
  if (ref?.resource !== 'agents' || ref.subresource !== 'approvals' || r.body === null || typeof r.body !== 'object') return {};
  const body = r.body as { decision?: unknown; id?: unknown };
  if (typeof body.decision !== 'string') return {};
  const fromPath = /\/approvals\/([^/?]+)/.exec(r.requestURI)?.[1];
  const id = fromPath ? decodeURIComponent(fromPath) : typeof body.id === 'string' ? body.id : '';
  return { annotations: { 'agentplane.io/approval-decision': body.decision.slice(0, 16), ...(id ? { 'agentplane.io/approval-id': id.slice(0, 128) } : {}) } };
}
