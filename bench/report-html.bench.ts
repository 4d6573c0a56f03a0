/// <reference lib="dom" />
/**
 * The report page of a 100k-event session (every kind the page marks): building the HTML beside
 * `report show`'s report of the same trail (the baseline: the page costs the report plus the
 * timeline), the page's size, and in chromium the time until the timeline shows, and the longest
 * frame and main-thread task while scrolling it top to bottom. Targets: under 30 MB, no frame or
 * task over 100 ms.
 *
 *   AURA_BENCH_REPORT_EVENTS=300000 npm run bench:report-html     a bigger session
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { sessionReport } from '../src/audit/session-report.js';
import { reportHtml } from '../src/report/html.js';
import { reportPageModel } from '../src/report/page-model.js';
import { sessionFiles } from '../src/store/session-files.js';
import { launchChromium } from '../test/helpers/browser.js';
import { writeMixedSession } from './utils/mixed-session.js';
import { describeSamples, formatCount, GUARD_REPETITIONS, interleave, median, samplesOf, since, withTempDir } from './utils/measure.js';
import { printResult, type Figure } from './utils/result.js';

const EVENTS = Number(process.env['AURA_BENCH_REPORT_EVENTS'] ?? 100_000);
const SCROLL_STEPS = 50;
const SMALL_EVENTS = 1_000;

/** What the browser measured of one page, a sample a run. */
interface PageRuns {
  readonly loads: number[];
  readonly frames: number[];
  readonly tasks: number[];
  /** Main-thread task time per scroll step (the browser's TaskDuration): the mean cost, robust to one slow frame. */
  readonly perStep: number[];
}

async function main(): Promise<void> {
  await withTempDir('report-html', async (home) => {
    const files = sessionFiles(path.join(home, 'sessions'), await writeMixedSession(home, EVENTS));
    let html = '';
    const samples = await interleave([
      {
        name: 'report show',
        run: () => {
          const start = performance.now();
          sessionReport(files);
          return since(start);
        },
      },
      {
        name: 'report html',
        run: () => {
          const start = performance.now();
          html = reportHtml(reportPageModel(files, { generator: 'bench' })).html;
          return since(start);
        },
      },
    ], GUARD_REPETITIONS);
    const show = median(samplesOf(samples, 'report show'));
    const render = median(samplesOf(samples, 'report html'));
    const megabytes = Buffer.byteLength(html, 'utf8') / 1e6;
    const file = path.join(home, 'report.html');
    fs.writeFileSync(file, html);
    console.log(`report-html: ${formatCount(EVENTS)} events; median of interleaved runs`);
    console.log(`  report show   ${describeSamples(samplesOf(samples, 'report show'), 'ms')}`);
    console.log(`  report html   ${describeSamples(samplesOf(samples, 'report html'), 'ms')}`);
    console.log(`  html / show   ${(render / show).toFixed(2)}x`);
    console.log(`  page size     ${megabytes.toFixed(1)} MB (target < 30: ${megabytes < 30 ? 'met' : 'MISSED'})`);

    // The browser baseline: the same page code over a small session, opened in the same rounds. On
    // a busy machine every frame is slow; what virtual scrolling must keep is the ratio near 1.
    const smallHome = path.join(home, 'small');
    const small = path.join(home, 'small.html');
    fs.writeFileSync(small, reportHtml(reportPageModel(sessionFiles(path.join(smallHome, 'sessions'), await writeMixedSession(smallHome, SMALL_EVENTS)), { generator: 'bench' })).html);
    const [base, page] = (await inChromium([small, file])) as [PageRuns, PageRuns];
    const frame = median(page.frames);
    const task = median(page.tasks);
    console.log(`  chromium, ${formatCount(SMALL_EVENTS)}-event page (baseline) / ${formatCount(EVENTS)}-event page:`);
    console.log(`    timeline shown         ${describeSamples(base.loads, 'ms')} / ${describeSamples(page.loads, 'ms')}`);
    console.log(`    longest scroll frame   ${describeSamples(base.frames, 'ms')} / ${describeSamples(page.frames, 'ms')} (target <= 100 ms: ${frame <= 100 ? 'met' : 'MISSED'})`);
    console.log(`    main thread per step   ${describeSamples(base.perStep, 'ms')} / ${describeSamples(page.perStep, 'ms')}`);
    console.log(`    longest task scrolling ${describeSamples(base.tasks, 'ms')} / ${describeSamples(page.tasks, 'ms')} (target <= 100 ms: ${task <= 100 ? 'met' : 'MISSED'})`);
    const figures: Figure[] = [
      { name: 'report show', value: show, unit: 'ms' },
      { name: 'report html', value: render, unit: 'ms' },
      { name: 'report html / report show', value: render / show, unit: 'x' },
      { name: 'page size', value: megabytes, unit: 'MB', ceiling: 30 },
      { name: 'chromium: timeline shown', value: median(page.loads), unit: 'ms' },
      { name: 'chromium: main thread per scroll step', value: median(page.perStep), unit: 'ms' },
      { name: 'chromium: per step / small page', value: median(page.perStep) / median(base.perStep), unit: 'x' },
      { name: 'chromium: longest scroll frame', value: frame, unit: 'ms', ceiling: 100 },
      { name: 'chromium: longest frame / small page', value: frame / median(base.frames), unit: 'x' },
      { name: 'chromium: longest task while scrolling', value: task, unit: 'ms', ceiling: 100 },
    ];
    printResult({ scenario: 'report-html', figures });
  });
}

