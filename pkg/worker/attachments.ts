// Writes a task's skills and memories into the agent's workspace before the engine takes the task
// (docs/skills-and-memories.md): the skills as a local plugin of the engine's
// (.agentplane/skills/, loaded through the SDK's `plugins` option, never through the
// workspace's own .claude settings), the memories as .agentplane/memories/<name>.md. The tree
// is written anew each task from the server's copy, files 0444 and directories 0555, so the
// agent's tools cannot change them by accident, and whatever a tool left there is gone before
// the engine loads the plugin (docs/security.md "Skills and memories").

import { createHash } from 'node:crypto';
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import type { TaskAttachments } from '../api/worker-protocol.js';

/** The workspace's directory of what agentplane gives the agent (read-only to it). */
export const ATTACHMENTS_DIR = '.agentplane';
/** The engine plugin holding the skills: <workspace>/.agentplane/skills. */
export const SKILLS_PLUGIN = 'skills';
/** The plugin's name: the engine lists its skills as "agentplane-skills:<skill>". */
export const SKILLS_PLUGIN_NAME = 'agentplane-skills';
export const MEMORIES_DIR = 'memories';

export interface Materialized {
  /** The plugin directory to load, when the task has skills. */
  pluginDir?: string;
  /** Changes whenever the skills do: an engine started with other skills is replaced. */
  skillsKey: string;
  /** The memories' files, for the system prompt. */
  memories: { name: string; description?: string; path: string }[];
}

/** Writes `a` (or nothing, removing what a past task had) under <workspace>/.agentplane. */
export function materialize(workspace: string, a: TaskAttachments | undefined): Materialized {
  const root = join(workspace, ATTACHMENTS_DIR);
  if (existsSync(root)) {
    makeWritable(root);
    rmSync(root, { recursive: true, force: true });
  }
  const skills = a?.skills ?? [];
  const memories = a?.memories ?? [];
  if (!skills.length && !memories.length) return { skillsKey: '', memories: [] };
  mkdirSync(root, { recursive: true });
  let pluginDir: string | undefined;
  if (skills.length) {
    pluginDir = join(root, SKILLS_PLUGIN);
    write(
      pluginDir,
      '.claude-plugin/plugin.json',
      `${JSON.stringify({ name: SKILLS_PLUGIN_NAME, description: 'Skills agentplane attached to this agent', version: '1.0.0' }, null, 2)}\n`,
    );
    for (const s of skills) {
      const dir = join(pluginDir, 'skills', s.name);
      for (const [path, text] of Object.entries(s.files)) write(dir, path, text);
    }
  }
  const written: Materialized['memories'] = [];
  for (const m of memories) {
    const file = `${m.name}.md`;
    write(join(root, MEMORIES_DIR), file, m.text);
    written.push({ name: m.name, ...(m.description ? { description: m.description } : {}), path: `${ATTACHMENTS_DIR}/${MEMORIES_DIR}/${file}` });
  }
  makeReadOnly(root);
  const skillsKey = skills.length ? createHash('sha256').update(JSON.stringify(skills)).digest('hex').slice(0, 16) : '';
  return { ...(pluginDir ? { pluginDir } : {}), skillsKey, memories: written };
}

/** Writes `path` under `dir`; a path that would leave `dir` is refused (the server checked it too). */
function write(dir: string, path: string, text: string): void {
  const target = resolve(dir, path);
  if (!target.startsWith(resolve(dir) + sep)) throw new Error(`attachment path "${path}" leaves its directory`);
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, text);
}

function walk(dir: string, fn: (path: string, isDir: boolean) => void): void {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    // A link a tool may have planted is not followed (it is removed with the tree).
    if (e.isSymbolicLink()) continue;
    if (e.isDirectory()) walk(p, fn);
    fn(p, e.isDirectory());
  }
}

function makeReadOnly(root: string): void {
  walk(root, (p, isDir) => chmodSync(p, isDir ? 0o555 : 0o444));
  chmodSync(root, 0o555);
}

function makeWritable(root: string): void {
  if (lstatSync(root).isSymbolicLink()) return;
  chmodSync(root, 0o755);
  walk(root, (p, isDir) => isDir && chmodSync(p, 0o755));
}

/** What the system prompt says of the task's memories (skills the engine lists itself). */
export function attachmentsPrompt(att: Materialized): string {
  if (!att.memories.length) return '';
  const lines = att.memories.map((m) => `- ${m.name}: ${m.path}${m.description ? ` (${m.description})` : ''}`);
  return [
    '',
    '',
    '# Memories',
    'You keep these memories across tasks; other agents may share them. Read the files at the start of a task (read-only copies as of its start);',
    "mcp__memory__memory_read gives the current text, and mcp__memory__memory_write replaces a memory's whole text for later tasks.",
    ...lines,
  ].join('\n');
}
