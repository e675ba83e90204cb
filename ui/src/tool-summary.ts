// One line saying what a tool call does, for its folded row: Bash's command, the file Read,
// Write and Edit touch, Grep's pattern, an MCP tool's server, name and arguments. The same idea
// as the server's status message (pkg/controller/task-status.ts describeToolCall), kept apart
// because the page is bundled apart from the server.

export interface ToolSummary {
  /** The tool's name as people read it: `Bash`, or `echo › echo` for mcp__echo__echo. */
  name: string;
  /** What this call does, on one line (may be empty). */
  detail: string;
  /** A longer explanation when the input has one (Bash's description), for the tooltip. */
  hint?: string;
}

const MAX_DETAIL = 160;
const MAX_VALUE = 40;

type Input = Record<string, unknown>;

const str = (i: Input, key: string): string | undefined => (typeof i[key] === 'string' && i[key] ? (i[key] as string) : undefined);

/** The first line, at most `max` characters (cut by code point). */
export function oneLine(s: string, max = MAX_DETAIL): string {
  const lines = s.trim().split(/\r?\n/);
  const first = lines[0] ?? '';
  const chars = [...first];
  if (chars.length > max) return `${chars.slice(0, max - 1).join('')}…`;
  return lines.length > 1 ? `${first} …` : first;
}

/** `key: value` pairs of an input, values shortened: the arguments of a tool with no known shape. */
export function inputSummary(i: Input): string {
  const parts = Object.entries(i).map(([k, v]) => {
    const text = typeof v === 'string' ? JSON.stringify(oneLine(v, MAX_VALUE)) : oneLine(JSON.stringify(v) ?? String(v), MAX_VALUE);
    return `${k}: ${text}`;
  });
  return oneLine(parts.join(', '));
}

/** The details of the engine's own tools, by name; others fall back to common fields. */
const BUILTIN: Record<string, (i: Input) => string | undefined> = {
  Bash: (i) => str(i, 'command'),
  Read: (i) => str(i, 'file_path'),
  Write: (i) => str(i, 'file_path'),
  Edit: (i) => str(i, 'file_path'),
  MultiEdit: (i) => str(i, 'file_path'),
  NotebookEdit: (i) => str(i, 'notebook_path'),
  Grep: (i) => (str(i, 'pattern') ? `${str(i, 'pattern')}${str(i, 'path') ? ` in ${str(i, 'path')}` : ''}` : undefined),
  Glob: (i) => str(i, 'pattern'),
  WebFetch: (i) => str(i, 'url'),
  WebSearch: (i) => str(i, 'query'),
  Task: (i) => str(i, 'description'),
  TodoWrite: (i) => (Array.isArray(i.todos) ? `${i.todos.length} to-dos` : undefined),
};

export function describeTool(tool: string, input: unknown): ToolSummary {
  const i: Input = input && typeof input === 'object' && !Array.isArray(input) ? (input as Input) : {};
  const mcp = /^mcp__(.+?)__(.+)$/.exec(tool);
  if (mcp) return { name: `${mcp[1]} › ${mcp[2]}`, detail: inputSummary(i) };
  const hint = str(i, 'description');
  const known = BUILTIN[tool]?.(i);
  const detail = known ?? str(i, 'command') ?? str(i, 'file_path') ?? str(i, 'path') ?? str(i, 'pattern') ?? str(i, 'url') ?? hint ?? inputSummary(i);
  return { name: tool, detail: oneLine(detail), ...(hint && hint !== detail ? { hint } : {}) };
}
