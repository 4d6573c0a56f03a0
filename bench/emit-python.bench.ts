/**
 * emit-python: 20,000 `session.emit` calls with the trail on, each run in a fresh process (as an
 * agent's process starts: nothing warmed), by aura and by Python Aura 0.3.3 with the same payload
 * (bench/utils/payload.ts and its Python twin), interleaved. Only the emit loop is timed, on both
 * sides. Goal: aura >= 5x Python Aura (median of the same-round ratios of their times).
 */

import { GOAL } from './utils/goals.js';
import { describeSamples, formatCount, formatValue, median, medianPairedRatio, REPETITIONS, withTempDir } from './utils/measure.js';
import { findPythonAura, PYTHON_TOOL_CALL_PAYLOAD, runFreshNode, runPython } from './utils/python-aura.js';
import { printResult, type Figure } from './utils/result.js';

const EVENTS = 20_000;
const TARGET = 5;

const EMIT = `${PYTHON_TOOL_CALL_PAYLOAD}
import json, sys, time
from aura import agent, configure
configure()
events = int(sys.argv[1])
with agent("bench/emit").session(export=False) as run:
    start = time.perf_counter()
    for n in range(events):
        run.emit("tool.call", tool_call_payload(n))
    ms = (time.perf_counter() - start) * 1000
print(json.dumps({"ms": ms}))
`;

async function main(): Promise<void> {
  const python = findPythonAura();
  console.log(`emit-python: ${formatCount(EVENTS)} tool.call events in a fresh process, trail on, ${REPETITIONS} interleaved rounds; emit loop timed`);
  const aura: number[] = [];
  const py: number[] = [];
  for (let round = 0; round < REPETITIONS; round++) {
    const runAura = (): Promise<void> => withTempDir('emit-python', (home) => void aura.push(runFreshNode(['emit', home, String(EVENTS)])['ms'] as number));
    const runPy = (): Promise<void> =>
      typeof python === 'string' ? Promise.resolve() : withTempDir('emit-python', (home) => void py.push((JSON.parse(runPython(python, EMIT, [String(EVENTS)], home)) as { ms: number }).ms));
    if (round % 2 === 0) await runAura().then(runPy);
    else await runPy().then(runAura);
  }
  const rate = (ms: number): number => (EVENTS / ms) * 1000;
  console.log(`  aura         ${describeSamples(aura, 'ms')}  (${formatValue(rate(median(aura)), 'events/s')})`);
  const figures: Figure[] = [{ name: `aura emit ${formatCount(EVENTS)}, fresh process`, value: rate(median(aura)), unit: 'events/s' }];
  if (typeof python === 'string') {
    console.log(`  ${python}`);
    printResult({ scenario: 'emit-python', figures, skipped: [{ row: GOAL.emitPython, why: python }] });
    return;
  }
  const multiple = medianPairedRatio(py, aura);
  console.log(`  Python Aura  ${describeSamples(py, 'ms')}  (${formatValue(rate(median(py)), 'events/s')})`);
  console.log(`  aura / Python Aura speed, same-round: median ${formatValue(multiple, 'x')} (goal >= ${formatValue(TARGET, 'x')}: ${multiple >= TARGET ? 'met' : 'NOT MET'})`);
  figures.push(
    { name: `Python Aura emit ${formatCount(EVENTS)}, fresh process`, value: rate(median(py)), unit: 'events/s' },
    {
      name: 'emit speed aura / Python Aura, fresh process',
      value: multiple,
      unit: 'x',
      target: TARGET,
    },
  );
  printResult({ scenario: 'emit-python', figures });
}

await main();
