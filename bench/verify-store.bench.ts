/**
 * `verify store` over 10,000 signed sessions of 8 events each, as a store of a busy day looks:
 * sessions verified per second, and the time of the whole walk. No baseline: the figure is the one
 * the issue asks for, reported as measured. The store is built once and kept with the bench data
 * (bench/utils/dataset.ts).
 */

import * as path from 'node:path';
import { KeyRing } from '../src/spine/signing.js';
import { verifyStore } from '../src/store/verify-store.js';
import { dataset } from './utils/dataset.js';
import { describeSamples, formatCount, median, since } from './utils/measure.js';
import { printResult, type Figure } from './utils/result.js';

const SESSIONS = 10_000;
const RUNS = 3;

async function main(): Promise<void> {
  console.log(`verify-store: ${formatCount(SESSIONS)} signed sessions of 8 events; median of ${RUNS} walks`);
  const home = await dataset('signed', 'bench/store', { sessions: SESSIONS, events: 8 }, { signed: true });
  const keys = KeyRing.load(path.join(home, 'keys'));
  const times: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    let last = 0;
    const start = performance.now();
    const report = verifyStore({
      sessionsDir: path.join(home, 'sessions'),
      sealLog: path.join(home, 'seals.jsonl'),
      keys,
      onProgress: (done, total) => {
        // The progress line a TTY shows, printed here every 2,500 sessions.
        if (done - last >= 2500 || done === total) {
          last = done;
          process.stdout.write(`  verifying sessions ${done}/${total}\n`);
        }
      },
    });
    times.push(since(start));
    if (!report.ok || report.counts.verified !== SESSIONS) throw new Error(`the store did not verify: ${JSON.stringify(report.counts)}`);
  }
  const rate = SESSIONS / (median(times) / 1000);
  console.log(`  walk      ${describeSamples(times, 'ms')}`);
  console.log(`  ${formatCount(Math.round(rate))} sessions/s`);
  const figures: Figure[] = [
    { name: `verify store, ${formatCount(SESSIONS)} sessions`, value: median(times), unit: 'ms' },
    { name: 'verify store rate', value: rate, unit: 'sessions/s' },
  ];
  printResult({ scenario: 'verify-store', figures });
}

await main();
