// The server's side of a pod's model-proxy sidecar: the sidecar holds the model key and forwards
// the agent's requests itself, so the server learns of them only from its reports. A report is
// authenticated by the agent's report credential, which only the sidecar holds (mounted into its
// container alone, never into the worker's: the agent's tools can read the model credential and
// must not be able to post usage), read strictly, and applied exactly as the server's own proxy
// applies what it sees: a request's arrival and usage to the meter, retries and failures to the
// agent's task. Only a server whose pods have sidecars takes reports at all.

import type { ObjectRef } from '../api/meta.js';
import type { BudgetAnswer, ModelReport } from '../api/worker-protocol.js';
import type { CredentialRegistry, ModelGrant } from './credentials.js';
import type { UsageMeter } from './meter.js';
import type { BudgetGate, ModelProxyEvents } from './proxy.js';
import { USAGE_KINDS, type TokenUsage } from './usage.js';

/** `budgeted`: whether budgets apply to the agent (the sidecar then asks before each request). */
export type ReportOutcome =
  { status: 204; budgeted: boolean } | { status: 200; budgeted: boolean; answer: BudgetAnswer } | { status: 400 | 401; message: string };

/** The server's budget guard as reports use it. */
export interface ReportBudgets extends BudgetGate {
  applies(ref: ObjectRef): boolean;
}

const FAILURE_REASONS = new Set(['ModelCredentialRejected', 'ModelUnavailable']);
/** Long enough for any real error message; a report is not a place to ship data. */
const MAX_MESSAGE = 4096;

export class ModelReports {
  constructor(
    private readonly o: {
      credentials: Pick<CredentialRegistry, 'authenticateReport'>;
      meter: Pick<UsageMeter, 'record' | 'modelRequested' | 'taskStartedAt' | 'taskDeadlineMs'>;
      events?: ModelProxyEvents;
      /** The task deadline when the task's template sets none (the server's --model-task-deadline). */
      taskDeadlineMs: number;
      /** Counts retries by status, as the server's proxy does for its own. */
      onRetry?: (status: number) => void;
      budgets?: ReportBudgets;
    },
  ) {}

  /**
   * Resolves once the report is applied: a failure has ended the task before the sidecar hears
   * back. An `admit` resolves once the budgets decide (a held task's only when raised, or when
   * `signal` says the sidecar gave up).
   */
  async apply(credential: string | undefined, body: unknown, signal?: AbortSignal): Promise<ReportOutcome> {
    const grant = this.o.credentials.authenticateReport(credential);
    if (!grant) return { status: 401, message: "a valid report credential (a pod's model-proxy sidecar's) is required" };
    const report = parseReport(body);
    if (typeof report === 'string') return { status: 400, message: report };
    if (report.type === 'admit') {
      const answer = this.o.budgets ? await this.o.budgets.admit(grant, signal ?? new AbortController().signal) : { allow: true as const };
      return { status: 200, budgeted: this.budgeted(grant), answer };
    }
    await this.applyTo(grant, report);
    return { status: 204, budgeted: this.budgeted(grant) };
  }

  private budgeted(grant: ModelGrant): boolean {
    return this.o.budgets?.applies(grant.ref) ?? false;
  }

  private async applyTo(grant: ModelGrant, r: Exclude<ModelReport, { type: 'admit' }>): Promise<void> {
    if (r.type === 'requested') this.o.meter.modelRequested(grant.ref, grant.uid);
    else if (r.type === 'usage') this.o.meter.record(grant, r.model, r.usage);
    else if (r.type === 'retry') {
      const gaveUp = this.pastDeadline(grant, r.payload);
      if (gaveUp) return void (await this.o.events?.failed(grant, gaveUp));
      this.o.onRetry?.(r.payload.status);
      this.o.events?.retry(grant, r.payload);
    } else await this.o.events?.failed(grant, r.error);
  }

  /**
   * A sidecar knows no task, only requests: it bounds each by the longest deadline of its pod's
   * templates. The server knows when the task began and its template's deadline, and ends the
   * task when the retry would wait past it (the worker then stops the task, which ends the
   * sidecar's request too).
   */
  private pastDeadline(grant: ModelGrant, p: Extract<ModelReport, { type: 'retry' }>['payload']): { message: string; reason: 'ModelUnavailable' } | undefined {
    const started = this.o.meter.taskStartedAt(grant.ref, grant.uid);
    if (started === undefined) return undefined;
    const deadlineMs = this.o.meter.taskDeadlineMs(grant.ref, grant.uid) ?? this.o.taskDeadlineMs;
    if (Date.now() + p.delayMs < started + deadlineMs) return undefined;
    const retries = p.attempt - 1;
    return {
      message: `the model is unavailable (HTTP ${p.status}); gave up after ${retries} ${retries === 1 ? 'retry' : 'retries'}: the task's model deadline (${deadlineMs / 1000} s) would pass`,
      reason: 'ModelUnavailable',
    };
  }
}

/** The report, or what is wrong with it. */
export function parseReport(b: unknown): ModelReport | string {
  if (!isRecord(b)) return 'a report is a JSON object';
  if (b.type === 'requested') return { type: 'requested' };
  if (b.type === 'admit') return { type: 'admit' };
  if (b.type === 'usage') {
    if (typeof b.model !== 'string' || !b.model || b.model.length > 256) return 'usage.model must be a model name';
    if (!isRecord(b.usage)) return 'usage.usage must be an object';
    const usage = {} as TokenUsage;
    for (const key of Object.values(USAGE_KINDS)) {
      const v = b.usage[key] ?? 0;
      if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) return `usage.usage.${key} must be a non-negative integer`;
      usage[key] = v;
    }
    return { type: 'usage', model: b.model, usage };
  }
  if (b.type === 'retry') {
    const p = b.payload;
    if (!isRecord(p)) return 'retry.payload must be an object';
    for (const k of ['attempt', 'of', 'delayMs', 'status'] as const) {
      if (typeof p[k] !== 'number' || !Number.isSafeInteger(p[k]) || p[k] < 0) return `retry.payload.${k} must be a non-negative integer`;
    }
    if (typeof p.message !== 'string' || p.message.length > MAX_MESSAGE) return 'retry.payload.message must be a string';
    return {
      type: 'retry',
      payload: { attempt: p.attempt as number, of: p.of as number, delayMs: p.delayMs as number, status: p.status as number, message: p.message },
    };
  }
  if (b.type === 'failed') {
    const e = b.error;
    if (!isRecord(e) || typeof e.message !== 'string' || e.message.length > MAX_MESSAGE || !FAILURE_REASONS.has(e.reason as string)) {
      return 'failed.error must be {message, reason: ModelCredentialRejected|ModelUnavailable}';
    }
    return { type: 'failed', error: { message: e.message, reason: e.reason as 'ModelCredentialRejected' | 'ModelUnavailable' } };
  }
  return 'type must be requested, admit, usage, retry or failed';
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
