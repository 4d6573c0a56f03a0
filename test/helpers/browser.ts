/**
 * A real browser for the report pages: Debian's chromium driven by playwright-core (never a
 * downloaded browser; .ci/run installs chromium). A watched page records what would make a test
 * fail: console errors, uncaught errors, dialogs (an `alert` that ran), and every request.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { REPO } from './fixtures.js';

/** The browser the tests drive. */
export const CHROMIUM = '/usr/bin/chromium';

/** Launches headless chromium with nothing running in the background that could make requests. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** What a watched page saw. */
export interface PageWatch {
  readonly page: Page;
  readonly errors: string[];
  readonly dialogs: string[];
  readonly requests: string[];
}

/**
 * A new page that records errors, dialogs and requests. Only `allowed` requests go through (the
 * page itself, or the server under test); any other is aborted and recorded, so a page that
 * tried to reach out fails its test instead of reaching the network.
 */
export async function watchedPage(browser: Browser, allowed: (url: string) => boolean): Promise<PageWatch> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const watch: PageWatch = { page, errors: [], dialogs: [], requests: [] };
  page.on('console', (message) => {
    if (message.type() === 'error') watch.errors.push(message.text());
  });
  page.on('pageerror', (error) => watch.errors.push(error.message));
  page.on('dialog', (dialog) => {
    watch.dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  page.on('request', (request) => watch.requests.push(request.url()));
  await page.route('**/*', (route) => (allowed(route.request().url()) ? route.continue() : route.abort()));
  return watch;
}

/** Saves a screenshot under test-artifacts/ (kept after the run, ignored by git). */
export async function screenshot(page: Page, name: string, fullPage = true): Promise<string> {
  const file = path.join(REPO, 'test-artifacts', name);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  await page.screenshot({ path: file, fullPage });
  return file;
}
