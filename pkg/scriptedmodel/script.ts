// The script language of the scripted model, and the pure decision of the next assistant turn.
// A task's prompt carries `@` directive lines; the engine re-sends the whole conversation on
// every request, so the turn to play is derived from the request alone (no server state).
// A follow-up sent into a running task that carries directives takes over the script.

export const MAX_DELAY_MS = 120_000;

export type Directive =
  | { kind: 'bash'; command: string }
  | { kind: 'write'; path: string; content: string }
  | { kind: 'tool'; name: string; input: Record<string, unknown> }
  | { kind: 'say'; text: string }
  | { kind: 'echo' }
  | { kind: 'fail'; status: number; type: string; message: string; times?: number }
  | { kind: 'delay'; ms: number };

export interface Script {
  directives: Directive[];
  /** Problems with malformed directives; the parser degrades instead of throwing. */
  notes: string[];
}

export type Block =
  | { type: 'text'; text: string }
  // Ids are assigned when rendering, which keeps turn selection deterministic.
  | { type: 'tool_use'; name: string; input: Record<string, unknown> };

export type StopReason = 'end_turn' | 'tool_use';

export type Turn =
  | { kind: 'message'; content: Block[]; stopReason: StopReason; delayMs: number }
  | { kind: 'error'; status: number; type: string; message: string; delayMs: number; /** A counted `@fail … xN`: its directive index. */ failIndex?: number };

/** The task being worked on, as seen in one request. */
export interface Task {
  prompt: string;
  /** Assistant messages since the task's prompt: the index of the turn to play. */
  step: number;
  /** Text of the latest tool_result of this task, if any. */
  lastToolResult?: string;
}

const DIRECTIVE = /^\s*@(bash|write|tool|say|echo|fail|delay)(?:\s+([\s\S]*))?$/i;

export function parseScript(prompt: string): Script {
  const directives: Directive[] = [];
  const notes: string[] = [];
  prompt.split('\n').forEach((raw, i) => {
    const m = DIRECTIVE.exec(raw.replace(/\r$/, ''));
    if (!m) return; // prose
    const kind = m[1].toLowerCase();
    const note = (msg: string): undefined => void notes.push(`line ${i + 1}: @${kind} ${msg}`);
    const d = parseDirective(kind, m[2] ?? '', note);
    if (d) directives.push(d);
  });
  return { directives, notes };
}

function parseDirective(kind: string, rest: string, note: (msg: string) => undefined): Directive | undefined {
  const text = rest.trim();
  switch (kind) {
    case 'bash':
      if (!text) return note('needs a command; ignored');
      return { kind, command: text };
    case 'write': {
      // Content is the raw rest of the line so leading/trailing spaces survive.
      const m = /^(\S+)(?:\s([\s\S]*))?$/.exec(rest.trimStart());
      if (!m) return note('needs a path; ignored');
      return { kind, path: m[1], content: (m[2] ?? '').replace(/\\n/g, '\n') };
    }
    case 'tool': {
      const [name = '', json = ''] = splitFirst(text);
      if (!name) return note('needs a tool name; ignored');
      return { kind, name, input: parseInput(json, (msg) => note(`${name}: ${msg}`)) };
    }
    case 'say':
      return { kind, text };
    case 'echo':
      return { kind };
    case 'fail': {
      const [statusText = '', afterStatus = ''] = splitFirst(text);
      const [type = '', message = ''] = splitFirst(afterStatus);
      let status = Number(statusText);
      if (!Number.isInteger(status) || status < 400 || status > 599) {
        note(`status ${JSON.stringify(statusText)} is not 400-599; using 400`);
        status = 400;
      }
      // A trailing `xN` fails that many requests, then the script goes on past it.
      const times = /(?:^|\s)x(\d+)$/.exec(message);
      const said = times ? message.slice(0, times.index).trim() : message;
      return {
        kind,
        status,
        type: type || 'invalid_request_error',
        message: said || 'scripted failure',
        ...(times ? { times: Math.max(1, Number(times[1])) } : {}),
      };
    }
    case 'delay': {
      const ms = Number(text);
      if (!text || !Number.isFinite(ms) || ms < 0) return note(`needs milliseconds, not ${JSON.stringify(text)}; ignored`);
      return { kind, ms: Math.min(Math.round(ms), MAX_DELAY_MS) };
    }
  }
  return undefined;
}

