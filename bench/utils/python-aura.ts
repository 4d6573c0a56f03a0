/**
 * Python Aura 0.3.3 itself, the yardstick of the rows measured against Python. It is not a
 * dependency: its MIT source tarball is found through `AURA_PY_SRC` (the tarball, or a folder it
 * was unpacked to), else at `../shared/anchors/aura-py-0.3.3-src.tar.gz` beside the repository
 * (or beside the main checkout of a git worktree). It is unpacked once into the bench data folder
 * and run with the machine's python3; it needs PyYAML, and its command line also needs `rich`,
 * looked for on the usual path and in `AURA_PY_DEPS` (default: the bench data folder's
 * `python-deps`, which `pip install --target <that folder> rich` fills).
 */

import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchDataDir } from './dataset.js';
import { describeSamples, formatValue, median, medianPairedRatio } from './measure.js';
import { printResult, type Figure } from './result.js';

const ROOT = path.dirname(path.dirname(path.dirname(fileURLToPath(import.meta.url))));
const TARBALL = 'aura-py-0.3.3-src.tar.gz';

/** Python Aura, ready to run. */
export interface PythonAura {
  /** The python executable itself (not a shim that would add a shell's start to every run). */
  readonly python: string;
  /** `PYTHONPATH` for its library. */
  readonly pythonPath: string;
  /** `PYTHONPATH` for its command line (with `rich`), or null when `rich` is absent. */
  readonly cliPythonPath: string | null;
  /** Where the CLI's dependencies were looked for, to say so when `rich` is absent. */
  readonly depsDir: string;
}

