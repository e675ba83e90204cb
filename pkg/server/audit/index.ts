// The audit log (docs/audit.md): mutating requests as audit.k8s.io/v1 Events, one JSON line each.

export { ANONYMOUS, auditEvent, type AuditEvent, type ObjectReference } from './event.js';
export { installAuditLog, type AuditOptions } from './hook.js';
export { AUDIT_LEVELS, type AuditLevel, type AuditPolicy, decide, isAuditLevel, isMutating, levelPolicy, MUTATING_VERBS, writesAnything } from './policy.js';
export { AuditPolicyError, loadAuditPolicy, parseAuditPolicy } from './policy-file.js';
export { loggableRequestObject, REDACTED } from './redact.js';
export { type AuditSink, openAuditSink } from './sink.js';
