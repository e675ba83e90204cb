// The chart's tools for tests: helm and kubeconform, built from Go modules by hack/build-tools.sh
// (cached by version), and small wrappers that render charts/agentplane.

import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { parseAllDocuments } from 'yaml';

import { REPO, type RunResult } from './control-plane.js';

const run = promisify(execFile);
export const CHART = join(REPO, 'charts/agentplane');

/** The directory holding helm and kubeconform (built on first use: minutes with a cold Go cache). */
export async function chartTools(): Promise<string> {
  const { stdout } = await run('bash', [join(REPO, 'hack/build-tools.sh')], { maxBuffer: 1 << 20, timeout: 40 * 60_000 });
  return stdout.trim().split('\n').at(-1)!;
}

/** The control plane's bin dir (kubectl for `kubectl kustomize`), built or cached (hack/build-control-plane.sh). */
export async function controlPlaneBin(): Promise<string> {
  const env = { ...process.env, AGENTPLANE_CP_NODE: 'false' };
  const { stdout } = await run('bash', [join(REPO, 'hack/build-control-plane.sh')], { env, maxBuffer: 1 << 20, timeout: 40 * 60_000 });
  return stdout.trim().split('\n').at(-1)!;
}

/** Runs a tool; resolves with its output and exit code, and rejects on failure unless allowFail. */
export function tool(file: string, args: string[], opts: { allowFail?: boolean; input?: string; env?: NodeJS.ProcessEnv } = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = execFile(file, args, { maxBuffer: 64 << 20, timeout: 10 * 60_000, env: { ...process.env, ...opts.env } }, (err, stdout, stderr) => {
      const code = err ? Number((err as { code?: number }).code ?? 1) : 0;
      if (code !== 0 && !opts.allowFail) reject(new Error(`${file} ${args.join(' ')} failed (${code}):\n${stdout}\n${stderr}`));
      else resolve({ code, stdout, stderr });
    });
    if (opts.input !== undefined) child.stdin!.end(opts.input);
  });
}

/** An object as rendered; enough typing for the tests' reads. */
export type K8sObject = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string> } } & Record<
  string,
  any
>;

/** Every non-empty document of a multi-document YAML stream (helm's has empty ones). */
export const parseAll = (yaml: string): K8sObject[] =>
  parseAllDocuments(yaml)
    .map((d) => d.toJS() as K8sObject | null)
    .filter((o): o is K8sObject => !!o);
