// Tool-call approvals: an agent's policy (which tools wait for a person), the approvals its tasks
// ask for (kept in the agent's status, so a restart loses none) and the decision request. The
// worker applies the policy before the engine runs a tool; the server records, decides and hands
// the decision back (docs/approvals.md).

export type ApprovalDecision = 'allow' | 'deny';
export const APPROVAL_DECISIONS: readonly ApprovalDecision[] = ['allow', 'deny'];

/** How long an approval waits for a person by default, and at most (seconds). */
export const DEFAULT_APPROVAL_TIMEOUT_SECONDS = 600;
export const MAX_APPROVAL_TIMEOUT_SECONDS = 7 * 24 * 3600;
/** Who decided when nobody did in time. */
export const APPROVAL_TIMEOUT_DECIDER = 'system:agentplane:approval-timeout';

export interface ApprovalPolicy {
  /** Tool names that need a person's decision; `*` matches any characters (`mcp__github__*`). */
  tools: string[];
  /**
   * Bash commands that never need one, as patterns (`*` any characters) matched against the whole
   * command; a command with a shell operator (`;`, `&`, `|`, `$(`, backquote, redirection,
   * newline) never matches, so `git status*` does not let `git status; rm -rf ~` through.
   */
  allowedCommands?: string[];
  /** How long a request waits, in seconds (default 600, at most 7 days). */
  timeoutSeconds?: number;
  /** The decision once the timeout passes (default deny). */
  onTimeout?: ApprovalDecision;
}

/** One approval a task asked for, as the agent's status keeps it until the task ends. */
export interface Approval {
  /** The engine's tool-use id (the `id` of the matching tool_call event). */
  id: string;
  task: number;
  tool: string;
  /** The tool's input (cut to APPROVAL_INPUT_MAX_BYTES of JSON; the event carries all of it). */
  input: unknown;
  requestedAt: string;
  expiresAt: string;
  onTimeout: ApprovalDecision;
  decision?: ApprovalDecision;
  reason?: string;
  decidedBy?: string;
  decidedAt?: string;
  /** The worker took the decision (or no longer waited for it): nothing more to hand over. */
  handedOver?: boolean;
}

/** POST /api/v1/agents/:name/approvals/:id body. */
export interface ApprovalDecisionRequest {
  decision: ApprovalDecision;
  reason?: string;
}

/** The verb and resource a decider needs, as `approval_requested` names them. */
export const approvalDeciders = (namespace: string, name: string): string =>
  `users allowed to create agents/approvals for agent "${name}" in namespace "${namespace}"`;

export const APPROVAL_ID_PATTERN = '^[A-Za-z0-9_-]{1,128}$';
const TOOL_PATTERN = '^[A-Za-z0-9_.*-]{1,256}$';
/** The most of a tool's input the status keeps per approval. */
export const APPROVAL_INPUT_MAX_BYTES = 4096;

const decisionSchema = { type: 'string', enum: APPROVAL_DECISIONS, description: '"allow" or "deny"' } as const;

export const approvalPolicySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['tools'],
  description: 'tool calls that wait for a person to allow or deny them (docs/approvals.md)',
  properties: {
    tools: {
      type: 'array',
      maxItems: 64,
      items: { type: 'string', pattern: TOOL_PATTERN, description: 'a tool name or pattern (letters, digits, _ . - and * for any characters)' },
      'x-kubernetes-list-type': 'set',
      description: 'tool names needing approval; * matches any characters, e.g. ["Bash", "Write", "mcp__github__*"]',
    },
    allowedCommands: {
      type: 'array',
      maxItems: 64,
      items: { type: 'string', minLength: 1, maxLength: 1024 },
      'x-kubernetes-list-type': 'set',
      description: 'Bash commands that never need approval, as patterns over the whole command (* any characters); one with a shell operator never matches',
    },
    timeoutSeconds: {
      type: 'integer',
      minimum: 1,
      maximum: MAX_APPROVAL_TIMEOUT_SECONDS,
      description: `how long a request waits for a decision, in seconds (default ${DEFAULT_APPROVAL_TIMEOUT_SECONDS}, at most 7 days)`,
    },
    onTimeout: { ...decisionSchema, description: 'the decision once the timeout passes: "deny" (default) or "allow"' },
  },
} as const;

export const approvalSchema = {
  type: 'object',
  required: ['id', 'task', 'tool', 'requestedAt', 'expiresAt', 'onTimeout'],
  properties: {
    id: { type: 'string', description: "the engine's tool-use id (the tool_call event's id)" },
    task: { type: 'integer', minimum: 1 },
    tool: { type: 'string' },
    input: {
      description: "the tool's input (cut to 4 KiB of JSON; the approval_requested event carries all of it)",
      'x-kubernetes-preserve-unknown-fields': true,
    },
    requestedAt: { type: 'string', format: 'date-time' },
    expiresAt: { type: 'string', format: 'date-time', description: 'when the onTimeout decision applies' },
    onTimeout: decisionSchema,
    decision: decisionSchema,
    reason: { type: 'string' },
    decidedBy: { type: 'string', description: 'the user who decided, or system:agentplane:approval-timeout' },
    decidedAt: { type: 'string', format: 'date-time' },
    handedOver: { type: 'boolean', description: 'the worker took the decision' },
  },
} as const;

export const approvalDecisionRequestSchema = {
  $id: 'ApprovalDecisionRequest',
  type: 'object',
  additionalProperties: false,
  required: ['decision'],
  properties: {
    decision: decisionSchema,
    reason: { type: 'string', maxLength: 1024, description: 'why; a deny passes it to the model' },
  },
} as const;

/** `*` matches any run of characters; everything else itself. */
function globMatch(pattern: string, value: string): boolean {
  const re = pattern
    .split('*')
    .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('[\\s\\S]*');
  return new RegExp(`^${re}$`).test(value);
}

/** Shell syntax that runs more than one command, or writes where the pattern did not say. */
const SHELL_OPERATORS = /[;&|`<>\n\r]|\$\(/;

/** Whether the policy sends this tool call to a person. */
export function needsApproval(policy: ApprovalPolicy | undefined, tool: string, input: unknown): boolean {
  if (!policy || !policy.tools.some((p) => globMatch(p, tool))) return false;
  const command = (input as { command?: unknown } | null)?.command;
  if (tool === 'Bash' && typeof command === 'string' && !SHELL_OPERATORS.test(command)) {
    const c = command.trim();
    if ((policy.allowedCommands ?? []).some((p) => globMatch(p, c))) return false;
  }
  return true;
}

/** Records a decision on an approval of the status: the approval, or why it cannot (unknown id, decided already). */
export function decideApproval(
  approvals: Approval[] | undefined,
  id: string,
  d: { decision: ApprovalDecision; reason?: string; decidedBy: string; at: string },
): Approval | { missing: true } | { decided: Approval } {
  const a = approvals?.find((x) => x.id === id);
  if (!a) return { missing: true };
  if (a.decision) return { decided: a };
  a.decision = d.decision;
  if (d.reason) a.reason = d.reason;
  a.decidedBy = d.decidedBy;
  a.decidedAt = d.at;
  return a;
}
