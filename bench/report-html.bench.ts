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
import { describeSamples, formatCount, interleave, median, samplesOf, since, withTempDir } from './utils/measure.js';
import { printResult, type Figure } from './utils/result.js';

const EVENTS = Number(process.env['AURA_BENCH_REPORT_EVENTS'] ?? 100_000);
const BROWSER_RUNS = 5;
const SCROLL_STEPS = 100;

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
    ]);
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

    const { loads, frames, tasks } = await inChromium(file);
    const load = median(loads);
    const frame = median(frames);
    const task = median(tasks);
    console.log(`  chromium: timeline shown    ${describeSamples(loads, 'ms')}`);
    console.log(`  chromium: longest scroll frame ${describeSamples(frames, 'ms')} (target <= 100 ms: ${frame <= 100 ? 'met' : 'MISSED'})`);
    console.log(`  chromium: longest task while scrolling ${describeSamples(tasks, 'ms')} (target <= 100 ms: ${task <= 100 ? 'met' : 'MISSED'})`);
    const figures: Figure[] = [
      { name: 'report show', value: show, unit: 'ms' },
      { name: 'report html', value: render, unit: 'ms' },
      { name: 'report html / report show', value: render / show, unit: 'x' },
      { name: 'page size', value: megabytes, unit: 'MB', ceiling: 30 },
      { name: 'chromium: timeline shown', value: load, unit: 'ms' },
      { name: 'chromium: longest scroll frame', value: frame, unit: 'ms', ceiling: 100 },
      { name: 'chromium: longest task while scrolling', value: task, unit: 'ms', ceiling: 100 },
    ];
    printResult({ scenario: 'report-html', figures });
  });
}

/** Opens the page a few times: how long until its timeline shows, and its longest frame while scrolling. */
async function inChromium(file: string): Promise<{ loads: number[]; frames: number[]; tasks: number[] }> {
  const browser = await launchChromium();
  const loads: number[] = [];
  const frames: number[] = [];
  const tasks: number[] = [];
  try {
    for (let run = 0; run < BROWSER_RUNS; run++) {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      const start = performance.now();
      await page.goto(`file://${file}`);
      await page.waitForSelector('#timeline .row');
      loads.push(since(start));
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
      frames.push(scroll.longestFrame);
      tasks.push(scroll.longestTask);
      await page.close();
    }
  } finally {
    await browser.close();
  }
  return { loads, frames, tasks };
}

await main();
