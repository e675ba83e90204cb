// Driving Debian's Chromium with playwright-core for the dashboard's tests: launching it, keeping
// screenshots under test-artifacts/dashboard/ (gitignored), waiting for the page to update
// itself, and collecting errors the page throws.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { type Browser, chromium, type Page } from 'playwright-core';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARTIFACTS = fileURLToPath(new URL('../../../test-artifacts/dashboard/', import.meta.url));

export async function launchChromium(): Promise<Browser> {
  // As root (CI containers), Chromium's sandbox cannot start: --no-sandbox.
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

/** A full-page screenshot at test-artifacts/dashboard/<name>.png; prints its path. */
export async function shot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  console.log(`      screenshot: ${path}`);
}

/** Retries `check` (assertions) until it passes or `timeoutMs` runs out; the page updates itself. */
export async function eventually(check: () => Promise<unknown>, opts: { timeoutMs?: number } = {}): Promise<void> {
  const deadline = Date.now() + (opts.timeoutMs ?? 15_000);
  for (;;) {
    try {
      await check();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

/** Collects the errors the page itself throws (a broken bundle, a React crash): tests expect none. */
export function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  return errors;
}
