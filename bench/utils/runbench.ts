/**
 * Runs the benchmark scenarios, as pino's `benchmarks/utils/runbench.js` does: each in its own
 * process (so one scenario's JIT state, heap and page cache do not leak into the next), then one
 * table of every figure against its target.
 *
 *   npm run bench                  every scenario
 *   npm run bench -- emit          one scenario (also `npm run bench:emit`)
 *
 * A missed target is reported, not failed: the figures are noisy on shared machines and a
 * benchmark run is information. A scenario that crashes or reports nothing exits non-zero.
 */

import { execFileSync, spawn } from 'node:child_process';
import * as os from 'node:os';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { GOAL_ROWS } from './goals.js';
import { formatValue } from './measure.js';
import { parseResult, type Figure, type ScenarioResult } from './result.js';

const BENCH_DIR = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const ROOT = path.dirname(BENCH_DIR);

const SCENARIOS: Readonly<Record<string, string>> = {
  emit: 'emit.bench.ts',
  close: 'close.bench.ts',
  'verify-chain': 'verify-chain.bench.ts',
  'tool-guarded': 'tool-guarded.bench.ts',
  checkpoint: 'checkpoint.bench.ts',
  'verify-store': 'verify-store.bench.ts',
  detector: 'detector.bench.ts',
  'findings-channel': 'findings-channel.bench.ts',
  'pii-mask': 'pii-mask.bench.ts',
  proxy: 'proxy.bench.ts',
  break: 'break.bench.ts',
  'otel-live': 'otel-live.bench.ts',
  'report-html': 'report-html.bench.ts',
  adapters: 'adapters.bench.ts',
  fleet: 'fleet.bench.ts',
  'emit-python': 'emit-python.bench.ts',
  'verify-python': 'verify-python.bench.ts',
  cli: 'cli.bench.ts',
};

/** The machine line printed first, and copied into docs/benchmarks.md. */
export function machineLine(): string {
  const cpus = os.cpus();
  const model = cpus[0]?.model.trim() ?? 'unknown CPU';
  return `${os.type()} ${os.release()} ${os.arch()}, ${model}, ${cpus.length} cores, Node ${process.version}`;
}

/**
 * The code state measured: src/ changes often, so a figure is only meaningful with the commit,
 * and with a note when src/ had uncommitted changes at the time.
 */
function codeLine(): string {
  try {
    const git = (...args: string[]): string => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const dirty = git('status', '--porcelain', '--', 'src') !== '';
    return `${git('rev-parse', '--short', 'HEAD')}${dirty ? ' (src/ has uncommitted changes)' : ''}`;
  } catch {
    return 'unknown (not a git checkout)';
  }
}

interface Outcome {
  readonly scenario: string;
  readonly result: ScenarioResult | null;
  readonly failure: string | null;
}

