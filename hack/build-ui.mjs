#!/usr/bin/env node
// Bundles the dashboard (ui/src, React + Chart.js) with esbuild into dist/ui: index.html and
// content-hashed files under dist/ui/assets, which pkg/server/routes/ui.ts serves at /ui. Run by
// `make build`; everything comes from node_modules, so the page works offline (no CDN).
//
//   node hack/build-ui.mjs [--outdir dist/ui] [--dev]     (--dev: no minifying, inline source maps)

import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const outdir = resolve(root, args.includes('--outdir') ? args[args.indexOf('--outdir') + 1] : 'dist/ui');
const dev = args.includes('--dev');
const assets = join(outdir, 'assets');

// A fresh folder: the server serves every file in it, so stale bundles must not linger.
rmSync(outdir, { recursive: true, force: true });
mkdirSync(assets, { recursive: true });

const result = await build({
  absWorkingDir: root,
  entryPoints: { app: 'ui/src/main.tsx' },
  bundle: true,
  outdir: assets,
  entryNames: '[name]-[hash]',
  assetNames: '[name]-[hash]',
  format: 'esm',
  target: ['es2022'],
  jsx: 'automatic',
  minify: !dev,
  sourcemap: dev ? 'inline' : 'linked',
  define: { 'process.env.NODE_ENV': JSON.stringify(dev ? 'development' : 'production') },
  legalComments: 'linked',
  metafile: true,
  logLevel: 'warning',
});

const outputs = Object.entries(result.metafile.outputs).filter(([, o]) => o.entryPoint === 'ui/src/main.tsx');
const js = outputs.map(([f]) => basename(f)).find((f) => f.endsWith('.js'));
const css = Object.entries(result.metafile.outputs).find(([f, o]) => f.endsWith('.css') && o.inputs && Object.keys(o.inputs).length)?.[0];
if (!js) throw new Error('esbuild wrote no script for ui/src/main.tsx');

// The icon, content-hashed like the bundle; the server also answers /favicon.ico with it.
const iconSvg = readFileSync(join(root, 'ui/favicon.svg'));
const icon = `favicon-${createHash('sha256').update(iconSvg).digest('hex').slice(0, 8)}.svg`;
writeFileSync(join(assets, icon), iconSvg);

// Relative URLs: the page works at /ui/ and behind any prefix a proxy adds.
writeFileSync(
  join(outdir, 'index.html'),
  `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>agentplane</title>
<link rel="icon" type="image/svg+xml" href="assets/${icon}">
${css ? `<link rel="stylesheet" href="assets/${basename(css)}">\n` : ''}<script type="module" src="assets/${js}"></script>
</head>
<body><div id="root"></div></body>
</html>
`,
);
const size = (f) => (result.metafile.outputs[f]?.bytes / 1024).toFixed(0);
console.log(`dashboard: ${join(outdir, 'index.html')}, assets/${js} (${size(outputs.find(([f]) => f.endsWith('.js'))[0])} KiB)${css ? `, assets/${basename(css)}` : ''}`);
