/// <reference lib="dom" />
/**
 * The report page in a real browser (chromium, from the file:// the CLI wrote): an aura demo
 * session, Python Aura sessions from the interop corpus, and a session whose payloads try to
 * break out of the page. One browser for the file.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reportHtml } from '../../src/report/html.js';
import { reportPageModel } from '../../src/report/page-model.js';
import { canonicalJson } from '../../src/spine/canonical.js';
import { readTrail } from '../../src/spine/trail-reader.js';
import { sessionFiles } from '../../src/store/session-files.js';
import { launchChromium, screenshot, watchedPage, type PageWatch } from '../helpers/browser.js';
import { auraJson } from '../helpers/cli.js';
import { AURA_PY, interopIndex } from '../helpers/fixtures.js';
import { demoSession, openSession } from '../helpers/sessions.js';
import { tempDir } from '../helpers/temp.js';

interface Rendered {
  readonly file: string;
  readonly sessionsDir: string;
  readonly id: string;
}

/** Writes a session's page with `aura report html` and returns where. */
function renderWithCli(home: string, id: string): Rendered {
  const file = path.join(tempDir(), `${id}.html`);
  const run = auraJson(['report', 'html', id, '-o', file], { home });
  expect(run.status).toBe(0);
  expect(run.json['path']).toBe(file);
  return { file, sessionsDir: path.join(home, 'sessions'), id };
}

/** The verdict and findings `aura report show` gives: what the page must show. */
function reportShow(home: string, id: string): { verdict: string; findings: { kind: string; event_ids: string[] }[] } {
  return auraJson(['report', 'show', id], { home }).json['audit_report'] as { verdict: string; findings: { kind: string; event_ids: string[] }[] };
}

async function open(browser: Browser, file: string): Promise<PageWatch> {
  const url = `file://${file}`;
  const watch = await watchedPage(browser, (requested) => requested === url);
  await watch.page.goto(url);
  await watch.page.waitForSelector('#timeline .row');
  return watch;
}

/** The page loaded only itself, and nothing went wrong in it. */
function expectQuietPage(watch: PageWatch, file: string): void {
  expect(watch.errors).toEqual([]);
  expect(watch.dialogs).toEqual([]);
  expect(watch.requests).toEqual([`file://${file}`]);
}

