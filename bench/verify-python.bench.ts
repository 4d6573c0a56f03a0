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
import { formatCount, withTempDir } from './utils/measure.js';
import { KIND, toolCallPayload } from './utils/payload.js';
import { raceAgainstPython, runFreshNode, runPython } from './utils/python-aura.js';

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

const trail = await keptTrail();
console.log(`verify-python: ${formatCount(EVENTS + 3)} events, ${(fs.statSync(trail).size / 1e6).toFixed(1)} MB, each verified in a fresh process, ${ROUNDS} interleaved rounds; CPU time of the verification`);
await withTempDir('verify-python', (home) =>
  raceAgainstPython({
    scenario: 'verify-python',
    row: GOAL.verifyPython,
    what: 'verify',
    detail: `${formatCount(EVENTS)} events, CPU`,
    rounds: ROUNDS,
    target: TARGET,
    aura: () => runFreshNode(['verify', trail])['cpuMs'] as number,
    python: (python) => (JSON.parse(runPython(python, VERIFY, [trail], home)) as { cpuMs: number }).cpuMs,
  }),
);