function splitFirst(s: string): [string, string] {
  const m = /^(\S*)\s*([\s\S]*)$/.exec(s.trim());
  return [m?.[1] ?? '', m?.[2] ?? ''];
}

function parseInput(json: string, note: (msg: string) => void): Record<string, unknown> {
  if (!json) return {};
  try {
    const v: unknown = JSON.parse(json);
    if (isRecord(v)) return v;
    note('input is not a JSON object; using {}');
  } catch {
    note('input is not valid JSON; using {}');
  }
  return {};
}

/**
 * Decides the reply to one Messages API request body (already JSON-parsed). `spent(i)` tells
 * whether the counted `@fail … xN` at directive index `i` has failed its N requests (the
 * server keeps that count); such a directive is passed over.
 */
export function nextTurn(body: unknown, spent?: (task: Task, index: number) => boolean): Turn {
  const req = isRecord(body) ? body : {};
  // Auxiliary requests (titles, quota probes) carry no tools and must not consume the script.
  if (!Array.isArray(req.tools) || req.tools.length === 0) return say('ok');
  const task = currentTask(Array.isArray(req.messages) ? req.messages : []);
  return task ? turnFor(parseScript(task.prompt), task, spent && ((i) => spent(task, i))) : say('ok');
}

/** Plays turn number `task.step` of `script`. */
export function turnFor(script: Script, task: Task, spent?: (index: number) => boolean): Turn {
  if (script.directives.length === 0) return demoTurn(task);
  let delayMs = 0;
  let turns = 0;
  let lastSay: string | undefined;
  for (const [i, d] of script.directives.entries()) {
    if (d.kind === 'delay') {
      delayMs = Math.min(delayMs + d.ms, MAX_DELAY_MS);
      continue;
    }
    if (d.kind === 'fail' && d.times !== undefined) {
      if (spent?.(i)) continue;
      if (turns === task.step) return { kind: 'error', status: d.status, type: d.type, message: d.message, delayMs, failIndex: i };
    }
    if (d.kind === 'say') lastSay = d.text;
    if (turns++ === task.step) return directiveTurn(d, delayMs, task);
    delayMs = 0;
  }
  // Script exhausted; trailing @delay lines still apply to this final reply.
  const done = script.notes.length ? `Done. (script notes: ${script.notes.join('; ')})` : 'Done.';
  return say(lastSay ?? done, delayMs);
}

function directiveTurn(d: Exclude<Directive, { kind: 'delay' }>, delayMs: number, task: Task): Turn {
  switch (d.kind) {
    case 'bash':
      return bashTurn(d.command, delayMs);
    case 'write':
      return toolTurn('Write', { file_path: d.path, content: d.content }, delayMs);
    case 'tool':
      return toolTurn(d.name, d.input, delayMs);
    case 'say':
      return say(d.text, delayMs);
    case 'echo':
      // What the model was told, as it arrived (a follow-up comes wrapped in the engine's words).
      return say(proseOf(task.prompt) || '(nothing to echo)', delayMs);
    case 'fail':
      return { kind: 'error', status: d.status, type: d.type, message: d.message, delayMs };
  }
}

const DEMO_COMMAND = 'pwd && ls -la';

// Without directives the model still does something visible: look around, then report.
function demoTurn(task: Task): Turn {
  if (task.step === 0) return bashTurn(DEMO_COMMAND, 0);
  const output = truncate(firstLine(task.lastToolResult ?? '') || '(no output)', 200);
  return say(`I looked around my workspace: ${output} ... Your task was: ${truncate(firstLine(task.prompt), 200)}`);
}

const bashTurn = (command: string, delayMs: number): Turn => toolTurn('Bash', { command, description: `Run ${truncate(command, 60)}` }, delayMs);

const toolTurn = (name: string, input: Record<string, unknown>, delayMs: number): Turn => ({
  kind: 'message',
  content: [{ type: 'tool_use', name, input }],
  stopReason: 'tool_use',
  delayMs,
});

const say = (text: string, delayMs = 0): Turn => ({
  kind: 'message',
  content: [{ type: 'text', text }],
  stopReason: 'end_turn',
  delayMs,
});

// --- reading requests -------------------------------------------------------------------

const REMINDER = '<system-reminder>';

/**
 * The current task is the last user message with real (non-system-reminder) text; tool_result
 * carriers and reminder-only messages are not tasks. Earlier tasks of a resumed session precede it.
 * A follow-up sent mid-task and folded in by the engine (see `followUp`) takes over when it
 * carries directives: its script plays from the turn after it.
 */
