#!/usr/bin/env node
// Prints the REST mirror's OpenAPI document, the one a server serves at /openapi.json, without a
// server: it is built by pkg/api/openapi.ts, read here from the build (`make build` first).
//
//   node hack/openapi-dump.mjs > openapi.json

import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const built = join(resolve(dirname(fileURLToPath(import.meta.url)), '..'), 'dist/pkg/api/openapi.js');
if (!existsSync(built)) {
  console.error(`openapi-dump: ${built} is missing: run make build first`);
  process.exit(1);
}
const { buildOpenApi } = await import(pathToFileURL(built).href);
process.stdout.write(`${JSON.stringify(buildOpenApi(), null, 2)}\n`);
