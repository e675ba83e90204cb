// Prometheus metrics (prom-client), all named agentplane_*. One Metrics per service instance,
// with its own registry, so tests can run several servers in one process.

import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * When an agent's worker was asked for (wall clock, ms) and why: its first worker (create) or one
 * started again (wake). The controller hands it with the task to the model proxy's meter, which
 * observes agentplane_agent_first_model_request_seconds at the task's first model request.
 */
export interface WorkerStart {
  start: 'create' | 'wake';
  at: number;
}

export class Metrics {
  readonly registry = new Registry();

  readonly httpRequests = new Counter({
    name: 'agentplane_http_requests_total',
    help: 'HTTP requests by route, method and status code.',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [this.registry],
  });

  readonly httpDuration = new Histogram({
    name: 'agentplane_http_request_duration_seconds',
    help: 'HTTP request duration by route and method; watches, followed logs and WebSockets are left out (their duration is how long the client stayed).',
    labelNames: ['route', 'method'] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  readonly writeWait = new Histogram({
    name: 'agentplane_http_write_wait_seconds',
    help: 'How long writes (POST, PUT, PATCH, DELETE) waited for their turn before running; writes take turns between namespaces.',
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  readonly agents = new Gauge({
    name: 'agentplane_agents',
    help: 'Agents by status.',
    labelNames: ['status'] as const,
    registers: [this.registry],
  });

  readonly tasks = new Counter({
    name: 'agentplane_tasks_total',
    help: 'Finished tasks by outcome (completed, error, cancelled).',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly taskDuration = new Histogram({
    name: 'agentplane_task_duration_seconds',
    help: 'Duration of completed tasks as the engine reports it.',
    buckets: [0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600],
    registers: [this.registry],
  });

  readonly cost = new Counter({
    name: 'agentplane_task_cost_usd_total',
    help: "Model cost of tasks in US dollars, each task's own however it ended: the engine's estimate, capped by what the model proxy metered.",
    registers: [this.registry],
  });

  readonly namespaceCost = new Counter({
    name: 'agentplane_namespace_cost_usd_total',
    help: 'Model cost of tasks in US dollars by namespace: the figures agentplane_task_cost_usd_total adds up, split by the namespace of the agent that ran the task.',
    labelNames: ['namespace'] as const,
    registers: [this.registry],
  });

  readonly modelTokens = new Counter({
    name: 'agentplane_model_tokens_total',
    help: 'Model tokens by namespace, agent, model and kind (input, output, cache_read, cache_creation), from the responses passing the model proxy.',
    labelNames: ['namespace', 'agent', 'model', 'kind'] as const,
    registers: [this.registry],
  });

  readonly budgetSpentTokens = new Gauge({
    name: 'agentplane_budget_spent_tokens',
    help: "Model tokens a budget counts as spent, as of the model proxy's latest check: scope agent (name: the agent; period task or total) or namespace (name: the Budget; period day or month).",
    labelNames: ['namespace', 'scope', 'name', 'period'] as const,
    registers: [this.registry],
  });

  readonly budgetSpentUsd = new Gauge({
    name: 'agentplane_budget_spent_usd',
    help: 'Model cost in US dollars a budget counts as spent (list prices), as of the latest check; labels as agentplane_budget_spent_tokens.',
    labelNames: ['namespace', 'scope', 'name', 'period'] as const,
    registers: [this.registry],
  });

  readonly budgetActions = new Counter({
    name: 'agentplane_budget_actions_total',
    help: 'What budgets did to tasks: action warning (80% reached), stop (task ended) or pause (task held), by namespace and scope (agent or namespace).',
    labelNames: ['namespace', 'scope', 'action'] as const,
    registers: [this.registry],
  });

  readonly modelRetries = new Counter({
    name: 'agentplane_model_retries_total',
    help: 'Model requests the model proxy retried, by the status that caused it (0: timeout or connection failure).',
    labelNames: ['status'] as const,
    registers: [this.registry],
  });

  readonly eventsAppended = new Counter({
    name: 'agentplane_events_appended_total',
    help: 'Agent events appended to the event store, by type.',
    labelNames: ['type'] as const,
    registers: [this.registry],
  });

  readonly firstModelRequest = new Histogram({
    name: 'agentplane_task_first_model_request_seconds',
    help: 'From a task handed to its worker to its first model request at the model proxy (engine start-up included when the engine was not warm).',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  readonly agentFirstModelRequest = new Histogram({
    name: 'agentplane_agent_first_model_request_seconds',
    help: "From the agent controller asking for an agent's worker to the first model request of the task the worker then ran, by start: create (the agent's first worker) or wake (a worker started again for an agent that ran tasks before: after an idle release, a sleep or a restart).",
    labelNames: ['start'] as const,
    buckets: [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });

  readonly workerStart = new Histogram({
    name: 'agentplane_worker_start_seconds',
    help: 'From the agent controller asking the runtime for a worker (a new agent, a wake, a task after an idle release) to that worker connected: what a create or wake waits for.',
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });

  readonly workerStartFailures = new Counter({
    name: 'agentplane_worker_start_failures_total',
    help: 'Workers that exited before they connected (after 3 in a row the agent is marked Failed and its waiting task ends as an error).',
    registers: [this.registry],
  });

  readonly eventLoopDelay = new Histogram({
    name: 'agentplane_event_loop_delay_seconds',
    help: "How late a timer of the server's event loop fired (sampled every 20 ms): what any request, worker message or model call waits behind.",
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2],
    registers: [this.registry],
  });

  readonly workersReleased = new Counter({
    name: 'agentplane_workers_released_total',
    help: 'Idle agents whose worker (and engine) was released after the idle timeout.',
    registers: [this.registry],
  });

  readonly workerSlots = new Gauge({
    name: 'agentplane_worker_slots',
    help: 'Workers that may run at once (--max-workers); 0 when unlimited.',
    registers: [this.registry],
  });

  readonly workersWaiting = new Gauge({
    name: 'agentplane_workers_waiting',
    help: 'Agents waiting for a worker because all worker slots are in use (WorkerReady reason Queued).',
    registers: [this.registry],
  });

  readonly warmPoolSlots = new Gauge({
    name: 'agentplane_warm_pool_slots',
    help: "Warm-pool workers (local processes, --warm-pool; or pods, a template's warmPool) started ahead of any agent and ready to be taken.",
    registers: [this.registry],
  });

  readonly warmPoolClaims = new Counter({
    name: 'agentplane_warm_pool_claims_total',
    help: 'New solo agents that took a ready warm-pool worker (hit) or found none ready and started cold (miss).',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });

  readonly wsClients = new Gauge({
    name: 'agentplane_websocket_clients',
    help: 'Open event WebSocket connections.',
    registers: [this.registry],
  });

  readonly wsFellBehind = new Counter({
    name: 'agentplane_websocket_fell_behind_total',
    help: 'Event WebSockets closed with 4008 because the client did not read fast enough.',
    registers: [this.registry],
  });

  readonly apiReads = new Counter({
    name: 'agentplane_api_reads_total',
    help: 'Get and list requests of the APIs by kind and where they were answered from: the informer cache, or storage (a consistent read with several replicas, or a cache that could not show it was current).',
    labelNames: ['kind', 'source'] as const,
    registers: [this.registry],
  });

  readonly ready = new Gauge({
    name: 'agentplane_ready',
    help: 'Whether each check of /readyz passed (1) or not (0) when last run (by /readyz, and every 10 s): check informers (the caches listed) or event store (reachable).',
    labelNames: ['check'] as const,
    registers: [this.registry],
  });

  readonly isLeader = new Gauge({
    name: 'agentplane_leader',
    help: 'Whether this replica holds the leader Lease and runs the reconcilers (1) or not (0); always 1 without leader election.',
    registers: [this.registry],
  });

  readonly leaderTransitions = new Counter({
    name: 'agentplane_leader_transitions_total',
    help: 'Changes of the leader Lease holder this replica observed (including to itself).',
    registers: [this.registry],
  });

  readonly workerReconnects = new Counter({
    name: 'agentplane_worker_reconnects_total',
    help: 'Worker control channels opened again by a worker that had been connected before (to this or another replica).',
    registers: [this.registry],
  });

  constructor(opts: { defaultMetrics?: boolean } = {}) {
    // Every outcome and start from boot, at zero: a rate or quantile over them then has a series
    // to start from, instead of a series that appears at its first event (whose rate is unknown).
    for (const outcome of ['completed', 'error', 'cancelled']) this.tasks.inc({ outcome }, 0);
    for (const start of ['create', 'wake']) this.agentFirstModelRequest.zero({ start });
    if (opts.defaultMetrics) collectDefaultMetrics({ register: this.registry, prefix: 'agentplane_process_' });
  }

  /** Sets the agents gauge from a fresh reading each time it is scraped. */
  collectAgentsBy(read: () => Promise<Record<string, number>>): void {
    collectEachScrape(this.agents, 'status', read);
  }
}

/** Replaces a one-label gauge's values with a fresh reading each time it is scraped. */
function collectEachScrape<L extends string>(gauge: Gauge<L>, label: L, read: () => Promise<Record<string, number>>): void {
  (gauge as unknown as { collect: () => Promise<void> }).collect = async () => {
    gauge.reset();
    for (const [value, n] of Object.entries(await read())) gauge.set({ [label]: value } as Partial<Record<L, string>>, n);
  };
}
