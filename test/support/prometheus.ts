// A real Prometheus for tests (hack/build-prometheus.sh builds it from its Go module, cached):
// on loopback, in a temporary directory, scraping the given targets every second, with the given
// rule files; and promtool.

import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { freePort } from './server-process.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const run = promisify(execFile);

/** The directory of prometheus and promtool: built on first use (minutes), then cached. */
export function prometheusBin(): string {
  const out = execFileSync('bash', [join(REPO, 'hack/build-prometheus.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 30 * 60_000 });
  return out.trim().split('\n').pop()!;
}

/** promtool's exit code and output (a failing check is a result, not an exception). */
export async function promtool(bin: string, args: string[]): Promise<{ code: number; output: string }> {
  try {
    const r = await run(join(bin, 'promtool'), args, { timeout: 60_000 });
    return { code: 0, output: r.stdout + r.stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

export interface QueryResult {
  status: string;
  error?: string;
  data?: { resultType: string; result: { metric: Record<string, string>; value: [number, string] }[] };
}

export interface RuleState {
  name: string;
  type: string;
  health: string;
  lastError?: string;
  lastEvaluation: string;
}

export class Prometheus {
  private constructor(
    readonly url: string,
    private readonly child: ChildProcess,
    private readonly dir: string,
    readonly output: string[],
  ) {}

  /** Starts Prometheus scraping `targets` (host:port) every second and evaluating `ruleFiles` every second. */
  static async start(bin: string, targets: string[], ruleFiles: string[]): Promise<Prometheus> {
    const dir = mkdtempSync(join(tmpdir(), 'agentplane-prometheus-'));
    const config = {
      global: { scrape_interval: '1s', evaluation_interval: '1s' },
      rule_files: ruleFiles,
      scrape_configs: [{ job_name: 'agentplane', honor_labels: true, static_configs: [{ targets }] }],
    };
    writeFileSync(join(dir, 'prometheus.yml'), JSON.stringify(config));
    const port = await freePort();
    const args = [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`];
    const child = spawn(join(bin, 'prometheus'), args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const output: string[] = [];
    for (const s of [child.stdout, child.stderr]) s.on('data', (c: Buffer) => output.push(...String(c).split('\n').filter(Boolean)));
    const p = new Prometheus(`http://127.0.0.1:${port}`, child, dir, output);
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`prometheus exited (${child.exitCode}):\n${output.slice(-20).join('\n')}`);
      if (Date.now() > deadline) {
        await p.stop();
        throw new Error(`prometheus not ready within 60 s:\n${output.slice(-20).join('\n')}`);
      }
      try {
        if ((await fetch(`${p.url}/-/ready`)).status === 200) return p;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** An instant query through the HTTP API. */
  async query(expr: string): Promise<QueryResult> {
    const r = await fetch(`${this.url}/api/v1/query`, { method: 'POST', body: new URLSearchParams({ query: expr }) });
    return (await r.json()) as QueryResult;
  }

  /** The targets' scrape health, by scrape URL. */
  async targets(): Promise<{ scrapeUrl: string; health: string; lastError: string }[]> {
    const r = (await (await fetch(`${this.url}/api/v1/targets`)).json()) as {
      data: { activeTargets: { scrapeUrl: string; health: string; lastError: string }[] };
    };
    return r.data.activeTargets;
  }

  /** Every loaded rule with its health and last evaluation. */
  async rules(): Promise<RuleState[]> {
    const r = (await (await fetch(`${this.url}/api/v1/rules`)).json()) as { data: { groups: { rules: RuleState[] }[] } };
    return r.data.groups.flatMap((g) => g.rules);
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null) {
      const gone = new Promise((r) => this.child.once('exit', r));
      this.child.kill('SIGTERM');
      const t = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
      await gone;
      clearTimeout(t);
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
