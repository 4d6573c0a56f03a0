/**
 * emit: events per second through `session.emit` with the trail on, beside a raw floor that
 * writes the same kind of line (the 15 record fields around the same payload) with
 * `JSON.stringify`, one SHA-256 and one `fs.writeSync`. The ratio of the two is what aura's
 * canonical form, checks and bookkeeping cost on top of the unavoidable hash and syscall.
 *
 * Only the emit loop is timed. `close()` (which reads the trail back, verifies it and writes the
 * exports) is timed apart, for the default variant.
 */

import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { agent, type FsyncPolicy } from '../src/index.js';
import { describeSamples, formatCount, formatValue, interleave, median, medianPairedRatio, samplesOf, sha256Hex, since, withTempDir } from './utils/measure.js';
import { KIND, toolCallPayload } from './utils/payload.js';
import { printResult, type Figure } from './utils/result.js';

// A run of about a second: the rate settles well before, and five rounds keep the whole bench short.
const EVENTS = 100_000;
// One fsync per event costs about 0.25 ms here; 2,000 events keep the variant near half a second.
const EVERY_EVENTS = 2_000;
const WARMUP_EVENTS = 20_000;
// The goal row's (bench/utils/goals.ts): at least 0.8 of the raw floor.
const TARGET_RATIO = 0.8;
// From the issue: Python Aura on this kind of machine. Not measured here.
const PYTHON_EVENTS_PER_SECOND = 33_000;
// Events a session writes besides ours: membrane.ingress, session.open, session.close.
const LIFECYCLE_EVENTS = 3;

interface AuraRun {
  readonly eventsPerSecond: number;
  readonly closeMs: number;
  readonly lineBytes: number;
}

async function benchAura(fsync: FsyncPolicy, events: number, exportOnClose: boolean): Promise<AuraRun> {
  return withTempDir(`emit-${fsync}`, async (home) => {
    const session = agent('bench/emit', { home }).session({ fsync, export: exportOnClose });
    const start = performance.now();
    for (let i = 0; i < events; i++) session.emit(KIND, toolCallPayload(i));
    const emitMs = since(start);
    const closeStart = performance.now();
    const result = await session.close();
    const closeMs = since(closeStart);
    // A benchmark of a writer that lost events would be measuring the wrong thing.
    if (!result.chain.hash_chain_valid || !result.chain.complete || result.chain.events !== events + LIFECYCLE_EVENTS) {
      throw new Error(`the ${fsync} trail did not verify: ${JSON.stringify(result.chain)}`);
    }
    const lineBytes = fs.statSync(result.log_path).size / result.chain.events;
    return { eventsPerSecond: (events / emitMs) * 1000, closeMs, lineBytes };
  });
}

interface BaselineRun {
  readonly eventsPerSecond: number;
  readonly lineBytes: number;
}

/**
 * The floor: what any hash-chained JSONL writer must do per event. It draws a fresh event id and
 * timestamp as aura does (a line without them would not be the same kind of line), but skips
 * canonical ordering, the Python number and string rules, and every check.
 */
async function benchBaseline(events: number): Promise<BaselineRun> {
  return withTempDir('emit-baseline', (dir) => {
    const file = path.join(dir, 'trail.jsonl');
    const fd = fs.openSync(file, 'ax', 0o644);
    try {
      const traceId = hexId();
      const auraId = '01KBF4Z7Q2M8X3V6N9T5R1W0YC';
      const agentIds = { agent_ref: 'bench/emit', aura_id: auraId, ids: { tenant: 'bench' }, policy_version: '1' };
      let prevHash: string | null = null;
      let parentId: string | null = null;
      const start = performance.now();
      for (let i = 0; i < events; i++) {
        const eventId = hexId();
        const body = JSON.stringify({
          event_id: eventId,
          parent_id: parentId,
          trace_id: traceId,
          span_id: null,
          step_id: null,
          task_id: null,
          session_id: 'aura_sess_0123456789ab',
          aura_id: auraId,
          agent_ids: agentIds,
          kind: KIND,
          timestamp: new Date().toISOString(),
          payload: toolCallPayload(i),
          telemetry: {},
        });
        const contentHash = sha256Hex(`${prevHash ?? 'genesis'}:${body}`);
        const prevText = prevHash === null ? 'null' : `"${prevHash}"`;
        fs.writeSync(fd, `${body.slice(0, -1)},"prev_hash":${prevText},"content_hash":"${contentHash}"}\n`);
        prevHash = contentHash;
        parentId = eventId;
      }
      const ms = since(start);
      return { eventsPerSecond: (events / ms) * 1000, lineBytes: fs.fstatSync(fd).size / events };
    } finally {
      fs.closeSync(fd);
    }
  });
}