/** Runs one scenario file in a child node with tsx's loader, echoing its output as it comes. */
function runScenario(scenario: string, file: string): Promise<Outcome> {
  // Resolved from here rather than by name, so the child finds tsx whatever its working directory.
  const tsx = import.meta.resolve('tsx');
  const child = spawn(process.execPath, ['--expose-gc', '--import', tsx, path.join(BENCH_DIR, file)], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let result: ScenarioResult | null = null;
  const lines = createInterface({ input: child.stdout });
  lines.on('line', (line) => {
    const parsed = parseResult(line);
    if (parsed === null) console.log(line);
    else result = parsed;
  });
  return new Promise((resolve) => {
    child.on('error', (error) => resolve({ scenario, result: null, failure: `could not start: ${error.message}` }));
    // 'close' rather than 'exit': it waits until stdout is drained, so the RESULT line is in.
    child.on('close', (code, signal) => {
      if (code !== 0) resolve({ scenario, result, failure: signal === null ? `exited with code ${String(code)}` : `killed by ${signal}` });
      else if (result === null) resolve({ scenario, result, failure: 'printed no RESULT line' });
      else resolve({ scenario, result, failure: null });
    });
  });
}

function printTable(outcomes: readonly Outcome[]): void {
  const rows: string[][] = [['scenario', 'figure', 'value', 'target', 'status']];
  for (const { scenario, result, failure } of outcomes) {
    if (failure !== null) rows.push([scenario, '-', '-', '-', `CRASHED (${failure})`]);
    for (const figure of result?.figures ?? []) {
      const target = limitOf(figure, figure.unit);
      const met = isMet(figure.value, figure);
      const status = figure.reference === true ? 'reference only' : met === null ? '' : met ? 'met' : 'MISSED';
      rows.push([scenario, figure.name, formatValue(figure.value, figure.unit), target, status]);
    }
  }
  printRows(rows);
}

/** Whether a value meets a target or ceiling; null when there is neither. */
function isMet(value: number, limits: { readonly target?: number; readonly ceiling?: number }): boolean | null {
  if (limits.target !== undefined) return value >= limits.target;
  if (limits.ceiling !== undefined) return value <= limits.ceiling;
  return null;
}

function limitOf(limits: { readonly target?: number; readonly ceiling?: number }, unit: string): string {
  if (limits.target !== undefined) return `>= ${formatValue(limits.target, unit)}`;
  if (limits.ceiling !== undefined) return `<= ${formatValue(limits.ceiling, unit)}`;
  return '';
}

/** Every goal row, in order: measured, skipped with the reason, or not reported by the scenarios that ran. */
function printGoals(outcomes: readonly Outcome[]): void {
  const ran = new Map(outcomes.map((outcome) => [outcome.scenario, outcome]));
  const rows: string[][] = [['goal row', 'figure', 'baseline (same run)', 'ratio', 'goal', 'status']];
  for (const goal of GOAL_ROWS) {
    const outcome = ran.get(goal.scenario);
    if (outcome === undefined) continue;
    // The figure of that name, else the first whose name starts with it (names may end in a count).
    const find = (name: string | undefined): Figure | undefined => {
      const figures = name === undefined ? [] : (outcome.result?.figures ?? []);
      return figures.find((f) => f.name === name) ?? figures.find((f) => name !== undefined && f.name.startsWith(name));
    };
    const figure = find(goal.figure);
    if (figure === undefined) {
      const skipped = outcome.result?.skipped?.find((s) => s.row === goal.row);
      const why = skipped !== undefined ? `skipped: ${skipped.why}` : outcome.failure !== null ? `${goal.scenario} crashed` : `not reported by ${goal.scenario}`;
      rows.push([goal.row, '-', '-', '-', limitOf(goal, goal.unit), why]);
      continue;
    }
    const shown = (f: Figure | undefined): string => (f === undefined ? '-' : formatValue(f.value, f.unit));
    const isRatio = figure.unit === 'x';
    const met = isMet(figure.value, goal);
    rows.push([goal.row, isRatio ? shown(find(goal.measured)) : shown(figure), shown(find(goal.baseline)), isRatio ? shown(figure) : '-', limitOf(goal, goal.unit), met === null ? '' : met ? 'met' : 'NOT MET']);
  }
  if (rows.length === 1) return;
  console.log('\ngoals\n');
  printRows(rows);
}

function printRows(rows: readonly (readonly string[])[]): void {
  const widths = (rows[0] as string[]).map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length)));
  const render = (row: readonly string[]): string => row.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join('  ').trimEnd();
  console.log(render(rows[0] as string[]));
  console.log(render(widths.map((width) => '-'.repeat(width))));
  for (const row of rows.slice(1)) console.log(render(row));
}

async function main(): Promise<number> {
  const wanted = process.argv[2];
  if (wanted !== undefined && !Object.hasOwn(SCENARIOS, wanted)) {
    console.log(`usage: npm run bench [-- <scenario>]\nscenarios: ${Object.keys(SCENARIOS).join(', ')}`);
    return wanted === '--help' || wanted === '-h' ? 0 : 2;
  }
  console.log(`machine: ${machineLine()}`);
  console.log(`code: ${codeLine()}`);
  console.log(`date: ${new Date().toISOString().slice(0, 10)}\n`);
  const outcomes: Outcome[] = [];
  const chosen = Object.entries(SCENARIOS).filter(([scenario]) => wanted === undefined || scenario === wanted);
  const start = performance.now();
  for (const [index, [scenario, file]] of chosen.entries()) {
    console.log(`[${index + 1}/${chosen.length}] ${scenario} (${((performance.now() - start) / 1000).toFixed(0)} s into the run)`);
    const outcome = await runScenario(scenario, file);
    if (outcome.failure !== null) console.error(`${scenario}: ${outcome.failure}`);
    outcomes.push(outcome);
    console.log('');
  }
  printTable(outcomes);
  printGoals(outcomes);
  console.log(`\nran in ${((performance.now() - start) / 1000).toFixed(0)} s`);
  return outcomes.some((o) => o.failure !== null) ? 1 : 0;
}

process.exitCode = await main();
