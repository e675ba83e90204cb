// Per-agent model credentials: what a worker's engine presents to the model proxy instead of the
// model key. Issued when the runtime starts the agent's worker, bound to the agent's uid (this
// incarnation of the name), revoked when the worker stops or the agent is removed. Only the
// proxy accepts them; they are worthless anywhere else.

import { randomBytes, timingSafeEqual } from 'node:crypto';
import { type ObjectRef, refKey } from '../api/meta.js';

/** What a model credential entitles its holder to: calling the model for one agent incarnation. */
export interface ModelGrant {
  ref: ObjectRef;
  uid: string;
}

interface Entry extends ModelGrant {
  token: Buffer;
  /** The report credential of the agent's pod's model-proxy sidecar (cluster home), if issued. */
  report?: Buffer;
}

/** Recognisable in logs and leak scans; never a valid Anthropic key. */
export const CREDENTIAL_PREFIX = 'apmc_';
/**
 * A sidecar's report credential (./reports.ts): held by the pod's model-proxy sidecar only, never
 * by the worker container, so the agent's tools, which can read the model credential, cannot
 * post usage.
 */
export const REPORT_CREDENTIAL_PREFIX = 'apmr_';

export class CredentialRegistry {
  private readonly entries = new Map<string, Entry>();

  /** A fresh credential for the agent; the agent's earlier credential stops working. */
  issue(ref: ObjectRef, uid: string): string {
    const token = `${CREDENTIAL_PREFIX}${randomBytes(32).toString('base64url')}`;
    this.entries.set(refKey(ref), { ref: { namespace: ref.namespace, name: ref.name }, uid, token: Buffer.from(token) });
    return token;
  }

  /**
   * A fresh report credential for the agent's current credential (a pod's sidecar reports with it);
   * undefined when the agent has no credential. Replaces an earlier one.
   */
  issueReport(ref: ObjectRef): string | undefined {
    const e = this.entries.get(refKey(ref));
    if (!e) return undefined;
    const report = `${REPORT_CREDENTIAL_PREFIX}${randomBytes(32).toString('base64url')}`;
    e.report = Buffer.from(report);
    return report;
  }

  /**
   * Accepts `credential` (one this registry issued earlier, stored with the worker and read back
   * after a restart) for the agent incarnation `uid`, and its sidecar's `report` credential when
   * it had one; replaces the agent's earlier credentials.
   */
  adopt(ref: ObjectRef, uid: string, credential: string, report?: string): void {
    if (!credential.startsWith(CREDENTIAL_PREFIX)) throw new Error('not a model credential issued by agentplane');
    if (report !== undefined && !report.startsWith(REPORT_CREDENTIAL_PREFIX)) throw new Error('not a report credential issued by agentplane');
    this.entries.set(refKey(ref), {
      ref: { namespace: ref.namespace, name: ref.name },
      uid,
      token: Buffer.from(credential),
      ...(report ? { report: Buffer.from(report) } : {}),
    });
  }

  /**
   * Hands the credential issued for `from` (a warm-pool slot, started before any agent) to the
   * agent incarnation `uid` of `to`: the engine that holds it keeps it (its environment cannot
   * change), it now speaks for the agent, and the agent's earlier credential stops working.
   * False when `from` has none.
   */
  rebind(from: ObjectRef, to: ObjectRef, uid: string): boolean {
    const e = this.entries.get(refKey(from));
    if (!e) return false;
    this.entries.delete(refKey(from));
    this.entries.set(refKey(to), { ref: { namespace: to.namespace, name: to.name }, uid, token: e.token, ...(e.report ? { report: e.report } : {}) });
    return true;
  }

  revoke(ref: ObjectRef): void {
    this.entries.delete(refKey(ref));
  }

  /** The grant a credential belongs to, compared in constant time; undefined when unknown. */
  authenticate(credential: string | undefined): ModelGrant | undefined {
    return this.find(credential, (e) => e.token);
  }

  /** The grant a sidecar's report credential belongs to (never a model credential's). */
  authenticateReport(credential: string | undefined): ModelGrant | undefined {
    return this.find(credential, (e) => e.report);
  }

  private find(credential: string | undefined, secret: (e: Entry) => Buffer | undefined): ModelGrant | undefined {
    if (!credential) return undefined;
    const given = Buffer.from(credential);
    let found: Entry | undefined;
    // Every entry is compared, so the time taken does not tell which one matched.
    for (const e of this.entries.values()) {
      const want = secret(e);
      if (want && want.length === given.length && timingSafeEqual(want, given)) found = e;
    }
    return found ? { ref: found.ref, uid: found.uid } : undefined;
  }

  get size(): number {
    return this.entries.size;
  }
}