function hexId(): string {
  return randomUUID().replaceAll('-', '');
}

async function main(): Promise<void> {
  console.log(`emit: ${formatCount(EVENTS)} ${KIND} events, ~200-byte payloads; median of interleaved runs`);
  // Warm-up: the first runs pay for JIT compilation and for the page cache growing into the trail.
  await benchBaseline(WARMUP_EVENTS);
  await benchAura('close', WARMUP_EVENTS, true);

  const closeMs: number[] = [];
  let auraLineBytes = 0;
  let baselineLineBytes = 0;
  const samples = await interleave([
    {
      name: 'baseline',
      run: async () => {
        const run = await benchBaseline(EVENTS);
        baselineLineBytes = run.lineBytes;
        return run.eventsPerSecond;
      },
    },
    {
      name: 'close',
      run: async () => {
        const run = await benchAura('close', EVENTS, true);
        closeMs.push(run.closeMs);
        auraLineBytes = run.lineBytes;
        return run.eventsPerSecond;
      },
    },
    // Export is off here only to keep the round short: it happens in close, which is not timed.
    { name: 'none', run: async () => (await benchAura('none', EVENTS, false)).eventsPerSecond },
    { name: 'every', run: async () => (await benchAura('every', EVERY_EVENTS, true)).eventsPerSecond },
  ]);

  const baseline = samplesOf(samples, 'baseline');
  const close = samplesOf(samples, 'close');
  const none = samplesOf(samples, 'none');
  const every = samplesOf(samples, 'every');
  const ratio = median(close) / median(baseline);
  const pairedRatio = medianPairedRatio(close, baseline);
  const ratioNone = median(none) / median(baseline);
  const pythonMultiple = median(close) / PYTHON_EVENTS_PER_SECOND;

  console.log(`  lines: aura ${formatCount(auraLineBytes)} bytes, baseline ${formatCount(baselineLineBytes)} bytes on average`);
  console.log(`  baseline (JSON.stringify + sha256 + writeSync)  ${describeSamples(baseline, 'events/s')}`);
  console.log(`  aura fsync 'close' (default)                    ${describeSamples(close, 'events/s')}`);
  console.log(`  aura fsync 'none'                               ${describeSamples(none, 'events/s')}`);
  console.log(`  aura fsync 'every' (${formatCount(EVERY_EVENTS)} events)                ${describeSamples(every, 'events/s')}`);
  console.log(`  aura close() after ${formatCount(EVENTS)} events (default)    ${describeSamples(closeMs, 'ms')}`);
  const verdict = ratio >= TARGET_RATIO ? 'met' : 'MISSED';
  console.log(`  ratio aura 'close' / baseline: ${ratio.toFixed(2)} (target >= ${TARGET_RATIO.toFixed(2)}: ${verdict})`);
  console.log(`  same-round ratios 'close' / baseline, median: ${pairedRatio.toFixed(2)} (a cross-check on drift)`);
  console.log(`  ratio aura 'none' / baseline:  ${ratioNone.toFixed(2)}`);
  console.log(
    `  reference (from the issue, not measured here): Python Aura ~${formatCount(PYTHON_EVENTS_PER_SECOND)} events/s; ` +
      `aura 'close' is ${formatValue(pythonMultiple, 'x')} that`,
  );

  const figures: Figure[] = [
    { name: 'emit baseline', value: median(baseline), unit: 'events/s' },
    { name: "emit fsync 'close' (default)", value: median(close), unit: 'events/s' },
    { name: "emit fsync 'none'", value: median(none), unit: 'events/s' },
    { name: `emit fsync 'every' (${formatCount(EVERY_EVENTS)} events)`, value: median(every), unit: 'events/s' },
    { name: `close() after ${formatCount(EVENTS)} events`, value: median(closeMs), unit: 'ms' },
    { name: "emit ratio 'close' / baseline", value: ratio, unit: 'x', target: TARGET_RATIO },
    { name: "emit same-round ratio 'close' / baseline", value: pairedRatio, unit: 'x' },
    { name: "emit ratio 'none' / baseline", value: ratioNone, unit: 'x' },
    { name: 'emit vs Python Aura 33k events/s', value: pythonMultiple, unit: 'x', reference: true },
  ];
  printResult({ scenario: 'emit', figures });
}

await main();
