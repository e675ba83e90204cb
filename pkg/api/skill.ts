// The Skill resource (docs/skills-and-memories.md): a named, reusable instruction pack, a SKILL.md
// with optional files beside it, stored once per namespace and attached to agents by name
// (`spec.skills`). At each task start the worker writes the attached skills, read-only, into a
// local plugin of the engine, which loads them as its own skills.

import type { Cause } from './errors.js';
import { nameSchema, namespaceSchema } from './agent-fields.js';
import type { Resource } from './meta.js';

export const SKILL_KIND = 'Skill';
export const SKILL_MAIN_FILE = 'SKILL.md';

/** Bounds of one skill: it travels in every task message of every agent it is attached to. */
export const SKILL_MAX_FILES = 32;
export const SKILL_MAX_FILE_BYTES = 128 * 1024;
export const SKILL_MAX_TOTAL_BYTES = 256 * 1024;
export const SKILL_PATH_MAX_LENGTH = 200;
export const SKILL_DESCRIPTION_MAX_LENGTH = 1024;

/**
 * A file's path inside the skill: relative, "/"-separated segments of letters, digits, ".", "_"
 * and "-", none of them "." or "..". It cannot leave the skill's directory.
 */
export const SKILL_PATH_PATTERN = '^(?!\\.\\.?(/|$))(?!.*/\\.\\.?(/|$))[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$';
export const SKILL_PATH_RULE = `a relative path of "/"-separated segments of letters, digits, ".", "_" and "-" (no "." or ".." segment), at most ${SKILL_PATH_MAX_LENGTH} characters`;

export interface SkillSpec {
  /** What the skill is for; default the SKILL.md frontmatter's description. */
  description?: string;
  /** Path -> text. SKILL.md is required. */
  files: Record<string, string>;
}

export type SkillStatus = Record<string, never>;

export type Skill = Resource<SkillSpec, SkillStatus>;

export const skillFields = {
  description: {
    type: 'string',
    maxLength: SKILL_DESCRIPTION_MAX_LENGTH,
    description: "what the skill is for; default the SKILL.md frontmatter's description",
  },
  files: {
    type: 'object',
    minProperties: 1,
    maxProperties: SKILL_MAX_FILES,
    additionalProperties: { type: 'string', maxLength: SKILL_MAX_FILE_BYTES },
    description: `the skill's files by path (${SKILL_PATH_RULE}): "${SKILL_MAIN_FILE}" is required and starts with a frontmatter naming the skill (name: <the Skill's name>) and saying what it is for (description: ...); at most ${SKILL_MAX_FILES} files, ${SKILL_MAX_TOTAL_BYTES} bytes in all`,
  },
} as const;

export const skillSpecSchema = {
  $id: 'SkillSpec',
  type: 'object',
  additionalProperties: false,
  required: ['files'],
  properties: skillFields,
} as const;

export const skillStatusSchema = { $id: 'SkillStatus', type: 'object', properties: {} } as const;

/** The frontmatter of a SKILL.md: `---`, `key: value` lines, `---`. Undefined when it has none. */
export function frontmatterOf(text: string): Record<string, string> | undefined {
  const m = /^---\r?\n([\s\S]*?)\r?\n---(\r?\n|$)/.exec(text);
  if (!m) return undefined;
  const out: Record<string, string> = {};
  for (const line of m[1].split(/\r?\n/)) {
    const kv = /^([A-Za-z][\w-]*):\s*(.*)$/.exec(line);
    if (kv) out[kv[1]] = kv[2].trim().replace(/^(["'])(.*)\1$/, '$2');
  }
  return out;
}

/**
 * The rules the schema cannot say: each path's form, the bounds in bytes, and a SKILL.md whose
 * frontmatter names this skill and describes it. `root` prefixes field names.
 */
export function skillRuleCauses(name: string, spec: Partial<SkillSpec>, root = 'spec'): Cause[] {
  const f = (x: string): string => (root ? `${root}.${x}` : x);
  const files = spec.files;
  if (!files || typeof files !== 'object') return [];
  const causes: Cause[] = [];
  const pathRe = new RegExp(SKILL_PATH_PATTERN);
  let total = 0;
  for (const [path, text] of Object.entries(files)) {
    if (path.length > SKILL_PATH_MAX_LENGTH || !pathRe.test(path))
      causes.push({ field: f(`files[${JSON.stringify(path)}]`), message: `the path must be ${SKILL_PATH_RULE}` });
    if (typeof text === 'string') {
      const bytes = Buffer.byteLength(text);
      total += bytes;
      if (bytes > SKILL_MAX_FILE_BYTES) causes.push({ field: f(`files[${JSON.stringify(path)}]`), message: `must be at most ${SKILL_MAX_FILE_BYTES} bytes` });
    }
  }
  if (total > SKILL_MAX_TOTAL_BYTES) causes.push({ field: f('files'), message: `must hold at most ${SKILL_MAX_TOTAL_BYTES} bytes in all (it holds ${total})` });
  const main = files[SKILL_MAIN_FILE];
  if (typeof main !== 'string') return [...causes, { field: f(`files["${SKILL_MAIN_FILE}"]`), message: 'is required' }];
  const fm = frontmatterOf(main);
  const mainField = f(`files["${SKILL_MAIN_FILE}"]`);
  if (!fm) return [...causes, { field: mainField, message: `must start with a frontmatter: "---", "name: ${name}", "description: ...", "---"` }];
  if (fm.name !== name)
    causes.push({ field: mainField, message: `its frontmatter must say "name: ${name}" (the Skill's name)${fm.name ? `, not "${fm.name}"` : ''}` });
  if (!fm.description)
    causes.push({ field: mainField, message: 'its frontmatter must have a description: the engine shows it to the model to decide when to use the skill' });
  return causes;
}

/** The skill's description: its own, else its SKILL.md's. */
export const skillDescription = (s: SkillSpec): string => s.description || frontmatterOf(s.files[SKILL_MAIN_FILE] ?? '')?.description || '';

// --- the REST mirror (/api/v1/skills) ---------------------------------------------------------

export const skillRequestSchema = {
  $id: 'SkillRequest',
  type: 'object',
  additionalProperties: false,
  required: ['name', 'files'],
  properties: { name: nameSchema, namespace: namespaceSchema, ...skillFields },
} as const;

export const skillPatchRequestSchema = {
  $id: 'SkillPatchRequest',
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: skillFields,
} as const;

export interface SkillResponse {
  name: string;
  namespace: string;
  createdAt: string;
  /** Its own, else its SKILL.md's. */
  description: string;
  files: Record<string, string>;
}

export const skillResponseSchema = {
  type: 'object',
  required: ['name', 'namespace', 'createdAt', 'description', 'files'],
  properties: {
    name: { type: 'string' },
    namespace: { type: 'string' },
    createdAt: { type: 'string', format: 'date-time' },
    description: { type: 'string', description: "its own, else its SKILL.md frontmatter's" },
    files: { type: 'object', additionalProperties: { type: 'string' }, description: 'path -> text' },
  },
} as const;

export const toSkillResponse = (s: Skill): SkillResponse => ({
  name: s.metadata.name,
  namespace: s.metadata.namespace,
  createdAt: s.metadata.creationTimestamp,
  description: skillDescription(s.spec),
  files: s.spec.files,
});
