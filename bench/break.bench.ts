/**
 * break: the loop detector's cost per event after 1k, 10k and 100k events of history, on a
 * stream of guarded calls (tool.intent, tool.call, tool.result) with changing arguments that
 * never loops. The detector keeps a bounded window, so the cost must not grow with history:
 * target 10k/1k <= 1.2. Then emit throughput of tool.call/tool.result pairs through a session with
 * the break observer attached, beside the same session with no observer (whose hot path is one
 * null check, so bench/emit.bench.ts is unchanged by the bus).
 *
 * The detector is driven directly (events built ahead, no trail), so its figure is its own cost
 * (CPU time); the emit figures include everything a session does (wall time, and CPU time apart).
 */

import { agent } from '../src/index.js';
import { BreakObserver, parseBreakConfig } from '../src/observers/break.js';
import type { ObservedEvent, ObserverContext } from '../src/observers/bus.js';
import { PresetConfig } from '../src/observers/config.js';
import { codeSource } from '../src/policy/profile-source.js';
import { describeSamples, formatCount, GUARD_REPETITIONS, interleave, median, samplesOf, since, withTempDir } from './utils/measure.js';
import { printResult, type Figure } from './utils/result.js';

const HISTORIES = [1_000, 10_000, 100_000];
const MEASURED = 15_000;
const EMIT_PAIRS = 25_000;
const CEILING = 1.2;

/** The events of guarded call `n`: intent, call, result; arguments change with `n`, results too. */
function callEvents(n: number): ObservedEvent[] {
  const args = { path: `/workspace/src/components/module_${n % 997}.ts`, offset: n % 13, limit: 4096 };
  const base = { tool: n % 3 === 0 ? 'fs.read_file' : 'search.code', skill_id: null, args };
  return [
    observedEvent(3 * n, 'tool.intent', { ...base, membrane: 'egress' }),
    observedEvent(3 * n + 1, 'tool.call', base),
    observedEvent(3 * n + 2, 'tool.result', { ...base, result: { bytes: 100 + (n % 7), lines: n % 50 } }),
  ];
}

function observedEvent(sequence: number, kind: string, payload: Record<string, unknown>): ObservedEvent {
  const hex = sequence.toString(16).padStart(32, '0');
  return { event_id: hex, kind, timestamp: '', prev_hash: null, content_hash: hex + hex, sequence, step_id: null, micros: sequence, payload: payload as ObservedEvent['payload'] };
}

/**
 * CPU microseconds per event for `MEASURED` events after `history` events. CPU time rather than
 * wall time: the detector does no I/O, and on two shared cores wall time mostly measures the
 * neighbours.
 */
function detectorCost(history: number): number {
  let alerts = 0;
  const context: ObserverContext = {
    emit: (kind) => {
      alerts++;
      return { event_id: '', kind, timestamp: '', prev_hash: null, content_hash: '', sequence: 0 };
    },
    stop: () => 'loop_0',
    now: () => 0,
  };
  const observer = new BreakObserver('break', parseBreakConfig(PresetConfig.read({}, [], codeSource({}), [])));
  const historyCalls = Math.floor(history / 3);
  for (let n = 0; n < historyCalls; n++) for (const event of callEvents(n)) observer.onEvent(event, context);
  const measured = Array.from({ length: MEASURED / 3 }, (_, i) => callEvents(historyCalls + i)).flat();
  const start = process.cpuUsage();
  for (const event of measured) observer.onEvent(event, context);
  const cpu = process.cpuUsage(start);
  // A stream that alerted would measure the alert path, not the detector.
  if (alerts !== 0) throw new Error(`the benchmark stream looped: ${alerts} alerts`);
  return (cpu.user + cpu.system) / measured.length;
}

/** CPU microseconds (user + system) of each run, by variant: on shared cores, less exposed to neighbours than wall time. */
const cpuMicros = new Map<string, number[]>();