describe('aura report html, in chromium', () => {
  let browser: Browser;
  let demoHome: string;
  let demo: Rendered;

  beforeAll(async () => {
    browser = await launchChromium();
    demoHome = tempDir();
    const id = await demoSession(demoHome);
    demo = renderWithCli(demoHome, id);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
  });

  it('shows the demo session: verdict, chain, findings, timeline; a finding scrolls to its event; filters work', async () => {
    const expected = reportShow(demoHome, demo.id);
    const { events } = readTrail(sessionFiles(demo.sessionsDir, demo.id).trail);
    const watch = await open(browser, demo.file);
    const { page } = watch;

    expect(await page.locator('#verdict .badge').textContent()).toBe(expected.verdict.toUpperCase());
    // The verdict says why, as report show does.
    const reason = String(auraJson(['report', 'show', demo.id], { home: demoHome }).json['verdict_reason']);
    expect(reason).toMatch(/^conformance: /);
    expect(await page.locator('#verdict .verdict-reason').textContent()).toBe(` (${reason})`);
    expect(await page.locator('#chain').textContent()).toContain('hash chain valid');
    expect(await page.locator('#chain').textContent()).toContain(`${events.length} events`);
    const findings = page.locator('#findings .finding');
    expect(await findings.count()).toBe(expected.findings.length);
    expect(await findings.locator('.badge').allTextContents()).toEqual(expect.arrayContaining(expected.findings.map((f) => f.kind)));
    // Sections in the order the issue asks for.
    expect(await page.locator('main > section').evaluateAll((nodes) => nodes.map((n) => n.id))).toEqual(['verdict', 'chain', 'findings', 'scorecard', 'timeline', 'chart']);
    expect(await page.locator('#chart svg rect').count()).toBeGreaterThan(0);
    // The timeline holds every event; the rows in the page are the first ones, in order.
    expect(await page.locator('#shown').textContent()).toBe(`${events.length} events`);
    const shownIds = await page.locator('#timeline .row').evaluateAll((rows) => rows.map((row) => (row as HTMLElement).dataset['id']));
    expect(shownIds.length).toBeGreaterThanOrEqual(Math.min(events.length, 20));
    expect(shownIds).toEqual(events.slice(0, shownIds.length).map((e) => e.event_id));

    // A finding's link scrolls the timeline to its event and highlights it.
    const cited = expected.findings[0]?.event_ids[0] as string;
    await page.locator(`#findings .event-link[data-event-id="${cited}"]`).first().click();
    const highlighted = page.locator('#timeline .row.hl');
    expect(await highlighted.getAttribute('data-id')).toBe(cited);
    expect(await highlighted.evaluate((row) => {
      const box = row.getBoundingClientRect();
      const view = (document.getElementById('tl-viewport') as HTMLElement).getBoundingClientRect();
      return box.top >= view.top && box.bottom <= view.bottom && box.top >= 0 && box.bottom <= window.innerHeight;
    })).toBe(true);
    expect(await page.locator('#tl-detail').textContent()).toContain(cited);
    await screenshot(page, 'report.png');

    // Filter by kind.
    const toolCalls = events.filter((e) => e.kind === 'tool.call').length;
    const option = await page.locator('#kind-filter option').evaluateAll((options) => (options as HTMLOptionElement[]).find((o) => o.textContent?.startsWith('tool.call ('))?.value);
    await page.selectOption('#kind-filter', option as string);
    expect(await page.locator('#timeline .row .kind').allTextContents()).toEqual(Array(toolCalls).fill('tool.call'));
    // Text search, over all kinds.
    await page.selectOption('#kind-filter', '');
    const matching = events.filter((e) => canonicalJson(e.payload).toLowerCase().includes('shell.exec')).length;
    await page.fill('#search', 'shell.exec');
    await page.waitForFunction((n) => document.querySelectorAll('#timeline .row').length === n, matching);
    expect(await page.locator('#shown').textContent()).toBe(`${matching} of ${events.length} events`);
    expectQuietPage(watch, demo.file);
  });

  for (const name of ['approval_granted', 'policy_deny_tool']) {
    it(`shows the Python Aura session ${name} as report show reads it`, async () => {
      const id = interopIndex().sessions[name]?.session_id as string;
      const home = tempDir();
      fs.mkdirSync(path.join(home, 'sessions'));
      for (const suffix of ['.jsonl', '.summary.json']) fs.copyFileSync(path.join(AURA_PY, 'sessions', `${id}${suffix}`), path.join(home, 'sessions', `${id}${suffix}`));
      const expected = reportShow(home, id);
      const rendered = renderWithCli(home, id);
      const { events } = readTrail(sessionFiles(rendered.sessionsDir, id).trail);
      const watch = await open(browser, rendered.file);
      const { page } = watch;
      expect(await page.locator('#verdict .badge').textContent()).toBe(expected.verdict.toUpperCase());
      expect(await page.locator('#verdict').textContent()).toContain('written by python-aura');
      expect(await page.locator('#findings .finding .badge').allTextContents()).toEqual(expect.arrayContaining(expected.findings.map((f) => f.kind)));
      expect(await page.locator('#findings .finding').count()).toBe(expected.findings.length);
      expect(await page.locator('#timeline .row').count()).toBe(events.length);
      expect(await page.locator('#chain').textContent()).toContain('unsigned');
      if (name === 'approval_granted') {
        const approved = events.find((e) => e.kind === 'constraint.approved');
        expect(await page.locator(`#timeline .row[data-id="${approved?.event_id}"] .marker`).textContent()).toBe(`approved by ${String(approved?.payload['principal'])}`);
      }
      expectQuietPage(watch, rendered.file);
    });
  }

  it("names the summary of a session still being written as a snapshot that differs, not as one that disagrees", async () => {
    const { session, home } = openSession();
    session.emit('tool.call', { tool: 'search', args: { q: 'one' } });
    expect(auraJson(['export', session.id], { home }).status).toBe(0);
    session.emit('tool.call', { tool: 'search', args: { q: 'two' } });
    const { file } = renderWithCli(home, session.id);
    const watch = await open(browser, file);
    const said = (await watch.page.locator('#verdict').textContent()) ?? '';
    expect(said).toContain('the stored summary (written by aura while the session ran) differs:');
    expect(said).toMatch(/event_count \d+ vs \d+ in the trail/);
    expect(said).not.toContain('disagrees');
    expect(said).not.toContain('SUMMARY_MISMATCH');
    expect(await watch.page.locator('#verdict ul.bad-text').count()).toBe(0);
    expectQuietPage(watch, file);
    await session.close();
  });

  it('renders payloads that hold <script> and </script><!-- as text, and runs none of them', async () => {
    const { session, home } = openSession();
    const attack = '<script>alert(1)</script>';
    const breakout = '</script><!-- <img src=x onerror=alert(2)>';
    session.emit('agent.note', { text: attack, tail: breakout });
    const closed = await session.close();
    const model = reportPageModel(sessionFiles(path.join(home, 'sessions'), closed.session_id), { generator: 'test' });
    const file = path.join(tempDir(), 'escape.html');
    const { html } = reportHtml(model);
    fs.writeFileSync(file, html);
    // The data block holds no '<' at all: nothing in it can end it.
    const data = /<script type="application\/json" id="aura-data">([\s\S]*?)<\/script>/.exec(html)?.[1] ?? '';
    expect(data).not.toContain('<');
    expect(data.length).toBeGreaterThan(1000);

    const watch = await open(browser, file);
    const { page } = watch;
    await page.fill('#search', 'alert(1)');
    await page.waitForFunction(() => document.querySelectorAll('#timeline .row').length === 1);
    const row = page.locator('#timeline .row');
    expect(await row.locator('.text').textContent()).toContain(attack);
    expect(await row.locator('.text').isVisible()).toBe(true);
    await row.click();
    const payload = await page.locator('#tl-detail pre').textContent();
    expect(payload).toContain(attack);
    expect(payload).toContain(breakout);
    expect(await page.locator('script:not([type]), img').count()).toBe(1);
    expectQuietPage(watch, file);
  });
});