/**
 * Opens each page once a round, a few rounds: how long until its timeline shows, and its longest
 * frame and task while scrolling it top to bottom.
 */
async function inChromium(files: readonly string[]): Promise<PageRuns[]> {
  const browser = await launchChromium();
  const runs: PageRuns[] = files.map(() => ({ loads: [], frames: [], tasks: [], perStep: [] }));
  try {
    for (let round = 0; round < GUARD_REPETITIONS; round++) {
      for (const [i, file] of files.entries()) {
        const measured = runs[i] as PageRuns;
        const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
        const start = performance.now();
        await page.goto(`file://${file}`);
        await page.waitForSelector('#timeline .row');
        measured.loads.push(since(start));
        const cdp = await page.context().newCDPSession(page);
        await cdp.send('Performance.enable');
        const taskSeconds = async (): Promise<number> => (await cdp.send('Performance.getMetrics')).metrics.find((m) => m.name === 'TaskDuration')?.value ?? 0;
        const before = await taskSeconds();
        const scroll = await page.evaluate(async (steps) => {
          const viewport = document.getElementById('tl-viewport') as HTMLElement;
          // Main-thread tasks over 50 ms (the browser reports only those): what a user feels as a freeze.
          let longestTask = 0;
          new PerformanceObserver((list) => {
            for (const entry of list.getEntries()) longestTask = Math.max(longestTask, entry.duration);
          }).observe({ type: 'longtask' });
          // No named helper functions in here: tsx would wrap them in a __name the page does not have.
          let last = await new Promise<number>((resolve) => requestAnimationFrame(resolve));
          let longestFrame = 0;
          for (let step = 1; step <= steps; step++) {
            viewport.scrollTop = ((viewport.scrollHeight - viewport.clientHeight) * step) / steps;
            // Two frames: the scroll handler renders rows in the first, the browser paints them by the second.
            await new Promise<number>((resolve) => requestAnimationFrame(resolve));
            const now = await new Promise<number>((resolve) => requestAnimationFrame(resolve));
            longestFrame = Math.max(longestFrame, (now - last) / 2);
            last = now;
          }
          await new Promise((resolve) => setTimeout(resolve, 100));
          return { longestFrame, longestTask };
        }, SCROLL_STEPS);
        measured.perStep.push(((await taskSeconds()) - before) * 1000 / SCROLL_STEPS);
        measured.frames.push(scroll.longestFrame);
        measured.tasks.push(scroll.longestTask);
        await page.close();
      }
    }
  } finally {
    await browser.close();
  }
  return runs;
}

await main();