function candidates(): string[] {
  const given = process.env['AURA_PY_SRC'];
  if (given !== undefined && given !== '') return [path.resolve(given)];
  const beside = [path.join(ROOT, '..', 'shared', 'anchors', TARBALL)];
  try {
    const common = execFileSync('git', ['rev-parse', '--path-format=absolute', '--git-common-dir'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    beside.push(path.join(path.dirname(common), '..', 'shared', 'anchors', TARBALL));
  } catch {
    // Not a git checkout: only the folder beside this one.
  }
  return beside;
}

/** The unpacked source folder (holding `aura/`), or null when the anchor is not found. */
function sourceDir(): string | null {
  for (const candidate of candidates()) {
    if (!fs.existsSync(candidate)) continue;
    if (fs.statSync(candidate).isDirectory()) return candidate;
    const into = path.join(benchDataDir(), `aura-py-${fs.statSync(candidate).size}`);
    if (!fs.existsSync(path.join(into, 'complete'))) {
      fs.rmSync(into, { recursive: true, force: true });
      fs.mkdirSync(into, { recursive: true });
      execFileSync('tar', ['-xzf', candidate, '-C', into]);
      fs.writeFileSync(path.join(into, 'complete'), '');
    }
    return into;
  }
  return null;
}

/** Runs `code` with `python`, returning its exit status. */
function runs(python: string, pythonPath: string, code: string): boolean {
  return spawnSync(python, ['-c', code], { env: { ...process.env, PYTHONPATH: pythonPath }, stdio: 'ignore' }).status === 0;
}

/**
 * Python Aura, or the reason it cannot run here (printed by the scenario, whose Python rows are
 * then skipped).
 */
export function findPythonAura(): PythonAura | string {
  const source = sourceDir();
  if (source === null) return `Python Aura anchor absent (set AURA_PY_SRC to ${TARBALL} or its unpacked folder): rows skipped`;
  const shim = spawnSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' });
  if (shim.status !== 0) return 'python3 not found: Python Aura rows skipped';
  const python = shim.stdout.trim();
  if (!runs(python, source, 'import aura.core.spine, yaml')) return `Python Aura at ${source} does not import (it needs PyYAML): rows skipped`;
  const depsDir = path.resolve(process.env['AURA_PY_DEPS'] ?? path.join(benchDataDir(), 'python-deps'));
  const cliPath = [source, depsDir].join(path.delimiter);
  return { python, pythonPath: source, cliPythonPath: runs(python, cliPath, 'import rich') ? cliPath : null, depsDir };
}

/** Runs a Python script with Python Aura on its path (and `home` as AURA_HOME) and returns what it printed. */
export function runPython(aura: PythonAura, script: string, args: readonly string[], home: string): string {
  const result = spawnSync(aura.python, ['-c', script, ...args], { env: { ...process.env, PYTHONPATH: aura.pythonPath, AURA_HOME: home }, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`Python Aura failed: ${result.stderr}`);
  return result.stdout;
}

/** The Python twin of `toolCallPayload` (bench/utils/payload.ts): the same payload for event `n`. */
export const PYTHON_TOOL_CALL_PAYLOAD = `
def tool_call_payload(n):
    return {
        "tool": "fs.read_file",
        "args": {
            "path": f"/workspace/src/components/module_{n % 1000}.ts",
            "encoding": "utf8",
            "offset": 0,
            "limit": 4096,
            "follow_symlinks": False,
            "reason": "inspect the module",
        },
        "n": n,
    }
`;

/** Runs a task of fresh-child.ts in a new Node process and returns the figures it printed. */
export function runFreshNode(task: readonly string[]): Record<string, number> {
  const tsx = import.meta.resolve('tsx');
  const child = path.join(ROOT, 'bench', 'utils', 'fresh-child.ts');
  const result = spawnSync(process.execPath, ['--import', tsx, child, ...task], { cwd: ROOT, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`fresh-child ${task.join(' ')} failed: ${result.stderr}`);
  return JSON.parse(result.stdout.trim().split('\n').at(-1) as string) as Record<string, number>;
}

/** A comparison with Python Aura: one run of each side returns its milliseconds. */
export interface PythonRace {
  readonly scenario: string;
  /** The goal row (bench/utils/goals.ts) reported skipped when Python Aura is absent. */
  readonly row: string;
  /** What is timed (`emit`, `verify`), then how (`20,000 events, fresh process`). */
  readonly what: string;
  readonly detail: string;
  readonly rounds: number;
  /** The lowest acceptable speed multiple (Python's time over aura's). */
  readonly target: number;
  readonly aura: () => Promise<number> | number;
  readonly python: (python: PythonAura) => Promise<number> | number;
}

/**
 * Runs both sides in interleaved rounds, then prints and reports their medians and aura's speed
 * multiple, the median of the same-round ratios of Python's time over aura's. Without Python Aura,
 * aura alone, and the goal row reported skipped with the reason.
 */
export async function raceAgainstPython(race: PythonRace): Promise<void> {
  const python = findPythonAura();
  const aura: number[] = [];
  const py: number[] = [];
  for (let round = 0; round < race.rounds; round++) {
    const runAura = async (): Promise<void> => void aura.push(await race.aura());
    const runPy = async (): Promise<void> => {
      if (typeof python !== 'string') py.push(await race.python(python));
    };
    for (const run of round % 2 === 0 ? [runAura, runPy] : [runPy, runAura]) await run();
  }
  console.log(`  aura         ${describeSamples(aura, 'ms')}`);
  const figures: Figure[] = [{ name: `aura ${race.what} ${race.detail}`, value: median(aura), unit: 'ms' }];
  if (typeof python === 'string') {
    console.log(`  ${python}`);
    printResult({ scenario: race.scenario, figures, skipped: [{ row: race.row, why: python }] });
    return;
  }
  const multiple = medianPairedRatio(py, aura);
  console.log(`  Python Aura  ${describeSamples(py, 'ms')}`);
  console.log(`  aura / Python Aura speed, same-round: median ${formatValue(multiple, 'x')} (goal >= ${formatValue(race.target, 'x')}: ${multiple >= race.target ? 'met' : 'NOT MET'})`);
  figures.push(
    { name: `Python Aura ${race.what} ${race.detail}`, value: median(py), unit: 'ms' },
    { name: `${race.what} speed aura / Python Aura`, value: multiple, unit: 'x', target: race.target },
  );
  printResult({ scenario: race.scenario, figures });
}
