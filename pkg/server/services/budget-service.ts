// Namespace Budgets behind the REST mirror (/api/v1/budgets; docs/budgets.md). Rules live in the
// budget strategy; reads go through the read cache, which computes each Budget's spend.

import {
  BUDGET_KIND,
  type Budget,
  type BudgetPatchRequest,
  budgetPatchRequestSchema,
  type BudgetRequest,
  budgetRequestSchema,
  validateBudgetLimits,
} from '../../api/budget.js';
import { type Cause, invalid } from '../../api/errors.js';
import { DEFAULT_NAMESPACE } from '../../api/meta.js';
import { validateSchema } from '../../api/validation.js';
import type { ReadCache } from '../../registry/cache/reads.js';
import { REST_OWNER, type Registry } from '../../registry/registry.js';
import { type Page, type PageQuery, readOne, readPage } from './paging.js';

const LIMITS = ['maxTokens', 'maxCostUsd'] as const;

export class BudgetService {
  constructor(
    private readonly budgets: Registry<Budget>,
    private readonly reads: ReadCache<Budget>,
  ) {}

  async create(body: unknown): Promise<Budget> {
    const req = body as BudgetRequest;
    const causes = validateSchema(budgetRequestSchema, body);
    if (!causes.length) causes.push(...validateBudgetLimits(req, '(body)'));
    if (causes.length) throw invalid(BUDGET_KIND, typeof req?.name === 'string' ? req.name : undefined, causes);
    const namespace = req.namespace ?? DEFAULT_NAMESPACE;
    const { name: _n, namespace: _ns, ...spec } = req;
    await this.budgets.create(
      {
        apiVersion: '',
        kind: BUDGET_KIND,
        metadata: { name: req.name, namespace, uid: '', resourceVersion: '', generation: 0, creationTimestamp: '' },
        spec,
        status: {},
      },
      { owner: REST_OWNER },
    );
    return this.get(namespace, req.name);
  }

  get(namespace: string, name: string): Promise<Budget> {
    return readOne(this.reads, this.budgets, BUDGET_KIND, namespace, name);
  }

  list(namespace?: string, page: PageQuery = {}): Promise<Page<Budget>> {
    return readPage(this.reads, namespace, page, (b) => !b.metadata.deletionTimestamp);
  }

  /** The fields given change; a limit given as null is removed (one must stay). */
  async patch(namespace: string, name: string, body: unknown): Promise<Budget> {
    const rec = isRecord(body) ? body : undefined;
    const removed = LIMITS.filter((k) => rec?.[k] === null);
    const checked = rec && removed.length ? Object.fromEntries(Object.entries(rec).filter(([k]) => !removed.includes(k as (typeof LIMITS)[number]))) : body;
    const causes: Cause[] = removed.length && !Object.keys(checked as object).length ? [] : validateSchema(budgetPatchRequestSchema, checked);
    if (causes.length) throw invalid(BUDGET_KIND, name, causes);
    const req = body as BudgetPatchRequest;
    await this.budgets.update(
      namespace,
      name,
      (b) => {
        for (const k of LIMITS) {
          if (req[k] === null) delete b.spec[k];
          else if (req[k] !== undefined) b.spec[k] = req[k];
        }
        if (req.period !== undefined) b.spec.period = req.period;
        if (req.onExceed !== undefined) b.spec.onExceed = req.onExceed;
      },
      { owner: REST_OWNER },
    );
    return this.get(namespace, name);
  }

  async delete(namespace: string, name: string): Promise<Budget> {
    const b = await this.get(namespace, name);
    await this.budgets.delete(namespace, name);
    return b;
  }
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