export function currentTask(messages: readonly unknown[]): Task | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (!isRecord(m) || m.role === 'assistant') continue;
    const prompt = followUp(m) ?? (m.role === 'user' && !hasToolResult(m.content) ? promptText(m.content) : undefined);
    if (prompt === undefined) continue;
    const after = messages.slice(i + 1).filter(isRecord);
    const step = after.filter((x) => x.role === 'assistant').length;
    let lastToolResult: string | undefined;
    for (const x of after) {
      if (x.role !== 'user' || !Array.isArray(x.content)) continue;
      for (const b of x.content) if (isRecord(b) && b.type === 'tool_result') lastToolResult = textOf(b.content);
    }
    return { prompt, step, ...(lastToolResult === undefined ? {} : { lastToolResult }) };
  }
  return undefined;
}

/**
 * The newest text the engine added to a message that carries directives: how a follow-up sent
 * while the engine works reaches the model. The engine folds it in as a message of another role,
 * a system reminder (also inside a tool result), or text beside tool results, depending on its
 * version and model; a tool's own output is never read as a follow-up.
 */
function followUp(m: Record<string, unknown>): string | undefined {
  const blocks: unknown[] = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : Array.isArray(m.content) ? m.content : [];
  const whole = m.role !== 'user' || hasToolResult(blocks);
  const texts: string[] = [];
  for (const b of blocks) {
    if (!isRecord(b)) continue;
    if (b.type === 'text' && typeof b.text === 'string') texts.push(...(whole ? [b.text] : reminders(b.text)));
    else if (b.type === 'tool_result') texts.push(...reminders(textOf(b.content)));
  }
  return texts.reverse().find((t) => parseScript(t).directives.length > 0);
}

export const reminders = (s: string): string[] => [...s.matchAll(/<system-reminder>([\s\S]*?)<\/system-reminder>/g)].map((r) => r[1].trim());

const hasToolResult = (content: unknown): boolean => Array.isArray(content) && content.some((b) => isRecord(b) && b.type === 'tool_result');

/**
 * Non-reminder text of a user message's content, or undefined if it has none. When a turn got no
 * answer (the model failed), the engine sends the next task in the same user message as the one
 * before it: when several texts script something, the newest is the task.
 */
export function promptText(content: unknown): string | undefined {
  const blocks: unknown[] = typeof content === 'string' ? [{ type: 'text', text: content }] : Array.isArray(content) ? content : [];
  const texts = blocks
    .map((b) => (isRecord(b) && b.type === 'text' && typeof b.text === 'string' ? b.text : undefined))
    .filter((t): t is string => t !== undefined && !t.trimStart().startsWith(REMINDER));
  if (!texts.length) return undefined;
  const scripted = texts.filter((t) => parseScript(t).directives.length > 0);
  return scripted.length > 1 ? scripted.at(-1) : texts.join('\n');
}

/** Rough token count (chars/4, at least 1) of a request's system prompt and messages. */
export function estimateTokens(body: unknown): number {
  if (!isRecord(body)) return 1;
  let chars = charsOf(body.system);
  if (Array.isArray(body.messages)) for (const m of body.messages) if (isRecord(m)) chars += charsOf(m.content);
  return Math.max(1, Math.ceil(chars / 4));
}

function charsOf(v: unknown): number {
  if (typeof v === 'string') return v.length;
  if (Array.isArray(v)) return v.reduce((n: number, b) => n + charsOf(b), 0);
  if (!isRecord(v)) return 0;
  if (typeof v.text === 'string') return v.text.length;
  if (v.type === 'tool_use') return JSON.stringify(v.input ?? {}).length;
  if (v.type === 'tool_result') return charsOf(v.content);
  return 0;
}

/** Text of a tool_result content: a string or an array of text blocks. */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((b) => (isRecord(b) && b.type === 'text' && typeof b.text === 'string' ? b.text : ''))
    .filter(Boolean)
    .join('\n');
}

export function truncate(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}

/** A prompt without its directive lines, trimmed. */
export const proseOf = (prompt: string): string =>
  prompt
    .split('\n')
    .filter((l) => !DIRECTIVE.test(l.replace(/\r$/, '')))
    .join('\n')
    .trim();

const firstLine = (s: string): string =>
  s
    .split('\n')
    .find((l) => l.trim() !== '')
    ?.trim() ?? '';

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
