// `agentplane serve --help`, written from the flag declarations (serve-flags.ts): each flag with
// its variable, config key and default, so the help cannot name a flag the parser does not take.

import type { Flag } from './flag.js';
import { configKeys } from './config-file.js';
import { SERVE_FLAG_LIST } from './serve-flags.js';

const WIDTH = 94;
const INDENT = 23;

const INTRO = `Usage: agentplane serve [flags]

Runs the agentplane service. Embedded mode (default): the REST API at /api/v1 and the
aggregated API at /apis/agentplane.io, agents as local worker processes, state in SQLite
under the data directory. Kubernetes mode: the same APIs over TLS (HTTP/2 and HTTP/1.1),
served behind kube-apiserver as an APIService, state in Kubernetes, delegated authn/authz.
`;

const OUTRO = `
The model endpoint and credential come from the server's environment only, never from clients:
  ANTHROPIC_API_KEY    the model provider key; only the server's model proxy holds it (agent
                       workers get the proxy's URL and a per-agent credential). Pods with the
                       model-proxy sidecar use the mirrored Secret's key instead
  ANTHROPIC_BASE_URL   Anthropic Messages API endpoint (default: Anthropic's)
`;

/** Where a flag's value can also come from, and its default, as help says them. */
export function flagSources(f: Flag): string {
  // A loose boolean variable is on only when "true": say so.
  const parts = [f.env && f.looseBoolEnv ? `${f.env}=true` : f.env, f.config && `config "${f.config}"`];
  const dflt = f.defaultHelp ?? (f.default === undefined ? undefined : String(f.default));
  if (dflt !== undefined) parts.push(`default ${dflt}`);
  return parts.filter(Boolean).join('; ');
}

/** `text` in words from column INDENT, after `label` (on a line of its own when it is long). */
function wrap(text: string, label: string): string[] {
  const lines: string[] = [];
  let line = label.padEnd(INDENT);
  if (label.length >= INDENT - 1) {
    lines.push(label);
    line = ' '.repeat(INDENT);
  }
  let fresh = true;
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (!fresh && line.length + 1 + word.length > WIDTH) {
      lines.push(line);
      line = ' '.repeat(INDENT);
      fresh = true;
    }
    line += (fresh ? '' : ' ') + word;
    fresh = false;
  }
  lines.push(line);
  return lines;
}

function flagHelp(f: Flag): string[] {
  const sources = flagSources(f);
  return wrap(`${f.help}${sources ? ` (${sources})` : ''}`, `  --${f.name}${f.arg ? ` ${f.arg}` : ''}`);
}

export function serveHelp(): string {
  const section = (s: Flag['section']): string[] => SERVE_FLAG_LIST.filter((f) => f.section === s).flatMap(flagHelp);
  return [
    INTRO,
    'Flags (each can also be set by the environment variable shown; --no-<flag> turns a boolean off):',
    ...section('general'),
    '  -h, --help           show this help',
    '',
    'Kubernetes mode:',
    ...section('kubernetes'),
    '',
    ...wrap(`${configKeys().join(', ')} (a flag's key is in its line above)`, '  --config keys:'),
    OUTRO,
  ].join('\n');
}
