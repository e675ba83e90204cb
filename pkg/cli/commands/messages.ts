// `agentplane message <agent> <text> [--from X] [--wake]`: a message to an agent (POST
// /api/v1/agents/:name/messages, docs/messages.md): into its running task, as a new task when it
// is idle, or queued while it sleeps.

import type { Command } from 'commander';
import type { MessageResponse } from '../../api/agent-message.js';
import { checkName, type Runner, type Session } from '../session.js';

const DELIVERED: Record<MessageResponse['delivery'], (r: MessageResponse) => string> = {
  followUp: (r) => `delivered into its running task ${r.task}`,
  task: (r) => `delivered as its new task ${r.task}`,
  queued: (r) => (r.woken ? 'queued; the agent is being woken and takes it as its next task' : 'queued: the agent sleeps and takes it when it wakes'),
};

export function registerMessageCommands(program: Command, run: Runner): void {
  program
    .command('message')
    .description('send an agent a message: into its running task, as a new task when idle, or queued while it sleeps')
    .argument('<agent>')
    .argument('<text>', 'the message')
    .option('--from <sender>', 'who sends it: an agent of the namespace, or a person (default: you)')
    .option('--wake', 'wake the agent if it sleeps')
    .option('-o, --output <format>', 'json')
    .action(run(send));
}

async function send(s: Session, name: string, text: string): Promise<void> {
  const o = s.opts as { from?: string; wake?: boolean; output?: string };
  const { body } = await s.client.call<MessageResponse>('POST', `/api/v1/agents/${encodeURIComponent(checkName('agent', name))}/messages`, {
    query: { namespace: s.target.namespace },
    body: { text, ...(o.from !== undefined ? { from: o.from } : {}), ...(o.wake ? { wake: true } : {}) },
    kind: 'agent',
  });
  if (o.output === 'json') return s.out(`${JSON.stringify(body, null, 2)}\n`);
  s.out(`message from ${body.from} to agent/${name}: ${DELIVERED[body.delivery](body)}\n`);
}
