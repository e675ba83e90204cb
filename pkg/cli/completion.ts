// Shell completion. `agentplane completion bash|zsh|fish` prints a script that asks the CLI
// itself, through the hidden `agentplane __complete <words…>`, what may come next: commands,
// flags, and names of agents, squads, connectors, secrets and contexts (read from the server the
// words point at: -n, --server, --token and --context are honoured; a server that cannot be
// reached completes nothing rather than printing an error into the prompt).

import type { Command, Option } from 'commander';
import { Client } from './client.js';
import { configPath, loadConfig, resolveTarget } from './config.js';
import { OUTPUT_FORMATS } from './output.js';

type Kind = 'agent' | 'squad' | 'connector' | 'secret' | 'context' | 'shell';

/** What each command's positional arguments name; a trailing `*` entry repeats. */
const ARG_KINDS: Record<string, (Kind | null)[]> = {
  run: ['agent'],
  get: ['agent'],
  describe: ['agent'],
  logs: ['agent'],
  cancel: ['agent'],
  sleep: ['agent'],
  wake: ['agent'],
  steer: ['agent'],
  rm: ['agent', 'agent'],
  'squad get': ['squad'],
  'squad add': ['squad', 'agent'],
  'squad rm': ['squad', 'agent'],
  'squad break-up': ['squad'],
  'squad create': [null, 'agent', 'agent'],
  'checkpoint create': ['agent'],
  'checkpoint ls': ['agent'],
  'checkpoint get': ['agent'],
  'checkpoint rm': ['agent'],
  'connector rm': ['connector', 'connector'],
  'connector tools': ['connector'],
  'secret set': ['secret'],
  'secret rm': ['secret', 'secret'],
  'config use-context': ['context'],
  'config set-context': ['context'],
  completion: ['shell'],
};
/** Commands whose last argument repeats (rm a b c). */
const VARIADIC = new Set(['rm', 'squad create', 'connector rm', 'secret rm']);

const LIST: Record<'agent' | 'squad' | 'connector' | 'secret', [string, string]> = {
  agent: ['/api/v1/agents', 'agents'],
  squad: ['/api/v1/squads', 'squads'],
  connector: ['/api/v1/connectors', 'connectors'],
  secret: ['/api/v1/secrets', 'secrets'],
};

const takesValue = (o: Option): boolean => o.required || o.optional;
const visible = (c: Command): Command[] => c.commands.filter((x) => !(x as unknown as { _hidden?: boolean })._hidden);
const optionsOf = (c: Command): Option[] => {
  const all: Option[] = [];
  for (let x: Command | null = c; x; x = x.parent) all.push(...x.options);
  return all;
};
const findOption = (c: Command, flag: string): Option | undefined => optionsOf(c).find((o) => o.long === flag || o.short === flag);

/** The candidates for the last word of `words` (the words after `agentplane`, the last one partial). */
export async function complete(program: Command, words: string[]): Promise<string[]> {
  const cur = words.at(-1) ?? '';
  const before = words.slice(0, -1);
  let cmd = program;
  const path: string[] = [];
  const positional: string[] = [];
  const globals: Record<string, string> = {};
  let pendingValue: Option | undefined;
  for (const w of before) {
    if (pendingValue) {
      globals[pendingValue.attributeName()] = w;
      pendingValue = undefined;
      continue;
    }
    if (w.startsWith('-') && w !== '-') {
      const [flag, inline] = w.split('=', 2) as [string, string | undefined];
      const o = findOption(cmd, flag);
      if (o && !takesValue(o)) globals[o.attributeName()] = 'true';
      else if (o) {
        if (inline !== undefined) globals[o.attributeName()] = inline;
        else pendingValue = o;
      }
      continue;
    }
    const sub = positional.length === 0 ? visible(cmd).find((c) => c.name() === w || c.aliases().includes(w)) : undefined;
    if (sub) {
      cmd = sub;
      path.push(sub.name());
    } else positional.push(w);
  }
  const starts = (xs: string[]): string[] => [...new Set(xs)].filter((x) => x.startsWith(cur)).sort();
  if (pendingValue) {
    if (pendingValue.long === '--output') return starts([...OUTPUT_FORMATS]);
    if (pendingValue.long === '--context') return starts(contexts());
    if (pendingValue.long === '--on-interrupt') return starts(['ask', 'cancel', 'detach']);
    return [];
  }
  if (cur.startsWith('-')) return starts(optionsOf(cmd).flatMap((o) => (o.long ? [o.long] : [])));
  const subs = visible(cmd);
  if (subs.length && positional.length === 0) return starts(subs.flatMap((c) => [c.name()]));
  const key = path.join(' ');
  const kinds = ARG_KINDS[key] ?? [];
  const kind = positional.length < kinds.length ? kinds[positional.length] : VARIADIC.has(key) ? kinds.at(-1) : undefined;
  if (!kind) return [];
  if (kind === 'shell') return starts(['bash', 'zsh', 'fish']);
  if (kind === 'context') return starts(contexts());
  return starts((await names(kind, globals)).filter((n) => !positional.includes(n) || !VARIADIC.has(key)));
}

function contexts(): string[] {
  try {
    return loadConfig(configPath()).contexts.map((c) => c.name);
  } catch {
    return [];
  }
}

async function names(kind: keyof typeof LIST, flags: Record<string, string>): Promise<string[]> {
  try {
    const path = configPath();
    const target = resolveTarget(flags, process.env, loadConfig(path), path);
    const [rest, key] = LIST[kind];
    const { body } = await new Client(target, 3000).call<Record<string, unknown> | undefined>('GET', rest, {
      query: { namespace: flags.allNamespaces ? undefined : target.namespace },
    });
    return ((body?.[key] ?? []) as { name: string }[]).map((x) => x.name);
  } catch {
    return [];
  }
}

export function completionScript(shell: string): string {
  switch (shell) {
    case 'bash':
      return `# agentplane completion for bash: source <(agentplane completion bash)
_agentplane() {
  local cur=\${COMP_WORDS[COMP_CWORD]}
  local IFS=$'\\n'
  COMPREPLY=( $(compgen -W "$(agentplane __complete "\${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null)" -- "$cur") )
}
complete -o default -F _agentplane agentplane
`;
    case 'zsh':
      return `#compdef agentplane
# agentplane completion for zsh: source <(agentplane completion zsh), or save as _agentplane in $fpath
_agentplane() {
  local -a items
  # Unquoted (f): one item per line and none when nothing is printed (quoted, it would offer "").
  items=(\${(f)"$(agentplane __complete "\${(@)words[2,CURRENT]}" 2>/dev/null)"})
  compadd -a items
}
if [ "$funcstack[1]" = "_agentplane" ]; then
  _agentplane "$@"
else
  compdef _agentplane agentplane
fi
`;
    case 'fish':
      return `# agentplane completion for fish: agentplane completion fish | source
complete -c agentplane -f -a '(agentplane __complete (commandline -opc)[2..-1] (commandline -ct))'
`;
    default:
      return '';
  }
}