/** Events per second (wall) of `EMIT_PAIRS` tool.call + tool.result pairs; CPU time noted apart. */
async function emitRate(name: string, observers: readonly unknown[]): Promise<number> {
  return withTempDir('break-emit', async (home) => {
    const session = agent('bench/break', { home, observers }).session({ fsync: 'none', export: false });
    const start = performance.now();
    const cpuStart = process.cpuUsage();
    for (let n = 0; n < EMIT_PAIRS; n++) {
      const [, call, result] = callEvents(n) as [ObservedEvent, ObservedEvent, ObservedEvent];
      session.emit('tool.call', call.payload);
      session.emit('tool.result', result.payload);
    }
    const cpu = process.cpuUsage(cpuStart);
    const ms = since(start);
    await session.close();
    cpuMicros.set(name, [...(cpuMicros.get(name) ?? []), (cpu.user + cpu.system) / (2 * EMIT_PAIRS)]);
    return ((2 * EMIT_PAIRS) / ms) * 1000;
  });
}

async function main(): Promise<void> {
  console.log(`break: detector cost per event for ${formatCount(MEASURED)} events after ${HISTORIES.map(formatCount).join(' / ')} events of history; median of interleaved runs`);
  // Warm-up: the first runs pay for compiling the detector's paths.
  for (let i = 0; i < 3; i++) detectorCost(HISTORIES[1] as number);
  const costs = await interleave(HISTORIES.map((history) => ({ name: String(history), run: () => detectorCost(history) })), GUARD_REPETITIONS);
  const medians = HISTORIES.map((history) => median(samplesOf(costs, String(history))));
  for (const history of HISTORIES) console.log(`  after ${formatCount(history).padStart(7)} events   ${describeSamples(samplesOf(costs, String(history)), 'µs/event')}`);
  const [at1k, at10k, at100k] = medians as [number, number, number];
  const ratio10k = at10k / at1k;
  const ratio100k = at100k / at1k;
  console.log(`  ratio 10k / 1k: ${ratio10k.toFixed(2)} (target <= ${CEILING.toFixed(2)}: ${ratio10k <= CEILING ? 'met' : 'MISSED'}); 100k / 1k: ${ratio100k.toFixed(2)}`);

  console.log(`emit with and without the break observer: ${formatCount(2 * EMIT_PAIRS)} tool.call/tool.result events, fsync none`);
  await emitRate('warm-up', [{ preset: 'break' }]);
  const rates = await interleave([
    { name: 'none', run: () => emitRate('none', []) },
    { name: 'break', run: () => emitRate('break', [{ preset: 'break' }]) },
  ], GUARD_REPETITIONS);
  const none = median(samplesOf(rates, 'none'));
  const withBreak = median(samplesOf(rates, 'break'));
  const cpuNone = median(samplesOf(cpuMicros, 'none'));
  const cpuBreak = median(samplesOf(cpuMicros, 'break'));
  console.log(`  no observer          ${describeSamples(samplesOf(rates, 'none'), 'events/s')}; CPU ${describeSamples(samplesOf(cpuMicros, 'none'), 'µs/event')}`);
  console.log(`  break attached       ${describeSamples(samplesOf(rates, 'break'), 'events/s')}; CPU ${describeSamples(samplesOf(cpuMicros, 'break'), 'µs/event')}`);
  console.log(`  ratio break / none: ${(withBreak / none).toFixed(2)} (wall), ${(cpuNone / cpuBreak).toFixed(2)} (CPU time)`);

  const figures: Figure[] = [
    { name: 'break detector after 1k events', value: at1k, unit: 'µs/event' },
    { name: 'break detector after 10k events', value: at10k, unit: 'µs/event' },
    { name: 'break detector after 100k events', value: at100k, unit: 'µs/event' },
    { name: 'break detector cost 10k / 1k', value: ratio10k, unit: 'x', ceiling: CEILING },
    { name: 'break detector cost 100k / 1k', value: ratio100k, unit: 'x' },
    { name: 'emit, no observer', value: none, unit: 'events/s' },
    { name: 'emit, break attached', value: withBreak, unit: 'events/s' },
    { name: 'emit ratio break / none', value: withBreak / none, unit: 'x' },
    { name: 'emit ratio break / none, CPU time', value: cpuNone / cpuBreak, unit: 'x' },
  ];
  printResult({ scenario: 'break', figures });
}

await main();
