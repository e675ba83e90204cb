// `agentplane mcp config`: the MCP client configuration for the current server and token, so a
// coding assistant drives agentplane through its /mcp endpoint (docs/mcp.md).

import type { Command } from 'commander';
import { CliError, EXIT } from '../exit-codes.js';
import type { Runner, Session } from '../session.js';

/** The `mcpServers` entry MCP clients read (Claude Code's .mcp.json, Claude Desktop, Cursor...). */
export function mcpClientConfig(server: string, token: string | undefined, name = 'agentplane'): object {
  return {
    mcpServers: {
      [name]: { type: 'http', url: mcpUrl(server), ...(token ? { headers: { Authorization: `Bearer ${token}` } } : {}) },
    },
  };
}

const mcpUrl = (server: string): string => `${server.replace(/\/+$/, '')}/mcp`;
const shellQuote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

export function registerMcpCommands(program: Command, run: Runner): void {
  const mcp = program.command('mcp').description("agentplane as an MCP server for your coding assistant (the server's /mcp)");
  mcp
    .command('config')
    .description('print the MCP client configuration for the current server and token')
    .option('--format <format>', 'json (an mcpServers entry, default) or claude (a `claude mcp add` command)', 'json')
    .option('--name <name>', 'the server name in the client', 'agentplane')
    .action(run(printConfig));
}

async function printConfig(s: Session): Promise<void> {
  const { format, name } = s.opts as { format?: string; name?: string };
  const { server, token } = s.target;
  const label = name || 'agentplane';
  if (format === 'claude') {
    const header = token ? ` --header ${shellQuote(`Authorization: Bearer ${token}`)}` : '';
    s.out(`claude mcp add --transport http ${shellQuote(label)} ${shellQuote(mcpUrl(server))}${header}\n`);
    return;
  }
  if (format !== undefined && format !== 'json') throw new CliError(`unknown format "${format}"`, 'use --format json or --format claude', EXIT.USAGE);
  s.out(`${JSON.stringify(mcpClientConfig(server, token, label), null, 2)}\n`);
  await Promise.resolve();
}
