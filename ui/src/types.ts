// The REST mirror's shapes the dashboard reads (pkg/api; the UI is bundled apart from the server).

export interface Agent {
  name: string;
  namespace: string;
  model: string;
  status: string;
  taskStatus: string;
  lastTaskMessage: string;
  createdAt: string;
  role: string;
  connectors: string[];
  lifecycle: string;
  priority?: number;
  /** While Queued: the agent's place in its namespace's line (docs/admission.md). */
  queuePosition?: number;
  /** Checked by the model proxy before every model request (docs/budgets.md). */
  budget?: AgentBudget;
  /** Its ended tasks' model spend: in all, this UTC day and month. */
  spend?: Spend & { day?: Spend & { start: string }; month?: Spend & { start: string } };
}

export interface Spend {
  tokens: number;
  costUsd: number;
}

export interface AgentBudget {
  maxTokens?: number;
  maxCostUsd?: number;
  perTask?: boolean;
  onExceed: 'Stop' | 'Pause';
}

/** A Schedule with its last and next run (GET /api/v1/schedules; docs/schedules.md). */
export interface Schedule {
  name: string;
  namespace: string;
  agent: string;
  cron: string;
  timeZone?: string;
  instructions: string;
  concurrencyPolicy: 'Allow' | 'Forbid' | 'Replace';
  suspend: boolean;
  startingDeadlineSeconds?: number;
  lastScheduleTime: string | null;
  nextScheduleTime: string | null;
  lastRun: { time: string; outcome: string; task?: number; reason?: string; triggered?: boolean } | null;
}

/** A namespace's Budget with its current period's spend (GET /api/v1/budgets). */
export interface Budget {
  name: string;
  namespace: string;
  period: 'day' | 'month';
  maxTokens?: number;
  maxCostUsd?: number;
  onExceed: 'Stop' | 'Pause';
  periodStart: string;
  spent: Spend;
  used: number;
  agents: ({ name: string } & Spend)[];
}

/** "Queued #3" while the agent waits in line, else its status. */
export const statusLabel = (a: Pick<Agent, 'status' | 'queuePosition'>): string =>
  a.status === 'Queued' && a.queuePosition ? `Queued #${a.queuePosition}` : a.status;

export interface AgentEvent {
  seq: number;
  agentName: string;
  namespace: string;
  task: number;
  type: string;
  timestamp: string;
  payload: Record<string, any>;
}

export interface Squad {
  name: string;
  namespace: string;
  phase: string;
  members: { name: string; phase: string; taskStatus: string }[];
  orphanedSince: string | null;
  breakUpRequested: boolean;
  createdAt: string;
}

export interface Connector {
  name: string;
  namespace: string;
  displayName: string;
  url: string;
  agentNames: string[];
  attachedAgents: number;
  status: { phase?: string; message?: string; [k: string]: unknown };
  createdAt: string;
}

export interface WorkspaceView {
  path: string;
  type: 'file' | 'directory';
  entries?: { name: string; type: string; size?: number }[];
  size?: number;
  content?: string;
  binary?: boolean;
  truncated: boolean;
}

/** An agent's checkpoint as the REST mirror shows it (docs/checkpoints.md). */
export interface Checkpoint {
  name: string;
  agent: string;
  namespace: string;
  squad: string | null;
  phase: 'Pending' | 'Ready' | 'Failed';
  takenAt: string | null;
  task: number | null;
  duringTask: boolean;
  bytes: number | null;
  message: string;
  createdAt: string;
  fromCheckpoint: string;
}

/** A Trigger (GET /api/v1/triggers): a signed POST to hookPath starts a task on the agent. */
export interface Trigger {
  name: string;
  namespace: string;
  agent: string;
  hookPath: string;
  instructions: string;
  secretRef: { name: string; key: string };
  signature: { header: string; prefix: string };
  deliveryIdHeader: string;
  lastDelivery?: { time: string; id: string; result: string; task?: number; message?: string };
  counts?: Record<string, number>;
}

/** A Webhook (GET /api/v1/webhooks): chosen agent events delivered, signed, to a URL. */
export interface Webhook {
  name: string;
  namespace: string;
  url: string;
  eventTypes: string[];
  agents?: string[];
  delivered?: number;
  failed?: number;
  lastDelivery?: WebhookAttempt;
  lastFailures?: WebhookAttempt[];
}

export interface WebhookAttempt {
  time: string;
  agent: string;
  seq: number;
  type: string;
  status: number;
  message?: string;
}
