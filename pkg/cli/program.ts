// The client half of the `agentplane` command (everything but `serve`): commander for the
// arguments, one file per verb group under commands/, errors printed as the server's message and
// a hint with an exit code (exit-codes.ts), never a stack trace.

import { Command, CommanderError } from 'commander';
import { ApiCallError } from './client.js';
import { complete, completionScript } from './completion.js';
import { CliError, EXIT } from './exit-codes.js';
import { isPlugin } from './kube/kube-target.js';
import { type Session, sessionOf } from './session.js';
import { styleFor } from './style.js';
import { registerAgentCommands } from './commands/agents.js';
import { registerApprovalCommands } from './commands/approvals.js';
import { registerCheckpointCommands } from './commands/checkpoints.js';
import { registerConfigCommands } from './commands/config.js';
import { registerConnectorCommands } from './commands/connectors.js';
import { registerBudgetCommands } from './commands/budgets.js';
import { registerMessageCommands } from './commands/messages.js';
import { registerScheduleCommands } from './commands/schedules.js';
import { registerHookCommands } from './commands/hooks.js';
import { registerMcpCommands } from './commands/mcp.js';
import { registerSkillMemoryCommands } from './commands/skills-memories.js';
import { registerRun } from './commands/run.js';
import { registerSecretCommands } from './commands/secrets.js';
import { registerSquadCommands } from './commands/squads.js';

/** Prints a failure: message, hint, exit code; an unexpected error shows a stack only with AGENTPLANE_DEBUG. */
export function report(err: unknown): number {
  const { c } = styleFor(process.stderr);
  if (err instanceof CliError) {
    process.stderr.write(
      `${c.red('error:')} ${err.message}${err instanceof ApiCallError && err.reason ? c.dim(` (${err.reason}, HTTP ${err.status})`) : ''}\n`,
    );
    if (err.hint) process.stderr.write(`${c.dim('hint:')} ${err.hint}\n`);
    return err.exitCode;
  }
  const e = err as Error;
  process.stderr.write(`${c.red('error:')} ${e?.message ?? String(err)}\n`);
  if (process.env.AGENTPLANE_DEBUG) process.stderr.write(`${e?.stack ?? ''}\n`);
  else process.stderr.write(`${c.dim('hint:')} this is a bug in agentplane's CLI; AGENTPLANE_DEBUG=1 shows where\n`);
  return EXIT.TASK_FAILED;
}

/** Wraps an action: a Session from the command's flags first, failures reported. */
function withSession(fn: (s: Session, ...args: never[]) => Promise<void>): (...args: unknown[]) => Promise<void> {
  return async (...args: unknown[]) => {
    const cmd = args.at(-1) as Command;
    const positional = args.slice(0, cmd.registeredArguments.length);
    try {
      await fn(await sessionOf(cmd), ...(positional as never[]));
    } catch (err) {
      process.exitCode = report(err);
    }
  };
}

function guarded(fn: (...args: never[]) => void | Promise<void>): (...args: unknown[]) => Promise<void> {
  return async (...args: unknown[]) => {
    try {
      await fn(...(args as never[]));
    } catch (err) {
      process.exitCode = report(err);
    }
  };
}

export function buildProgram(): Command {
  const plugin = isPlugin();
  const program = new Command(plugin ? 'kubectl agentplane' : 'agentplane')
    .description(
      plugin
        ? 'Run long-lived AI agents on the cluster of the current kubeconfig context, through its agentplane.io API (docs/kubectl-plugin.md).'
        : 'Run long-lived AI agents: `agentplane serve` runs the service; the other commands talk to one.',
    )
    .option('--server <url>', "the server (AGENTPLANE_SERVER, the context's, else http://127.0.0.1:8080; through kubectl: the cluster's)")
    .option('-n, --namespace <ns>', "namespace (AGENTPLANE_NAMESPACE, the context's, else default)")
    .option('--token <token>', "bearer token (AGENTPLANE_TOKEN, the context's)")
    .option(
      '--context <name>',
      'context of the config file to use (AGENTPLANE_CONTEXT, else its current one); through kubectl, or one only the kubeconfig has: the kube context',
    )
    .option(
      '--kubeconfig <path>',
      'go through kube-apiserver with this kubeconfig, as `kubectl agentplane` does with KUBECONFIG or ~/.kube/config (docs/kubectl-plugin.md)',
    )
    .showHelpAfterError('(add --help for usage)')
    .exitOverride()
    .addHelpText(
      'after',
      '\nConfig: contexts in $XDG_CONFIG_HOME/agentplane/config.yaml (AGENTPLANE_CLIENT_CONFIG); see `agentplane config --help`.\nDocs: docs/cli.md.\n',
    );

  program.command('serve').description('run the agentplane service (see: agentplane serve --help)').helpOption(false).allowUnknownOption();
  registerRun(program, withSession);
  registerAgentCommands(program, withSession);
  registerApprovalCommands(program, withSession);
  registerMessageCommands(program, withSession);
  registerSquadCommands(program, withSession);
  registerCheckpointCommands(program, withSession);
  registerConnectorCommands(program, withSession);
  registerBudgetCommands(program, withSession);
  registerScheduleCommands(program, withSession);
  registerHookCommands(program, withSession);
  registerSkillMemoryCommands(program, withSession);
  registerSecretCommands(program, withSession);
  registerMcpCommands(program, withSession);
  registerConfigCommands(program, guarded);
  program
    .command('completion')
    .description('print a shell completion script: bash, zsh or fish')
    .argument('<shell>', 'bash, zsh or fish')
    .addHelpText(
      'after',
      '\n  bash: source <(agentplane completion bash)\n  zsh:  source <(agentplane completion zsh)\n  fish: agentplane completion fish | source\n',
    )
    .action(
      guarded((shell: string) => {
        const script = completionScript(shell);
        if (!script) throw new CliError(`no completion for shell "${shell}"`, 'choose bash, zsh or fish', EXIT.USAGE);
        process.stdout.write(script);
      }),
    );
  // Every subcommand: usage errors exit 2 (commander's default is 1).
  const all = (c: Command): Command[] => [c, ...c.commands.flatMap(all)];
  for (const c of all(program)) c.exitOverride();
  return program;
}

export async function runCli(argv: string[]): Promise<void> {
  const program = buildProgram();
  if (!argv.length) {
    program.outputHelp();
    return;
  }
  if (argv[0] === '__complete') {
    process.stdout.write((await complete(program, argv.slice(1))).map((x) => `${x}\n`).join(''));
    return;
  }
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and version are not failures; the message is already printed.
      process.exitCode = err.exitCode === 0 ? 0 : EXIT.USAGE;
      return;
    }
    process.exitCode = report(err);
  }
}
