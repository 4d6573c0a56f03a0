/**
 * Timing helpers shared by the scenarios. The bench machines have two noisy cores, so every
 * variant runs several times, interleaved with the others, and is reported by its median: a
 * slow spell then lands on every variant alike instead of on whichever ran during it.
 */

import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** Repetitions of each measured variant; odd, so the median is one real run. */
export const REPETITIONS = 5;

/**
 * Repetitions in the scenarios that guard targets met long since (checkpoints, the detectors, PII
 * masking, live export, the report page) rather than the open performance goals:
 * three rounds, so that the whole bench runs in under ten minutes.
 */
export const GUARD_REPETITIONS = 3;

/** One named variant: does one timed run and returns its figure (higher is better). */
export interface Variant {
  readonly name: string;
  readonly run: () => Promise<number> | number;
}

/**
 * Runs every variant `repetitions` times, reversing the order on every other round; with
 * `collect` (the default), garbage is collected before each run.
 */
export async function interleave(variants: readonly Variant[], repetitions = REPETITIONS, { collect = true } = {}): Promise<Map<string, number[]>> {
  const samples = new Map<string, number[]>(variants.map((v) => [v.name, []]));
  for (let round = 0; round < repetitions; round++) {
    // Reversing puts each variant both before and after the others, so drift within a round
    // (page cache filling, writeback, CPU clock) does not always favour the same one.
    const order = round % 2 === 0 ? variants : [...variants].reverse();
    for (const variant of order) {
      if (collect) collectGarbage();
      const value = await variant.run();
      samples.get(variant.name)?.push(value);
    }
  }
  return samples;
}

/** The median of some samples. */
export function median(values: readonly number[]): number {
  if (values.length === 0) throw new Error('median of no samples');
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** The `q` quantile (0..1) of some samples, nearest rank: `quantile(v, 0.99)` is the p99. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) throw new Error('quantile of no samples');
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] as number;
}

/**
 * The median of the per-round ratios `a[i] / b[i]`. Both ran in the same round, minutes apart at
 * most, so this is less exposed to slow drift than the ratio of the two medians.
 */
export function medianPairedRatio(a: readonly number[], b: readonly number[]): number {
  if (a.length !== b.length) throw new Error('paired samples of different lengths');
  return median(a.map((value, i) => value / (b[i] as number)));
}

/** The median of the same-round differences `a - b`: less exposed to the machine's drift than the difference of the medians. */
export function medianPairedDifference(a: readonly number[], b: readonly number[]): number {
  if (a.length !== b.length) throw new Error('paired samples of different lengths');
  return median(a.map((value, i) => value - (b[i] as number)));
}

/** The samples of one variant (throws if it never ran, which would be a bug in the scenario). */
export function samplesOf(samples: ReadonlyMap<string, readonly number[]>, name: string): readonly number[] {
  const values = samples.get(name);
  if (values === undefined || values.length === 0) throw new Error(`no samples for ${name}`);
  return values;
}

/**
 * Collects garbage before a timed run when the process was started with `--expose-gc`
 * (runbench does), so one variant does not pay for the previous one's garbage.
 */
export function collectGarbage(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

/** Runs `fn` with a fresh folder under the OS temp folder, removed afterwards whatever happens. */
export async function withTempDir<T>(prefix: string, fn: (dir: string) => Promise<T> | T): Promise<T> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `aura-bench-${prefix}-`));
  try {
    return await fn(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Milliseconds elapsed since `start` (a `performance.now()` reading). */
export function since(start: number): number {
  return performance.now() - start;
}

// The same choice src/spine/hash.ts makes, so the baseline hashes no slower than aura does.
export const sha256Hex: (text: string) => string =
  typeof crypto.hash === 'function'
    ? (text) => crypto.hash('sha256', text, 'hex')
    : (text) => crypto.createHash('sha256').update(text).digest('hex');

/** `12,345` */
export function formatCount(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}

/** A figure with its unit, as the scenarios and the summary table print it. */
export function formatValue(value: number, unit: string): string {
  switch (unit) {
    case 'events/s':
    case 'calls/s':
      return `${formatCount(value)} ${unit}`;
    case 'x':
      return `${value.toFixed(2)}x`;
    case 'ms':
      return `${formatCount(value)} ms`;
    default:
      return `${value.toFixed(1)} ${unit}`;
  }
}

/** `median 50,123 events/s (runs: 49,001 50,123 …)` */
export function describeSamples(values: readonly number[], unit: string): string {
  return `median ${formatValue(median(values), unit)}  (runs: ${values.map((v) => formatValue(v, unit).split(' ')[0]).join(', ')})`;
}
