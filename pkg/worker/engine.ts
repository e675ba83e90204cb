// Runs an agent's tasks on the Claude Agent SDK in its workspace and turns the engine's messages
// into agentplane events. Everything the engine does is real: its tools act on the workspace, and
// its session persists under <workspace>/.claude, so a new engine process resumes it. Between
// tasks the engine stays up (a warm session, engine-session.ts) until its settings change, the
// worker stops or the agent's idle worker is released.

import type { McpServerConfig, SDKMessage } from '@anthropic-ai/claude-agent-sdk';
import type { EventDraft } from '../api/event.js';
import { connectorGatewayPath, type McpServerSpec, type PrestartSettings, type TaskMessage } from '../api/worker-protocol.js';
import type { Logger } from '../observability/logger.js';
import { AGENTPLANE_MCP_SERVER, agentplaneToolServer, type ServerCall } from './agentplane-tools.js';
import { ApprovalGate } from './approval-gate.js';
import { attachmentsPrompt, materialize, type Materialized } from './attachments.js';
import { EngineSession } from './engine-session.js';
import { MEMORY_SERVER, memoryServer } from './memory-tools.js';
import { systemPromptFor } from './role-prompts.js';
import { TaskInput } from './task-input.js';

export interface EngineEnv {
  workspace: string;
  /** The model proxy's endpoint and the agent's credential for it; never logged, never put in an event. */
  apiKey?: string;
  baseUrl?: string;
  /**
   * The server the worker dials (AGENTPLANE_SERVER_URL): connectors are reached through its
   * gateway, with the same credential the model proxy takes (`apiKey`).
   */
  serverUrl?: string;
  /** A squad member's view of its squad: one link per member to that member's workspace. */
  squadDir?: string;
  /** Extra environment for the engine (e.g. PATH). */
  extraEnv?: Record<string, string>;
}

export type Emit = (draft: EventDraft) => void;

export interface TaskOutcome {
  kind: 'completed' | 'error' | 'cancelled';
  sessionId?: string;
}

