// Driving Debian's Chromium with playwright-core for the dashboard's tests: launching it, keeping
// screenshots under test-artifacts/dashboard/ (gitignored), waiting for the page to update
// itself, collecting errors the page throws, and a suite's browser, server and page (useDashboard).

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { expect } from 'chai';
import { type Browser, chromium, type Page } from 'playwright-core';
import type { ServeOptions } from '../../cmd/agentplane/serve.js';
import { type Harness, startHarness } from './harness.js';

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

export interface Dashboard {
  browser: Browser;
  h: Harness;
  page: Page;
  errors: string[];
}

/**
 * A suite's Chromium, a real embedded server and a page for it: opened before the suite's tests,
 * closed after them; each test ends with no error thrown in the page. Call it in a `describe`.
 */
export function useDashboard(o: { harness?: Partial<ServeOptions>; viewport?: { width: number; height: number } } = {}): Dashboard {
  const d = {} as Dashboard;
  before(async () => {
    [d.browser, d.h] = await Promise.all([launchChromium(), startHarness(o.harness)]);
    d.page = await d.browser.newPage({ viewport: o.viewport ?? { width: 1280, height: 900 } });
    d.errors = watchErrors(d.page);
  });
  after(async () => {
    await d.browser?.close();
    await d.h?.close();
  });
  afterEach(() => expect(d.errors, 'errors thrown in the page').to.deep.equal([]));
  return d;
}
