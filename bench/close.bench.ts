/**
 * close: what `close()` costs after a long session. Each round is a fresh child process that
 * emits N `tool.call` events (trail on, default fsync and export), then times `close()` (verify
 * from disk, summary, spans, seal) and, on the same file, one streaming verify pass
 * (`verifyTrail`) as the baseline. Memory is the peak resident size while `close()` ran, over
 * the resident size just before it: on Linux the child resets its high-water mark first
 * (`/proc/self/clear_refs`), elsewhere the process's lifetime peak stands in (an overstatement).
 *
 *   AURA_BENCH_CLOSE_EVENTS=200000 npm run bench:close    a quicker run
 */

import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { agent } from '../src/index.js';
import { verifyTrail } from '../src/spine/verify.js';
import { describeSamples, formatCount, median, medianPairedRatio, since, withTempDir } from './utils/measure.js';
import { KIND, toolCallPayload } from './utils/payload.js';
import { printResult } from './utils/result.js';

const EVENTS = Number(process.env['AURA_BENCH_CLOSE_EVENTS'] ?? 1_000_000);
// A round is half a minute (a million events, the close, a verify pass); the time goal is missed
// by several times, so two rounds tell it, and keep the whole bench near ten minutes.
const ROUNDS = 2;
// The goals: close stays within 1.5x the memory it starts from, and within one verify pass.
const RSS_CEILING = 1.5;
const TIME_CEILING = 1;
const CHILD_FLAG = '--close-child';

interface ChildRun {
  readonly rssBefore: number;
  readonly rssPeak: number;
  readonly peakIsLifetime: boolean;
  readonly closeMs: number;
  readonly verifyMs: number;
}

/** Resets the kernel's high-water mark of this process's resident size; false where it cannot. */
function resetPeakRss(): boolean {
  try {
    fs.writeFileSync('/proc/self/clear_refs', '5');
    return true;
  } catch {
    return false;
  }
}

/** The peak resident size since the last reset, in bytes (VmHWM), or the lifetime peak. */
function peakRss(): number {
  try {
    const match = /^VmHWM:\s+(\d+) kB$/m.exec(fs.readFileSync('/proc/self/status', 'utf8'));
    if (match !== null) return Number(match[1]) * 1024;
  } catch {
    // Not Linux: the lifetime peak below.
  }
  return process.resourceUsage().maxRSS * 1024;
}

async function child(events: number): Promise<ChildRun> {
  return withTempDir('close', async (home) => {
    const session = agent('bench/close', { home }).session();
    for (let i = 0; i < events; i++) session.emit(KIND, toolCallPayload(i));
    globalThis.gc?.();
    const rssBefore = process.memoryUsage.rss();
    const peakIsLifetime = !resetPeakRss();
    const start = performance.now();
    const result = await session.close();
    const closeMs = since(start);
    const rssPeak = peakRss();
    if (!result.chain.hash_chain_valid || !result.chain.complete || result.summary.event_count !== events + 3) throw new Error(`the trail did not verify: ${JSON.stringify(result.chain)}`);
    const verifyStart = performance.now();
    const report = verifyTrail(result.log_path);
    const verifyMs = since(verifyStart);
    if (report.events !== result.chain.events) throw new Error('the verify pass read another trail');
    return { rssBefore, rssPeak, peakIsLifetime, closeMs, verifyMs };
  });
}

function runChild(events: number): Promise<ChildRun> {
  const tsx = import.meta.resolve('tsx');
  const proc = spawn(process.execPath, ['--expose-gc', '--import', tsx, fileURLToPath(import.meta.url), CHILD_FLAG, String(events)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  proc.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  return new Promise((resolve, reject) => {
    proc.on('error', reject);
    proc.on('close', (code) => (code === 0 ? resolve(JSON.parse(out) as ChildRun) : reject(new Error(`the close child exited with ${String(code)}`))));
  });
}

async function main(): Promise<void> {
  console.log(`close: ${formatCount(EVENTS)} ${KIND} events, then close(); ${ROUNDS} rounds, each a fresh process`);
  const runs: ChildRun[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const run = await runChild(EVENTS);
    console.log(`  round ${round}: close ${formatCount(run.closeMs)} ms, verify pass ${formatCount(run.verifyMs)} ms, RSS ${formatCount(run.rssBefore / 2 ** 20)} MB before, peak ${formatCount(run.rssPeak / 2 ** 20)} MB`);
    runs.push(run);
  }
  const close = runs.map((r) => r.closeMs);
  const verify = runs.map((r) => r.verifyMs);
  const rssRatios = runs.map((r) => r.rssPeak / r.rssBefore);
  const timeRatio = medianPairedRatio(close, verify);
  if (runs.some((r) => r.peakIsLifetime)) console.log('  (no /proc/self/clear_refs here: the peak is the process lifetime peak, which overstates close)');
  console.log(`  close()                         ${describeSamples(close, 'ms')}`);
  console.log(`  one streaming verify pass       ${describeSamples(verify, 'ms')}`);
  console.log(`  close / verify pass, paired median: ${timeRatio.toFixed(2)} (ceiling ${TIME_CEILING.toFixed(2)})`);
  console.log(`  peak RSS during close / RSS before, median: ${median(rssRatios).toFixed(2)} (runs: ${rssRatios.map((r) => r.toFixed(2)).join(', ')}; ceiling ${RSS_CEILING.toFixed(2)})`);
  printResult({
    scenario: 'close',
    figures: [
      { name: `close() after ${formatCount(EVENTS)} events`, value: median(close), unit: 'ms' },
      { name: `streaming verify pass, ${formatCount(EVENTS)} events`, value: median(verify), unit: 'ms' },
      { name: 'close / verify pass (paired)', value: timeRatio, unit: 'x', ceiling: TIME_CEILING },
      { name: 'close peak RSS / RSS before', value: median(rssRatios), unit: 'x', ceiling: RSS_CEILING },
    ],
  });
}

if (process.argv[2] === CHILD_FLAG) process.stdout.write(JSON.stringify(await child(Number(process.argv[3]))));
else await main();
