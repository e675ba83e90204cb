// Skill and memory verbs (docs/skills-and-memories.md): skill add|ls|get|rm (add from a
// directory holding SKILL.md, or from a SKILL.md file alone) and memory set|ls|get|rm.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join, relative, sep } from 'node:path';
import type { Command } from 'commander';
import { frontmatterOf, SKILL_MAIN_FILE, SKILL_MAX_FILES } from '../../api/skill.js';
import { ApiCallError } from '../client.js';
import { CliError, EXIT } from '../exit-codes.js';
import type { Session } from '../session.js';
import { checkName, type Runner } from '../session.js';
import { addOutputFlags } from './agents.js';
import { show } from './listing.js';

export const SKILLS = { rest: '/api/v1/skills', key: 'skills', plural: 'skills', kind: 'skill' };
export const MEMORIES = { rest: '/api/v1/memories', key: 'memories', plural: 'memories', kind: 'memory' };

/** The files of a skill at `source`: a directory's files (recursively, hidden ones left out), or one SKILL.md. */
export function skillFiles(source: string): Record<string, string> {
  let st;
  try {
    st = statSync(source);
  } catch {
    throw new CliError(`no such file or directory: ${source}`, 'give a directory holding SKILL.md, or a SKILL.md file', EXIT.USAGE);
  }
  if (st.isFile()) return { [SKILL_MAIN_FILE]: readFileSync(source, 'utf8') };
  const files: Record<string, string> = {};
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.name.startsWith('.')) continue;
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) files[relative(source, p).split(sep).join('/')] = readFileSync(p, 'utf8');
      if (Object.keys(files).length > SKILL_MAX_FILES)
        throw new CliError(`${source} holds more than ${SKILL_MAX_FILES} files`, 'a skill holds at most that many', EXIT.USAGE);
    }
  };
  walk(source);
  if (!files[SKILL_MAIN_FILE])
    throw new CliError(
      `${source} has no ${SKILL_MAIN_FILE}`,
      `a skill's directory holds ${SKILL_MAIN_FILE} (with a frontmatter: name, description)`,
      EXIT.USAGE,
    );
  return files;
}

const path = (what: typeof SKILLS, kind: string, name: string): string => `${what.rest}/${encodeURIComponent(checkName(kind, name))}`;

export function registerSkillMemoryCommands(program: Command, run: Runner): void {
  const skill = program.command('skill').description('reusable instruction packs (SKILL.md and files) that agents attach by name (--skill on run)');
  skill
    .command('add')
    .description("create or replace a skill from a directory holding SKILL.md, or from a SKILL.md file; its name defaults to the frontmatter's")
    .argument('<source>', 'a directory or a SKILL.md file')
    .option('--name <name>', "the skill's name (default: SKILL.md's frontmatter name)")
    .option('--description <text>', "what it is for (default: SKILL.md's frontmatter description)")
    .action(
      run(async (s, source: string) => {
        const o = s.opts as { name?: string; description?: string };
        const files = skillFiles(source);
        const name = o.name ?? frontmatterOf(files[SKILL_MAIN_FILE])?.name ?? basename(source);
        const fields = { files, ...(o.description ? { description: o.description } : {}) };
        const made = await upsert(s, SKILLS, 'skill', name, fields);
        s.out(`skill/${name} ${made ? 'created' : 'replaced'} (${Object.keys(files).length} files)\n`);
      }),
    );
  addOutputFlags(skill.command('ls').alias('list').description("the namespace's skills"), true).action(run(async (s) => show(s, SKILLS)));
  addOutputFlags(skill.command('get').description('one skill (-o yaml: its files)').argument('<name>'), false).action(
    run(async (s, name: string) => show(s, SKILLS, name)),
  );
  rmCommand(skill, run, SKILLS, 'skill');

  const memory = program.command('memory').description('named text agents keep across tasks and share, attached by name (--memory on run)');
  memory
    .command('set')
    .description('create or replace a memory\'s text (from --text, --file, or "-" for stdin)')
    .argument('<name>')
    .option('--text <text>', 'the text')
    .option('--file <path>', 'read the text from a file ("-": stdin)')
    .option('--description <text>', 'what the memory holds')
    .action(
      run(async (s, name: string) => {
        const o = s.opts as { text?: string; file?: string; description?: string };
        if ((o.text === undefined) === (o.file === undefined))
          throw new CliError('give the text with --text or --file (one of them)', 'e.g. agentplane memory set team-notes --file notes.md', EXIT.USAGE);
        const text = o.text ?? readFileSync(o.file === '-' ? 0 : o.file!, 'utf8');
        const fields = { text, ...(o.description !== undefined ? { description: o.description } : {}) };
        const made = await upsert(s, MEMORIES, 'memory', name, fields);
        s.out(`memory/${name} ${made ? 'created' : 'updated'}\n`);
      }),
    );
  addOutputFlags(memory.command('ls').alias('list').description("the namespace's memories"), true).action(run(async (s) => show(s, MEMORIES)));
  memory
    .command('get')
    .description("a memory's text (-o json|yaml: the whole object)")
    .argument('<name>')
    .option('-o, --output <format>', 'json or yaml')
    .action(
      run(async (s, name: string) => {
        if (s.opts.output) return show(s, MEMORIES, name);
        const { body } = await s.client.call<{ text: string }>('GET', path(MEMORIES, 'memory', name), {
          query: { namespace: s.target.namespace },
          kind: 'memory',
        });
        s.out(body.text.endsWith('\n') || !body.text ? body.text : `${body.text}\n`);
      }),
    );
  rmCommand(memory, run, MEMORIES, 'memory');
}

/** Creates the object, or (it exists: 409) patches it with `fields`; true when created. */
async function upsert(s: Session, what: typeof SKILLS, kind: string, name: string, fields: Record<string, unknown>): Promise<boolean> {
  const ns = s.target.namespace;
  try {
    await s.client.call('POST', what.rest, { body: { name: checkName(kind, name), namespace: ns, ...fields }, kind, ns });
    return true;
  } catch (err) {
    if (!(err instanceof ApiCallError) || err.status !== 409) throw err;
  }
  await s.client.call('PATCH', path(what, kind, name), { query: { namespace: ns }, body: fields, kind });
  return false;
}

function rmCommand(parent: Command, run: Runner, what: typeof SKILLS, kind: string): void {
  parent
    .command('rm')
    .alias('delete')
    .description(`delete ${what.plural} (agents that attach one run without it)`)
    .argument('<name...>')
    .action(
      run(async (s, names: string[]) => {
        for (const name of names) {
          await s.client.call('DELETE', path(what, kind, name), { query: { namespace: s.target.namespace }, kind });
          s.out(`${kind}/${name} deleted\n`);
        }
      }),
    );
}
