/**
 * sessions-list: the wall time of `aura sessions list` (the built command, each run a fresh
 * process) over the kept store of 10,000 closed sessions (bench/utils/dataset.ts), after one
 * untimed run that brings the folder into the page cache. Goal: <= 1 s.
 *
 * Run `npm run build` first: this measures dist/.
 */

import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { dataset, FINDINGS_STORE } from './utils/dataset.js';
import { GOAL } from './utils/goals.js';
import { describeSamples, formatCount, formatValue, median, since, spread } from './utils/measure.js';
import { printResult } from './utils/result.js';

const RUNS = 3;
const CEILING_MS = 1000;
const ROOT = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const BIN = path.join(ROOT, 'dist', 'cli', 'bin.js');

function list(home: string): number {
  const start = performance.now();
  const result = spawnSync(process.execPath, [BIN, '--home', home, 'sessions', 'list', '--json'], { encoding: 'utf8', maxBuffer: 1 << 30 });
  const ms = since(start);
  if (result.status !== 0) throw new Error(`aura sessions list exited ${String(result.status)}: ${result.stderr}`);
  const rows = (JSON.parse(result.stdout) as { sessions: unknown[] }).sessions.length;
  if (rows !== FINDINGS_STORE.sessions) throw new Error(`aura sessions list listed ${rows} sessions, expected ${FINDINGS_STORE.sessions}`);
  return ms;
}

async function main(): Promise<void> {
  if (!fs.existsSync(BIN)) throw new Error('dist/ is not built: run npm run build first');
  const home = await dataset('find', 'bench/find', FINDINGS_STORE);
  console.log(`sessions-list: aura sessions list over ${formatCount(FINDINGS_STORE.sessions)} closed sessions of ${FINDINGS_STORE.events} events, ${RUNS} runs after one untimed`);
  list(home);
  const runs = Array.from({ length: RUNS }, () => list(home));
  console.log(`  aura sessions list  ${describeSamples(runs, 'ms')} (goal <= ${formatValue(CEILING_MS, 'ms')}: ${median(runs) <= CEILING_MS ? 'met' : 'NOT MET'})`);
  printResult({
    scenario: 'sessions-list',
    figures: [
      {
        name: `aura sessions list, ${formatCount(FINDINGS_STORE.sessions)} sessions`,
        value: median(runs),
        unit: 'ms',
        ceiling: CEILING_MS,
        goal: { row: GOAL.sessionsList, measured: `${formatValue(median(runs), 'ms')} (${spread(runs, 'ms')})`, baseline: '-' },
      },
    ],
  });
}

await main();
