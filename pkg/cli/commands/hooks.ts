// Trigger and webhook verbs (docs/triggers-and-webhooks.md): trigger add|ls|get|rm (inbound: a
// signed POST starts a task) and webhook add|ls|get|rm (outbound: an agent's events to a URL).

import type { Command } from 'commander';
import { outputFormat, renderObject } from '../output.js';
import { checkName, type Runner, type Session } from '../session.js';
import { addOutputFlags } from './agents.js';
import { type Listed, show } from './listing.js';

export const TRIGGERS: Listed = { rest: '/api/v1/triggers', key: 'triggers', plural: 'triggers', kind: 'trigger' };
export const WEBHOOKS: Listed = { rest: '/api/v1/webhooks', key: 'webhooks', plural: 'webhooks', kind: 'webhook' };

const list = (v: string | undefined): string[] | undefined =>
  v
    ?.split(',')
    .map((x) => x.trim())
    .filter(Boolean);

/** POSTs `body` and prints the answer (or "<kind>/<name> created"). */
async function create(s: Session, what: Listed, name: string, body: Record<string, unknown>): Promise<void> {
  const { body: made } = await s.client.call('POST', what.rest, { body, kind: what.kind, ns: s.target.namespace });
  const format = outputFormat(s.opts.output);
  if (format === 'json' || format === 'yaml') s.out(renderObject(made, format));
  else s.out(`${what.kind}/${name} created\n`);
}

/** ls, get and rm, alike for both kinds. */
function common(group: Command, what: Listed, run: Runner): void {
  addOutputFlags(group.command('ls').alias('list').description(`the namespace's ${what.plural} with their status`), true).action(
    run(async (s) => show(s, what)),
  );
  addOutputFlags(group.command('get').description(`one ${what.kind} with its status`).argument('<name>'), false).action(
    run(async (s, name: string) => show(s, what, checkName(what.kind, name))),
  );
  group
    .command('rm')
    .alias('delete')
    .description(`delete ${what.plural}`)
    .argument('<name...>')
    .action(
      run(async (s, names: string[]) => {
        for (const name of names) {
          await s.client.call('DELETE', `${what.rest}/${encodeURIComponent(checkName(what.kind, name))}`, {
            query: { namespace: s.target.namespace },
            kind: what.kind,
          });
          s.out(`${what.kind}/${name} deleted\n`);
        }
      }),
    );
}

export function registerHookCommands(program: Command, run: Runner): void {
  const trigger = program.command('trigger').description('inbound: a signed POST to /api/v1/triggers/<name>/hook starts a task on an agent (add, ls, get, rm)');
  addOutputFlags(
    trigger
      .command('add')
      .description("create a trigger (GitHub's signature and delivery headers unless told otherwise)")
      .argument('<name>')
      .requiredOption('--agent <agent>', 'the agent each delivery gives a task')
      .requiredOption('--secret <name>', 'the secret (agentplane secret set) whose key signs deliveries')
      .requiredOption('--instructions <template>', 'the task; {{a.b.c}} is the payload field at that path')
      .option('--secret-key <key>', 'the key in the secret (default "secret")')
      .option('--signature-header <header>', 'default X-Hub-Signature-256')
      .option('--signature-prefix <prefix>', 'default "sha256="')
      .option('--delivery-id-header <header>', 'default X-GitHub-Delivery'),
    false,
  ).action(
    run(async (s, name: string) => {
      const o = s.opts as Record<string, string | undefined>;
      const signature = {
        ...(o.signatureHeader !== undefined ? { header: o.signatureHeader } : {}),
        ...(o.signaturePrefix !== undefined ? { prefix: o.signaturePrefix } : {}),
      };
      await create(s, TRIGGERS, name, {
        name: checkName('trigger', name),
        namespace: s.target.namespace,
        agent: o.agent,
        secretRef: { name: o.secret, ...(o.secretKey ? { key: o.secretKey } : {}) },
        instructions: o.instructions,
        ...(Object.keys(signature).length ? { signature } : {}),
        ...(o.deliveryIdHeader ? { deliveryIdHeader: o.deliveryIdHeader } : {}),
      });
    }),
  );
  common(trigger, TRIGGERS, run);

  const webhook = program.command('webhook').description("outbound: a namespace's agent events, signed, to a URL (add, ls, get, rm)");
  addOutputFlags(
    webhook
      .command('add')
      .description('create a webhook')
      .argument('<name>')
      .requiredOption('--url <url>', 'where deliveries are POSTed')
      .requiredOption('--events <types>', 'event types, comma-separated (task_completed,error,approval_requested,...)')
      .requiredOption('--secret <name>', 'the secret whose key signs deliveries')
      .option('--secret-key <key>', 'the key in the secret (default "secret")')
      .option('--agents <names>', 'only these agents, comma-separated (default: every agent of the namespace)'),
    false,
  ).action(
    run(async (s, name: string) => {
      const o = s.opts as Record<string, string | undefined>;
      const agents = list(o.agents);
      await create(s, WEBHOOKS, name, {
        name: checkName('webhook', name),
        namespace: s.target.namespace,
        url: o.url,
        eventTypes: list(o.events),
        secretRef: { name: o.secret, ...(o.secretKey ? { key: o.secretKey } : {}) },
        ...(agents?.length ? { agents } : {}),
      });
    }),
  );
  common(webhook, WEBHOOKS, run);
}
