#!/usr/bin/env node
// The one build, however it is started (`make build`, `npm run build`): the service, CLI, worker
// and tests (tsconfig.json into dist/), the dashboard's type check (ui/tsconfig.json), and its
// bundle (hack/build-ui.mjs into dist/ui). Each step does only what changed: tsc in build mode
// with its .tsbuildinfo under dist/, the bundle only when a file it is made from is newer than
// it. A second build with nothing changed takes well under a second.
//
//   node hack/build.mjs

import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const tsc = join(root, 'node_modules/typescript/bin/tsc');

function run(what, args) {
  const started = Date.now();
  const r = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) {
    console.error(`build: ${what} failed${r.signal ? ` (${r.signal})` : ''}`);
    process.exit(r.status ?? 1);
  }
  return Date.now() - started;
}

/** The newest modification time under `path` (a file or a folder, recursively). */
function newest(path) {
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  return readdirSync(path).reduce((m, f) => Math.max(m, newest(join(path, f))), st.mtimeMs);
}

/** The TypeScript sources under `dir` (relative to the root). */
function sources(dir) {
  const abs = join(root, dir);
  if (!existsSync(abs)) return [];
  return readdirSync(abs, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [join(dir, e.name)] : [],
  );
}

// tsc's build mode goes by its .tsbuildinfo and does not notice an output deleted by hand:
// then everything is emitted again.
const missing = ['cmd', 'pkg', 'plugins', 'test', 'bench'].flatMap(sources).some((f) => !existsSync(join(root, 'dist', f.replace(/\.ts$/, '.js'))));
const times = [];
times.push(['service', run('tsc -b tsconfig.json', [tsc, '-b', 'tsconfig.json', ...(missing ? ['--force'] : [])])]);
times.push(['dashboard types', run('tsc -b ui/tsconfig.json', [tsc, '-b', 'ui/tsconfig.json'])]);

const bundle = join(root, 'dist/ui/index.html');
const inputs = ['ui', 'hack/build-ui.mjs', 'package-lock.json'].map((p) => join(root, p));
if (!existsSync(bundle) || Math.max(...inputs.map(newest)) > statSync(bundle).mtimeMs) {
  times.push(['dashboard bundle', run('hack/build-ui.mjs', [join(root, 'hack/build-ui.mjs')])]);
}

for (const main of ['dist/cmd/agentplane/main.js', 'dist/cmd/agentplane-worker/main.js']) chmodSync(join(root, main), 0o755);
console.log(`build: ${times.map(([w, ms]) => `${w} ${(ms / 1000).toFixed(1)}s`).join(', ')}`);
