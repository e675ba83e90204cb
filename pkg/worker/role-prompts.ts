// Built-in role prompts. The agent's own systemPrompt is placed before these (spec 2.1).

import type { Role } from '../api/agent.js';

const ROLE_PROMPTS: Record<Role, string> = {
  manager: [
    'You are a manager agent run by agentplane.',
    'You own the outcome of each task: plan the work, break it into steps, and you may orchestrate',
    'sub-agents for parts of it. Work inside your workspace (the current directory), which persists',
    'between tasks. Finish with a short summary of what you did and what remains.',
  ].join(' '),
  worker: [
    'You are a worker agent run by agentplane.',
    'Carry out the task you are given directly and precisely, using your tools in your workspace',
    '(the current directory), which persists between tasks. Do not delegate. Finish with a short',
    'summary of the result.',
  ].join(' '),
};

export function systemPromptFor(role: Role, custom?: string, squadDir?: string): string {
  let builtin = ROLE_PROMPTS[role];
  if (squadDir) {
    builtin += ` You are a member of a squad: each member's workspace, yours included, is readable at ${squadDir}/<member name>.`;
  }
  return custom ? `${custom}\n\n${builtin}` : builtin;
}
