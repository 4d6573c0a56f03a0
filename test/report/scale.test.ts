/// <reference lib="dom" />
/**
 * A 100k-event session's page: under 30 MB, and in chromium only a window of the timeline is in
 * the DOM, yet scrolling to the bottom shows the last event. One browser for the file.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeMixedSession } from '../../bench/utils/mixed-session.js';
import { reportHtml } from '../../src/report/html.js';
import { reportPageModel } from '../../src/report/page-model.js';
import { sessionFiles } from '../../src/store/session-files.js';
import { launchChromium, watchedPage } from '../helpers/browser.js';
import { tempDir } from '../helpers/temp.js';

const EVENTS = 100_000;

describe('the report page of a 100k-event session', () => {
  let browser: Browser;
  let file: string;
  let bytes: number;
  let lastEventId: string;
  let events: number;

  beforeAll(async () => {
    const home = tempDir();
    const id = await writeMixedSession(home, EVENTS);
    const model = reportPageModel(sessionFiles(path.join(home, 'sessions'), id), { generator: 'test' });
    events = model.events.length;
    lastEventId = model.events[events - 1]?.[0] as string;
    const { html } = reportHtml(model);
    bytes = Buffer.byteLength(html, 'utf8');
    file = path.join(home, 'big.html');
    fs.writeFileSync(file, html);
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
  });

  it('stays under 30 MB', () => {
    expect(events).toBeGreaterThanOrEqual(EVENTS);
    expect(bytes).toBeLessThan(30 * 1024 * 1024);
  });

  it('keeps only a window of rows in the DOM, and scrolling to the bottom shows the last event', async () => {
    const url = `file://${file}`;
    const watch = await watchedPage(browser, (requested) => requested === url);
    const { page } = watch;
    await page.goto(url);
    await page.waitForSelector('#timeline .row');
    expect(await page.locator('#shown').textContent()).toBe(`${events} events`);
    expect(await page.locator('.row').count()).toBeLessThan(500);
    await page.locator('#tl-viewport').evaluate((viewport) => {
      viewport.scrollTop = viewport.scrollHeight;
    });
    const last = page.locator(`#timeline .row[data-id="${lastEventId}"]`);
    await last.waitFor();
    expect(await last.locator('.kind').textContent()).toBe('session.close');
    expect(await last.evaluate((row) => {
      const box = row.getBoundingClientRect();
      const view = (document.getElementById('tl-viewport') as HTMLElement).getBoundingClientRect();
      return box.top >= view.top && box.bottom <= view.bottom + 1;
    })).toBe(true);
    expect(await page.locator('.row').count()).toBeLessThan(500);
    expect(watch.errors).toEqual([]);
    expect(watch.requests).toEqual([url]);
  }, 60_000);
});