/** The environment the engine process sees: minimal, so no server secret leaks into tools. */
export function engineEnvironment(env: EngineEnv): Record<string, string> {
  const pass = ['PATH', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR', 'NODE_EXTRA_CA_CERTS'];
  const out: Record<string, string> = {};
  for (const k of pass) if (process.env[k]) out[k] = process.env[k]!;
  Object.assign(out, {
    HOME: env.workspace,
    // The Bash tool runs bash: without SHELL the engine prefers zsh wherever zsh is installed,
    // so the same task would behave differently from host to host.
    SHELL: '/bin/bash',
    CLAUDE_CONFIG_DIR: `${env.workspace}/.claude`,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    // The model proxy's URL and this agent's credential for it (never the model key). The proxy
    // retries failed model requests and reports each retry, so the engine does not retry too.
    CLAUDE_CODE_MAX_RETRIES: '0',
    ...(env.apiKey ? { ANTHROPIC_API_KEY: env.apiKey } : {}),
    ...(env.baseUrl ? { ANTHROPIC_BASE_URL: env.baseUrl } : {}),
    // Bypass-permissions mode refuses to run as root outside a sandbox; the agent's workspace is
    // its sandbox here. In pods the worker runs as a non-root user and this is not needed.
    ...(process.getuid?.() === 0 ? { IS_SANDBOX: '1' } : {}),
    ...(env.squadDir ? { AGENTPLANE_SQUAD_DIR: env.squadDir } : {}),
    ...env.extraEnv,
  });
  return out;
}

/** How long an interrupted turn may take to end before its engine is killed (the session then resumes from disk). */
const INTERRUPT_GRACE_MS = 5_000;

/**
 * The agent's engine: one warm session (`EngineSession`) reused by task after task. A task whose
 * settings the running engine was not started with (model, system prompt, role, MCP servers)
 * closes it and opens another that resumes the same session from the workspace.
 */
export class Engine {
  private session?: EngineSession;
  /** The session started by `prestart` that no task has used yet. */
  private prestarted?: EngineSession;
  /** Engine processes started so far (for the worker's log and tests). */
  starts = 0;
  /** Tool calls the agent's approval policy holds, waiting for the server's decision. */
  readonly approvals = new ApprovalGate();

  constructor(
    private readonly env: EngineEnv,
    private readonly log?: Logger,
    /** Relays a manager's agentplane tool calls to the server; without it no engine gets those tools. */
    private readonly serverCall?: ServerCall,
  ) {}

  /**
   * Runs one task: its prompt, then follow-ups pushed to `input` while it runs. The task ends at
   * the first result with no follow-up still waiting; cancel (`signal`) interrupts the turn and
   * keeps the session for the next task.
   */
  async run(task: TaskMessage, emit: Emit, signal: AbortSignal, input = new TaskInput(task.instructions)): Promise<TaskOutcome> {
    emit({ type: 'task_started', payload: { instructions: task.instructions } });
    input.onFollowUp((content) => emit({ type: 'user_message', payload: { content } }));
    const toolNames = new Map<string, string>();
    /** The last real result held back while a follow-up or a compaction was still waiting. */
    let held: SDKMessage | undefined;
    let session: EngineSession | undefined;
    /** This task's cost so far: a task with follow-ups has a result per turn. */
    let cost: number | undefined;
    let interrupted = false;
    let grace: NodeJS.Timeout | undefined;
    const onAbort = (): void => {
      interrupted = true;
      input.discard(); // follow-ups not yet taken die with the task
      if (!session) return;
      const s = session;
      // Stopping the worker ends the engine too; a cancel only ends the turn.
      if (signal.reason === WORKER_STOPPING) return s.close();
      grace = setTimeout(() => s.close(), INTERRUPT_GRACE_MS);
      s.interrupt().catch(() => s.close());
    };
    signal.addEventListener('abort', onAbort, { once: true });

    try {
      // Cancelled before it began: the warm session is left as it is.
      if (signal.aborted) return cancelled(signal, emit, this.session?.sessionId, undefined);
      session = this.sessionFor(task, materialize(this.env.workspace, task.attachments));
      this.approvals.begin(task.approval, emit, task.carriedApprovals);
      session.feed.attach(input);
      for (;;) {
        const r = await session.next();
        if (r.done) break;
        const msg = r.value;
        if (msg.type === 'result') cost = (cost ?? 0) + session.costOf(msg);
        if (msg.type === 'user' && 'isReplay' in msg && msg.isReplay) {
          input.seen(msg.uuid);
          continue;
        }
        if (interrupted) {
          // What the interrupted turn still says is dropped; its result ends the task.
          if (msg.type === 'result') return cancelled(signal, emit, session.sessionId, cost);
          continue;
        }
        // A follow-up that came too late for this turn gets a turn of its own: this result is
        // not the task's end (its text was already reported as it came).
        if (msg.type === 'result' && input.pending) {
          if (!isLocalCommand(msg)) held = msg;
          continue;
        }
        if (msg.type === 'result') input.close(); // no follow-up after this is taken
        // A compaction (`/compact`, a local command) ends with a result of its own, empty: the
        // task's result is that of its last real turn (its cost counts all of them).
        const outcome = translate(msg.type === 'result' && isLocalCommand(msg) && held ? held : msg, emit, toolNames, cost ?? 0);
        if (outcome) return { ...outcome, sessionId: session.sessionId };
      }
      if (interrupted) return cancelled(signal, emit, session.sessionId, cost);
      emit({ type: 'error', payload: { message: 'the engine ended without a result', reason: 'EngineError', ...spent(cost) } });
      return { kind: 'error', sessionId: session.sessionId };
    } catch (err) {
      if (interrupted) return cancelled(signal, emit, session?.sessionId, cost);
      emit({ type: 'error', payload: { message: errorMessage(err), reason: 'EngineError', ...spent(cost) } });
      return { kind: 'error', sessionId: session?.sessionId };
    } finally {
      if (grace) clearTimeout(grace);
      this.approvals.end();
      input.close();
      signal.removeEventListener('abort', onAbort);
    }
  }

  /**
   * Starts the engine before any task (a warm-pool slot): the SDK loaded, the engine process
   * initialised and waiting for its first message. A first task with these settings and no
   * session to resume takes it; any other task closes it and starts its own. Resolves once the
   * engine has initialised (in streaming-input mode it does so before the first message), or
   * failed to: never rejects (a dead session is replaced by the first task).
   */
  async prestart(settings: PrestartSettings): Promise<void> {
    if (this.session) return;
    const task: TaskMessage = { type: 'task', taskId: 0, instructions: '', model: settings.model, role: settings.role, mcpServers: [] };
    this.starts++;
    const session = new EngineSession(settingsKey(task, this.env, NONE), sessionOptions(task, this.env, undefined, this.approvals, NONE, this.serverCall));
    this.session = this.prestarted = session;
    const t0 = Date.now();
    try {
      await session.initialized();
      this.log?.info({ model: settings.model, role: settings.role, ms: Date.now() - t0 }, 'engine: pre-started a session');
    } catch (err) {
      this.log?.warn({ err: errorMessage(err) }, 'engine: the pre-started session failed to initialise');
      if (this.session === session) this.close();
      this.prestarted = undefined;
    }
  }

  /** Ends the engine process (the worker stops, or its agent went idle). */
  close(): void {
    this.session?.close();
    this.session = undefined;
  }

  /** The warm session when it fits the task, else a new one resuming the agent's session. */
  private sessionFor(task: TaskMessage, att: Materialized): EngineSession {
    const key = settingsKey(task, this.env, att);
    const warm = this.session;
    const prestarted = warm !== undefined && warm === this.prestarted;
    this.prestarted = undefined;
    // A pre-started session holds no conversation: it serves a task that resumes none.
    if (warm?.alive && warm.key === key && !(prestarted && task.resume)) {
      if (prestarted) this.log?.info('engine: the task takes the pre-started session');
      return warm;
    }
    // The warm session knows the newest session id (a cancelled task records none on the agent).
    const resume = (prestarted ? undefined : warm?.sessionId) ?? task.resume;
    if (warm) {
      const reason = prestarted ? 'pre-started with other settings' : warm.alive ? 'settings changed' : 'engine ended';
      this.log?.info({ reason }, 'engine: starting a new session that resumes the last');
      warm.close();
    }
    this.starts++;
    this.session = new EngineSession(key, sessionOptions(task, this.env, resume, this.approvals, att, this.serverCall));
    return this.session;
  }
}

/** The abort reason the worker gives when it stops: the engine process goes too. */
export const WORKER_STOPPING = 'worker stopping';

/**
 * What a running engine process was started with: a task that differs here needs a new one. The
 * model too: the engine's in-place switch (`setModel`) runs its `/model` command, which writes a
 * note of it into the next user message, so the model would read it as the user's words; a new
 * process started with `--model` keeps the conversation clean, and model changes are rare.
 */
function settingsKey(task: TaskMessage, env: EngineEnv, att: Materialized): string {
  return JSON.stringify([task.model, promptOf(task, env, att), task.mcpServers, att.skillsKey]);
}

/** A task without skills or memories. */
const NONE: Materialized = { skillsKey: '', memories: [] };

const promptOf = (task: TaskMessage, env: EngineEnv, att: Materialized): string =>
  systemPromptFor(task.role, task.systemPrompt, env.squadDir) + attachmentsPrompt(att);

function sessionOptions(
  task: TaskMessage,
  env: EngineEnv,
  resume: string | undefined,
  approvals: ApprovalGate,
  att: Materialized,
  serverCall?: ServerCall,
): ConstructorParameters<typeof EngineSession>[1] {
  const memories: Record<string, ReturnType<typeof memoryServer>> = att.memories.length
    ? { [MEMORY_SERVER]: memoryServer({ ...env, names: att.memories.map((m) => m.name) }) }
    : {};
  // A manager's own tools (docs/messages.md), in the worker's process: a connector may not take the name.
  const own: Record<string, McpServerConfig> = task.role === 'manager' && serverCall ? { [AGENTPLANE_MCP_SERVER]: agentplaneToolServer(serverCall) } : {};
  return {
    cwd: env.workspace,
    model: task.model,
    // Not recorded with the session (the engine's default): a systemPrompt changed by POST or
    // PATCH must reach the session that resumes this one.
    systemPrompt: { type: 'custom', prompt: promptOf(task, env, att), snapshot: false },
    permissionMode: 'bypassPermissions',
    allowDangerouslySkipPermissions: true,
    // Bypass mode asks no permission callback; this hook is asked before every tool call and
    // holds those the task's approval policy names (approval-gate.ts). It runs in the worker,
    // outside the engine's reach: the sandbox stays as it was.
    hooks: approvals.hooks(),
    settingSources: [],
    env: engineEnvironment(env),
    ...(resume ? { resume } : {}),
    mcpServers: { ...Object.fromEntries(task.mcpServers.map((s) => [s.name, mcpServer(s, env)])), ...memories, ...own },
    // The agent's skills: a plugin directory agentplane writes (attachments.ts); the workspace's
    // own settings (.claude/settings.json, its hooks) are still not loaded (settingSources: []).
    ...(att.pluginDir ? { plugins: [{ type: 'local' as const, path: att.pluginDir, skipMcpDiscovery: true }] } : {}),
    // Over the engine's stdin, not its command line, where every local user could read the
    // agent's credential (`ps -eww`).
    mcpServersDelivery: 'initialize',
    // The engine echoes each user message it takes in; TaskInput counts follow-ups by it.
    extraArgs: { 'replay-user-messages': null },
  };
}

/**
 * A connector as the engine sees it: the server's gateway for it, authenticated with the agent's
 * model credential in the header the engine sends the model proxy. The connector's own URL and
 * secret never reach the engine: the gateway adds the secret and connects (docs/connectors.md).
 */
function mcpServer(s: McpServerSpec, env: EngineEnv): { type: 'http'; url: string; headers: Record<string, string>; alwaysLoad: true } {
  const url = new URL(connectorGatewayPath(s.namespace, s.name), env.serverUrl ?? 'http://127.0.0.1').toString();
  return { type: 'http', url, headers: env.apiKey ? { 'x-api-key': env.apiKey } : {}, alwaysLoad: true };
}

/** The result of a slash command the engine ran itself (here `/compact`), not of a model turn. */
const isLocalCommand = (msg: SDKMessage): boolean => msg.type === 'result' && 'local_command' in msg && !!msg.local_command;

/** A task's cost on an end that is not a completion, when the engine gave one and it is not nothing. */
const spent = (cost: number | undefined): { cost_usd?: number } => (cost ? { cost_usd: cost } : {});

function cancelled(signal: AbortSignal, emit: Emit, sessionId: string | undefined, cost: number | undefined): TaskOutcome {
  const reason = typeof signal.reason === 'string' ? signal.reason : 'cancelled by request';
  emit({ type: 'task_cancelled', payload: { reason, ...spent(cost) } });
  return { kind: 'cancelled', sessionId };
}

/** Emits the events one engine message carries; returns an outcome when the task has ended. */
/** `cost`: the task's cost, for its result (the engine's figure is the session's running total). */
function translate(msg: SDKMessage, emit: Emit, toolNames: Map<string, string>, cost: number): Omit<TaskOutcome, 'sessionId'> | undefined {
  switch (msg.type) {
    case 'assistant': {
      for (const block of msg.message.content) {
        if (block.type === 'text' && block.text) emit({ type: 'text', payload: { content: block.text } });
        else if (block.type === 'thinking') emit({ type: 'thinking', payload: { content: block.thinking } });
        else if (block.type === 'tool_use') {
          toolNames.set(block.id, block.name);
          emit({ type: 'tool_call', payload: { id: block.id, tool: block.name, input: block.input } });
        }
      }
      return undefined;
    }
    case 'user': {
      const content = msg.message.content;
      if (!Array.isArray(content)) return undefined;
      for (const block of content) {
        if (typeof block === 'object' && block && block.type === 'tool_result') {
          emit({
            type: 'tool_result',
            payload: {
              id: block.tool_use_id,
              tool: toolNames.get(block.tool_use_id) ?? '',
              output: resultText(block.content),
              isError: block.is_error === true,
            },
          });
        }
      }
      return undefined;
    }
    case 'system': {
      // The engine compacted the conversation (on request, or as its context filled up).
      if (msg.subtype === 'compact_boundary') {
        const m = msg.compact_metadata;
        emit({
          type: 'context_compacted',
          payload: { trigger: m.trigger, pre_tokens: m.pre_tokens, ...(m.post_tokens !== undefined ? { post_tokens: m.post_tokens } : {}) },
        });
      }
      return undefined;
    }
    case 'result': {
      if (msg.subtype === 'success' && !msg.is_error) {
        emit({
          type: 'task_completed',
          payload: {
            result: msg.result,
            cost_usd: cost,
            duration_ms: msg.duration_ms,
            turns: msg.num_turns,
            stop_reason: msg.stop_reason ?? 'end_turn',
            session_id: msg.session_id,
          },
        });
        return { kind: 'completed' };
      }
      const message = msg.subtype === 'success' ? msg.result : (msg.errors ?? []).join('; ') || msg.subtype;
      emit({
        type: 'error',
        payload: { message: message || 'the task failed', reason: msg.subtype === 'success' ? 'ModelError' : msg.subtype, ...spent(cost) },
      });
      return { kind: 'error' };
    }
    default:
      return undefined;
  }
}

function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((c: unknown) => (c && typeof c === 'object' && 'text' in c ? String(c.text) : ''))
      .filter(Boolean)
      .join('\n');
  }
  return content === undefined ? '' : JSON.stringify(content);
}

const errorMessage = (err: unknown): string => (err instanceof Error ? err.message : String(err));
