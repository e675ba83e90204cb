// A flag declared once: its name, type, environment variable, config-file key, default, help and
// parse. From the declarations come the parser's options, the lookup (flag, then variable, then
// config file, then default), the config file's checks and the `--help` text (serve-help.ts).

/** A value a flag, variable or config key gave; config values keep their JSON type. */
export type RawValue = string | number | boolean | readonly unknown[];

/** A setting that does not parse: its message names the flag, the rule and what was given. */
export class FlagError extends Error {
  override name = 'FlagError';
}

export interface Flag<T = unknown> {
  /** The long flag, without "--". */
  name: string;
  type: 'string' | 'boolean';
  /** The value's placeholder in --help, e.g. "<n>". */
  arg?: string;
  /** The environment variable that sets it when the flag is absent. */
  env?: string;
  /** An empty variable is a value (''); by default it counts as unset. */
  emptyEnvIsValue?: boolean;
  /** Booleans: any value but "true" is false, instead of refusing what is not true or false. */
  looseBoolEnv?: boolean;
  /** The config file's key ("a.b" inside an object); absent: the file cannot set it. */
  config?: string;
  /** The config value's check: the message after `config <path>: `, or undefined when it is good. */
  checkConfig?: (value: unknown) => string | undefined;
  /** The value when nothing sets it. */
  default?: string | boolean;
  /** The default as --help says it, when it is not `default` itself (computed, or none). */
  defaultHelp?: string;
  /** What it does, for --help; ends without a period. */
  help: string;
  /** Where --help lists it. */
  section: 'general' | 'kubernetes';
  /** Checks and converts the raw value; throws FlagError. Absent: the value as given. */
  parse?: (raw: RawValue) => T;
}

export function flag<T = string>(f: Flag<T>): Flag<T> {
  return f;
}

/** Where values come from: the parsed command line, the environment and the config file. */
export interface Sources {
  values: Record<string, string | boolean | undefined>;
  env: NodeJS.ProcessEnv;
  config: Record<string, unknown>;
}

/** The flag's value: the flag, its variable, its config key or its default, parsed; undefined when none. */
export function lookup<T>(f: Flag<T>, s: Sources): T | undefined {
  const raw = s.values[f.name] ?? envValue(f, s.env) ?? (configValue(f, s.config) as RawValue | undefined) ?? f.default;
  if (raw === undefined) return undefined;
  return f.parse ? f.parse(raw) : (raw as T);
}

function envValue(f: Flag, env: NodeJS.ProcessEnv): string | boolean | undefined {
  if (!f.env) return undefined;
  const v = env[f.env];
  if (f.type === 'boolean') {
    if (f.looseBoolEnv) return v === undefined ? undefined : v === 'true';
    if (v === undefined || v === '') return undefined;
    if (v === 'true') return true;
    if (v === 'false') return false;
    throw new FlagError(`${f.env} must be "true" or "false", got "${v}"`);
  }
  return v === '' && !f.emptyEnvIsValue ? undefined : v;
}

export function configValue(f: Flag, config: Record<string, unknown>): unknown {
  if (!f.config) return undefined;
  let v: unknown = config;
  for (const key of f.config.split('.')) v = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[key] : undefined;
  return v;
}

/** node:util parseArgs options for the flags, with -h/--help. */
export function parseArgsOptions(flags: readonly Flag[]): Record<string, { type: 'string' | 'boolean'; short?: string }> {
  return { ...Object.fromEntries(flags.map((f) => [f.name, { type: f.type }])), help: { type: 'boolean', short: 'h' } };
}

// Parsers shared by several flags.

/** A number from a flag, variable or config key; '' is unset. */
export function numberRule(name: string, ok: (n: number) => boolean, rule: string): (raw: RawValue) => number | undefined {
  return (raw) => {
    if (raw === '') return undefined;
    const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\d+(\.\d+)?$/.test(raw.trim()) ? Number(raw) : NaN;
    if (!ok(n)) throw new FlagError(`--${name} must be ${rule}, got "${String(raw)}"`);
    return n;
  };
}

/** A comma-separated list from a flag or variable; the config file's array as it is. */
export function listRule(raw: RawValue): string[] {
  return typeof raw === 'string'
    ? raw
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : (raw as string[]);
}

/** One of `choices`. */
export function choiceRule<T extends string>(name: string, choices: readonly T[], say = `one of ${choices.join(', ')}`): (raw: RawValue) => T {
  return (raw) => {
    if (!choices.includes(raw as T)) throw new FlagError(`--${name} must be ${say}, got "${String(raw)}"`);
    return raw as T;
  };
}

/** A non-empty string, for the config file's path keys. */
export const isPath = (v: unknown): boolean => typeof v === 'string' && v !== '';
