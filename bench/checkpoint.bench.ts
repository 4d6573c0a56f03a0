/**
 * The cost of signed checkpoints: `emit` throughput with a signing key (a `chain.checkpoint`
 * every 1000 events, each an Ed25519 signature) beside the same loop unsigned, in the same run.
 * Target: checkpointing costs under 5% of emit throughput (signed / unsigned >= 0.95).
 */

import * as path from 'node:path';
import { agent } from '../src/index.js';
import { KeyRing } from '../src/spine/signing.js';
import { describeSamples, formatCount, GUARD_REPETITIONS, interleave, median, medianPairedRatio, samplesOf, since, withTempDir } from './utils/measure.js';
import { KIND, toolCallPayload } from './utils/payload.js';
import { printResult, type Figure } from './utils/result.js';

const EVENTS = 100_000;
const WARMUP_EVENTS = 20_000;
const TARGET = 0.95;

async function run(signed: boolean, events: number): Promise<number> {
  return withTempDir(`checkpoint-${signed ? 'signed' : 'plain'}`, async (home) => {
    if (signed) KeyRing.generate(path.join(home, 'keys'));
    const session = agent('bench/checkpoint', { home }).session({ fsync: 'none', export: false, sign: signed });
    const start = performance.now();
    for (let i = 0; i < events; i++) session.emit(KIND, toolCallPayload(i));
    const ms = since(start);
    const result = await session.close();
    const expected = signed ? Math.floor(events / 1000) : 0;
    if (result.chain.signatures.checkpoints < expected) throw new Error(`expected at least ${expected} checkpoints, got ${result.chain.signatures.checkpoints}`);
    return (events / ms) * 1000;
  });
}

async function main(): Promise<void> {
  console.log(`checkpoint: ${formatCount(EVENTS)} ${KIND} events, signed (a checkpoint every 1000) vs unsigned; median of interleaved runs`);
  await run(true, WARMUP_EVENTS);
  await run(false, WARMUP_EVENTS);
  const samples = await interleave([
    { name: 'plain', run: () => run(false, EVENTS) },
    { name: 'signed', run: () => run(true, EVENTS) },
  ], GUARD_REPETITIONS);
  const plain = samplesOf(samples, 'plain');
  const signed = samplesOf(samples, 'signed');
  const ratio = median(signed) / median(plain);
  console.log(`  unsigned  ${describeSamples(plain, 'events/s')}`);
  console.log(`  signed    ${describeSamples(signed, 'events/s')}`);
  console.log(`  ratio signed / unsigned: ${ratio.toFixed(3)} (target >= ${TARGET}: ${ratio >= TARGET ? 'met' : 'MISSED'}); same-round median ${medianPairedRatio(signed, plain).toFixed(3)}`);
  const figures: Figure[] = [
    { name: 'emit unsigned', value: median(plain), unit: 'events/s' },
    { name: 'emit signed (checkpoint / 1000)', value: median(signed), unit: 'events/s' },
    { name: 'signed / unsigned', value: ratio, unit: 'x', target: TARGET },
    { name: 'signed / unsigned, same-round', value: medianPairedRatio(signed, plain), unit: 'x' },
  ];
  printResult({ scenario: 'checkpoint', figures });
}

await main();
