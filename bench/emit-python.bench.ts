/**
 * emit-python: 20,000 `session.emit` calls with the trail on, each run in a fresh process (as an
 * agent's process starts: nothing warmed), by aura and by Python Aura 0.3.3 with the same payload
 * (bench/utils/payload.ts and its Python twin), interleaved. Only the emit loop is timed, on both
 * sides. Goal: aura >= 5x Python Aura (median of the same-round ratios of their times).
 */

import { GOAL } from './utils/goals.js';
import { formatCount, REPETITIONS, withTempDir } from './utils/measure.js';
import { PYTHON_TOOL_CALL_PAYLOAD, raceAgainstPython, runFreshNode, runPython } from './utils/python-aura.js';

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

console.log(`emit-python: ${formatCount(EVENTS)} tool.call events in a fresh process, trail on, ${REPETITIONS} interleaved rounds; emit loop timed`);
await raceAgainstPython({
  scenario: 'emit-python',
  row: GOAL.emitPython,
  what: 'emit',
  detail: `${formatCount(EVENTS)} events, fresh process`,
  rounds: REPETITIONS,
  target: TARGET,
  aura: () => withTempDir('emit-python', (home) => runFreshNode(['emit', home, String(EVENTS)])['ms'] as number),
  python: (python) => withTempDir('emit-python', (home) => (JSON.parse(runPython(python, EMIT, [String(EVENTS)], home)) as { ms: number }).ms),
});
