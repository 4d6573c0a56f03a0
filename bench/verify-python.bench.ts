/**
 * verify-python: the CPU time of verifying a 100,000-event trail (written once through aura's
 * public API and kept in the bench data folder) by aura's `verifyTrail` and by Python Aura 0.3.3 (`AuditSpine.from_jsonl` then
 * `verify_hash_chain`, what its `verify chain` runs), each in a fresh process, interleaved. Only
 * the verification is timed (process CPU time), not the start of either process. Goal: aura >= 5x
 * Python Aura (median of the same-round ratios).
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { agent } from '../src/index.js';
import { benchDataDir } from './utils/dataset.js';
import { GOAL } from './utils/goals.js';
import { describeSamples, formatCount, formatValue, median, medianPairedRatio, withTempDir } from './utils/measure.js';
import { KIND, toolCallPayload } from './utils/payload.js';
import { findPythonAura, runFreshNode, runPython } from './utils/python-aura.js';
import { printResult, type Figure } from './utils/result.js';

const EVENTS = 100_000;
const TARGET = 5;
// Each round is two fresh processes of seconds each; three rounds give a median.
const ROUNDS = 3;

const VERIFY = `
import json, sys, time
from pathlib import Path
from aura.core.spine import AuditSpine, verify_hash_chain
start = time.process_time()
spine = AuditSpine.from_jsonl(Path(sys.argv[1]))
valid = verify_hash_chain(spine)
cpu_ms = (time.process_time() - start) * 1000
if valid is not True:
    sys.exit("the trail did not verify")
print(json.dumps({"cpuMs": cpu_ms, "events": len(spine.stream())}))
`;

/** The trail, written the first time and kept. */
async function keptTrail(): Promise<string> {
  const home = path.join(benchDataDir(), `verify-${EVENTS}`);
  const done = path.join(home, 'trail');
  if (fs.existsSync(done)) return fs.readFileSync(done, 'utf8');
  fs.rmSync(home, { recursive: true, force: true });
  const session = agent('bench/verify', { home }).session({ export: false });
  for (let i = 0; i < EVENTS; i++) session.emit(KIND, toolCallPayload(i));
  const trail = (await session.close()).log_path;
  fs.writeFileSync(done, trail);
  return trail;
}

async function main(): Promise<void> {
  const python = findPythonAura();
  const trail = await keptTrail();
  await withTempDir('verify-python', (home) => {
    console.log(`verify-python: ${formatCount(EVENTS + 3)} events, ${(fs.statSync(trail).size / 1e6).toFixed(1)} MB, each verified in a fresh process, ${ROUNDS} interleaved rounds; CPU time of the verification`);
    const aura: number[] = [];
    const py: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const runAura = (): void => void aura.push(runFreshNode(['verify', trail])['cpuMs'] as number);
      const runPy = (): void => {
        if (typeof python !== 'string') py.push((JSON.parse(runPython(python, VERIFY, [trail], home)) as { cpuMs: number }).cpuMs);
      };
      for (const run of round % 2 === 0 ? [runAura, runPy] : [runPy, runAura]) run();
    }
    console.log(`  aura verifyTrail          ${describeSamples(aura, 'ms')}`);
    const figures: Figure[] = [{ name: `aura verify ${formatCount(EVENTS)} events, CPU`, value: median(aura), unit: 'ms' }];
    if (typeof python === 'string') {
      console.log(`  ${python}`);
      printResult({ scenario: 'verify-python', figures, skipped: [{ row: GOAL.verifyPython, why: python }] });
      return;
    }
    const multiple = medianPairedRatio(py, aura);
    console.log(`  Python Aura verify chain  ${describeSamples(py, 'ms')}`);
    console.log(`  aura / Python Aura speed, same-round: median ${formatValue(multiple, 'x')} (goal >= ${formatValue(TARGET, 'x')}: ${multiple >= TARGET ? 'met' : 'NOT MET'})`);
    figures.push(
      { name: `Python Aura verify ${formatCount(EVENTS)} events, CPU`, value: median(py), unit: 'ms' },
      {
        name: 'verify speed aura / Python Aura, CPU time',
        value: multiple,
        unit: 'x',
        target: TARGET,
      },
    );
    printResult({ scenario: 'verify-python', figures });
  });
}

await main();
