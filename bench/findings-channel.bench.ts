/**
 * The findings channel over a big store: 10,000 sessions, 1M events in all. Over stdio, with the
 * SDK client: the first `get_session_findings` call (every trail read and verified), a warm call
 * (nothing changed: fingerprints only), and a warm call after one trail changed. Beside them, in
 * the same run, `verify chain` over every trail, so the first call's cost per MB can be compared.
 * Targets: warm <= 100 ms, after one change <= 150 ms.
 *
 * Building the store takes minutes: it is built once and kept (bench/utils/dataset.ts), and the
 * trails the run changes are cut back to their size before, so the next run finds the same store.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { verifyTrail } from '../src/spine/verify.js';
import { dataset, FINDINGS_STORE } from './utils/dataset.js';
import { GOAL } from './utils/goals.js';
import { describeSamples, formatCount, formatValue, median, since, spread } from './utils/measure.js';
import { printResult, type Figure } from './utils/result.js';

const EVENTS_PER_SESSION = FINDINGS_STORE.events;
const ROOT = path.dirname(path.dirname(fileURLToPath(import.meta.url)));

async function call(client: Client): Promise<number> {
  const start = performance.now();
  const result = await client.callTool({ name: 'get_session_findings', arguments: { per_kind_limit: 5, include_summary: false } });
  if (result.isError === true) throw new Error(JSON.stringify(result.content));
  return since(start);
}

async function main(): Promise<void> {
  const building = performance.now();
  const home = await dataset('find', 'bench/find', FINDINGS_STORE);
  const sessionsDir = path.join(home, 'sessions');
  const trails = fs.readdirSync(sessionsDir).filter((n) => n.endsWith('.jsonl') && !n.endsWith('.otel.jsonl'));
  const megabytes = trails.reduce((sum, n) => sum + fs.statSync(path.join(sessionsDir, n)).size, 0) / 1e6;
  console.log(`findings-channel: ${formatCount(trails.length)} sessions, ${formatCount(trails.length * EVENTS_PER_SESSION)} events, ${megabytes.toFixed(0)} MB of trails (ready in ${(since(building) / 1000).toFixed(0)} s)`);

  const verifyStart = performance.now();
  for (const name of trails) verifyTrail(path.join(sessionsDir, name));
  const verifyMs = since(verifyStart);

  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: ['--import', 'tsx', path.join(ROOT, 'src', 'cli', 'main.ts'), '--home', home, 'mcp'], cwd: ROOT, stderr: 'inherit' }));
  try {
    const first = await call(client);
    const warm: number[] = [];
    for (let i = 0; i < 5; i++) warm.push(await call(client));
    const changed: number[] = [];
    const touched = [0, 7, 14, 21, 28].map((i) => path.join(sessionsDir, trails[i] as string));
    const sizes = touched.map((file) => fs.statSync(file).size);
    try {
      for (const file of touched) {
        fs.appendFileSync(file, '\n');
        changed.push(await call(client));
      }
    } finally {
      touched.forEach((file, i) => fs.truncateSync(file, sizes[i]));
    }
    const firstPerMb = first / megabytes;
    const verifyPerMb = verifyMs / megabytes;
    console.log(`  verify chain over every trail   ${formatCount(Math.round(verifyMs))} ms (${verifyPerMb.toFixed(1)} ms/MB)`);
    console.log(`  first call                      ${formatCount(Math.round(first))} ms (${firstPerMb.toFixed(1)} ms/MB, ${(firstPerMb / verifyPerMb).toFixed(2)}x verify's)`);
    console.log(`  warm call                       ${describeSamples(warm, 'ms')} (target <= 100 ms: ${median(warm) <= 100 ? 'met' : 'MISSED'})`);
    console.log(`  after one trail changed         ${describeSamples(changed, 'ms')} (target <= 150 ms: ${median(changed) <= 150 ? 'met' : 'MISSED'})`);
    const figures: Figure[] = [
      { name: `first call, ${formatCount(trails.length)} sessions`, value: first, unit: 'ms' },
      { name: 'first call cost / verify cost per MB', value: firstPerMb / verifyPerMb, unit: 'x' },
      { name: 'warm call', value: median(warm), unit: 'ms', ceiling: 100, goal: { row: GOAL.findingsWarm, measured: `${formatValue(median(warm), 'ms')} (${spread(warm, 'ms')})`, baseline: '-' } },
      { name: 'warm call after one trail changed', value: median(changed), unit: 'ms', ceiling: 150 },
    ];
    printResult({ scenario: 'findings-channel', figures });
  } finally {
    await client.close();
  }
}

await main();
