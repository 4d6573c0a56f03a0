/**
 * verify-chain: MB/s for `verifyTrail` over a 100,000-event trail written by a real session,
 * beside a raw floor over the same file: read it, split the lines, `JSON.parse` and SHA-256 each.
 * The floor neither checks the record nor rebuilds the canonical text, so the ratio is what
 * Python-exact reading and the seven checks cost on top of parsing and hashing.
 */

import * as fs from 'node:fs';
import { agent, verifyTrail } from '../src/index.js';
import { describeSamples, formatCount, formatValue, interleave, median, medianPairedRatio, samplesOf, sha256Hex, since, withTempDir } from './utils/measure.js';
import { KIND, toolCallPayload } from './utils/payload.js';
import { printResult, type Figure } from './utils/result.js';

const EVENTS = 100_000;
const TARGET_RATIO = 0.5;
// From the issue: Python Aura verified 20–35 MB/s on this kind of machine. Not measured here.
const PYTHON_MB_PER_SECOND = { low: 20, high: 35, mid: 27.5 };
const BYTES_PER_MB = 1e6;

/** Writes the trail through the public API, as an agent would, and returns its path. */
async function writeTrail(home: string): Promise<string> {
  const session = agent('bench/verify', { home }).session({ export: false });
  for (let i = 0; i < EVENTS; i++) session.emit(KIND, toolCallPayload(i));
  const result = await session.close();
  return result.log_path;
}

function benchAura(trail: string, bytes: number, expectedEvents: number): number {
  const start = performance.now();
  const report = verifyTrail(trail);
  const ms = since(start);
  // A verifier that stopped early would look fast for the wrong reason.
  if (!report.hash_chain_valid || !report.complete || report.events !== expectedEvents) {
    throw new Error(`the trail did not verify: ${JSON.stringify(report)}`);
  }
  return bytes / BYTES_PER_MB / (ms / 1000);
}

function benchBaseline(trail: string, bytes: number, expectedEvents: number): number {
  const start = performance.now();
  const lines = fs.readFileSync(trail, 'utf8').split('\n');
  let events = 0;
  let hashes = 0;
  for (const line of lines) {
    if (line === '') continue;
    const record = JSON.parse(line) as { content_hash?: unknown };
    // Using both results keeps the work observable, so none of it can be optimised away.
    if (typeof record.content_hash === 'string') events++;
    if (sha256Hex(line).length === 64) hashes++;
  }
  const ms = since(start);
  if (events !== expectedEvents || hashes !== expectedEvents) throw new Error(`the baseline read ${events} events, expected ${expectedEvents}`);
  return bytes / BYTES_PER_MB / (ms / 1000);
}

async function main(): Promise<void> {
  await withTempDir('verify', async (home) => {
    const trail = await writeTrail(home);
    const bytes = fs.statSync(trail).size;
    const report = verifyTrail(trail);
    const events = report.events;
    console.log(
      `verify-chain: ${formatCount(events)} events (${formatCount(EVENTS)} ${KIND} + open/close), ` +
        `${(bytes / BYTES_PER_MB).toFixed(1)} MB, ~200-byte payloads; median of interleaved runs`,
    );
    // Warm-up: JIT, and the file into the page cache, so every timed run reads from memory.
    benchBaseline(trail, bytes, events);
    benchAura(trail, bytes, events);

    const samples = await interleave([
      { name: 'baseline', run: () => benchBaseline(trail, bytes, events) },
      { name: 'aura', run: () => benchAura(trail, bytes, events) },
    ]);
    const baseline = samplesOf(samples, 'baseline');
    const aura = samplesOf(samples, 'aura');
    const ratio = median(aura) / median(baseline);
    const pairedRatio = medianPairedRatio(aura, baseline);
    const auraEventsPerSecond = (median(aura) * BYTES_PER_MB * events) / bytes;
    const pythonMultiple = median(aura) / PYTHON_MB_PER_SECOND.mid;

    console.log(`  baseline (read + split + JSON.parse + sha256)  ${describeSamples(baseline, 'MB/s')}`);
    console.log(`  aura verifyTrail                               ${describeSamples(aura, 'MB/s')}  (${formatValue(auraEventsPerSecond, 'events/s')})`);
    const verdict = ratio >= TARGET_RATIO ? 'met' : 'MISSED';
    console.log(`  ratio aura / baseline: ${ratio.toFixed(2)} (target >= ${TARGET_RATIO.toFixed(2)}: ${verdict})`);
    console.log(`  same-round ratios aura / baseline, median: ${pairedRatio.toFixed(2)} (a cross-check on drift)`);
    console.log(
      `  reference (from the issue, not measured here): Python Aura ${PYTHON_MB_PER_SECOND.low}–${PYTHON_MB_PER_SECOND.high} MB/s; ` +
        `aura is ${formatValue(pythonMultiple, 'x')} the ${PYTHON_MB_PER_SECOND.mid} MB/s midpoint`,
    );

    const figures: Figure[] = [
      { name: 'verify baseline', value: median(baseline), unit: 'MB/s' },
      { name: 'verify aura', value: median(aura), unit: 'MB/s' },
      { name: 'verify aura', value: auraEventsPerSecond, unit: 'events/s' },
      { name: 'verify ratio aura / baseline', value: ratio, unit: 'x', target: TARGET_RATIO },
      { name: 'verify same-round ratio aura / baseline', value: pairedRatio, unit: 'x' },
      { name: 'verify vs Python Aura 27.5 MB/s', value: pythonMultiple, unit: 'x', reference: true },
    ];
    printResult({ scenario: 'verify-chain', figures });
  });
}

await main();
