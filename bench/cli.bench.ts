/**
 * cli: the wall time of `aura verify chain <trail>` on a 23-event trail written by Python Aura
 * 0.3.3 (20 events and its own three), from `node dist/cli/bin.cjs` (the built command, as a user
 * runs it) beside Python Aura's own command line on the same file (`python -m aura.cli.main
 * verify chain`), interleaved, each a fresh process. Also, for scale, Node starting an empty ES
 * module. Goal: aura <= 0.5x Python (median of the same-round ratios). Beside the wall time, the
 * CPU time (user + sys) each variant's processes used, on Linux: a loaded machine stretches wall
 * time far more than CPU time. The processes start without NODE_EXTRA_CA_CERTS, and aura is also
 * timed with it where it is set (bench/utils/node-start.ts).
 *
 * Run `npm run build` first: this measures dist/, and says so when dist/ is older than src/.
 */

import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { GOAL } from './utils/goals.js';
import { describeSamples, formatValue, median, medianPairedRatio, since, withTempDir } from './utils/measure.js';
import { findPythonAura, PYTHON_TOOL_CALL_PAYLOAD, runPython, type PythonAura } from './utils/python-aura.js';
import { EXTRA_CA_CERTS, extraCaCertsNote, withoutExtraCaCerts } from './utils/node-start.js';
import { childrenCpuSeconds } from './utils/process-cpu.js';
import { printResult, type Figure, type SkippedGoal } from './utils/result.js';

const ROUNDS = 15;
const CEILING = 0.5;
const ROOT = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const BIN = path.join(ROOT, 'dist', 'cli', 'bin.cjs');

const WRITE_TRAIL = `${PYTHON_TOOL_CALL_PAYLOAD}
from aura import agent, configure
configure()
with agent("bench/cli").session(export=False) as run:
    for n in range(20):
        run.emit("tool.call", tool_call_payload(n))
print(run.session_id)
`;

/** The newest modification time under `dir`, in ms. */
function newest(dir: string): number {
  let latest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) latest = Math.max(latest, fs.statSync(path.join(entry.parentPath, entry.name)).mtimeMs);
  }
  return latest;
}

/** CPU milliseconds (user + sys) this process's finished children used so far, or null off Linux (10 ms ticks: a variant's figure is its total over all rounds, divided). */
function childrenCpuMs(): number | null {
  const seconds = childrenCpuSeconds();
  return seconds === null ? null : seconds * 1000;
}

/** Milliseconds of one run of `command`, which must exit 0, and the CPU milliseconds it used (0 off Linux). */
function wall(command: string, args: readonly string[], env: NodeJS.ProcessEnv): { ms: number; cpuMs: number } {
  const cpuBefore = childrenCpuMs() ?? 0;
  const start = performance.now();
  const result = spawnSync(command, [...args], { env, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  const ms = since(start);
  const cpuMs = (childrenCpuMs() ?? 0) - cpuBefore;
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} exited ${String(result.status)}: ${result.stderr}`);
  return { ms, cpuMs };
}

async function main(): Promise<void> {
  if (!fs.existsSync(BIN)) throw new Error('dist/ is not built: run npm run build first');
  if (newest(path.join(ROOT, 'src')) > fs.statSync(path.join(ROOT, 'dist', 'cli', 'main.js')).mtimeMs) {
    console.log('  note: dist/ is older than src/: this measures the last build (npm run build to measure the sources)');
  }
  const found = findPythonAura();
  const python: PythonAura | null = typeof found === 'string' ? null : found;
  const skipped: SkippedGoal[] = [];
  if (python === null) skipped.push({ row: GOAL.cliVerify, why: found as string });
  else if (python.cliPythonPath === null) skipped.push({ row: GOAL.cliVerify, why: `Python Aura's CLI needs rich, absent (pip install --target ${python.depsDir} rich)` });
  for (const { why } of skipped) console.log(`  ${why}`);

  await withTempDir('cli', async (home) => {
    const empty = path.join(home, 'empty.mjs');
    fs.writeFileSync(empty, 'export {};\n');
    let trail: string;
    if (python !== null) {
      const id = runPython(python, WRITE_TRAIL, [], home).trim();
      trail = path.join(home, 'sessions', `${id}.jsonl`);
    } else {
      // No Python: aura's own trail of the same shape, so the aura figure is still measured.
      const { agent } = await import('../src/index.js');
      const { toolCallPayload } = await import('./utils/payload.js');
      const session = agent('bench/cli', { home }).session({ export: false });
      for (let n = 0; n < 20; n++) session.emit('tool.call', toolCallPayload(n));
      trail = (await session.close()).log_path;
    }
    // Verified as a file handed over, outside any sessions folder: a session's own trail without its
    // summary (export off) is unsealed there, and verify chain rightly exits 1.
    const handed = path.join(home, 'handed-over.jsonl');
    fs.copyFileSync(trail, handed);
    trail = handed;
    const lines = fs.readFileSync(trail, 'utf8').split('\n').filter((line) => line !== '').length;
    console.log(`cli: verify chain on a ${lines}-event trail${python === null ? '' : ' written by Python Aura'}, ${ROUNDS} interleaved rounds, wall time of each fresh process`);

    console.log(`  ${extraCaCertsNote()}`);
    const env = { ...withoutExtraCaCerts(), NO_COLOR: '1' };
    const auraArgs = [BIN, '--home', home, 'verify', 'chain', trail];
    const variants: { name: string; run: () => { ms: number; cpuMs: number } }[] = [
      { name: 'node', run: () => wall(process.execPath, [empty], env) },
      { name: 'aura', run: () => wall(process.execPath, auraArgs, env) },
    ];
    if (EXTRA_CA_CERTS !== undefined) variants.push({ name: 'aura with NODE_EXTRA_CA_CERTS', run: () => wall(process.execPath, auraArgs, { ...env, NODE_EXTRA_CA_CERTS: EXTRA_CA_CERTS }) });
    const cliPath = python?.cliPythonPath ?? null;
    if (python !== null && cliPath !== null) {
      const pyEnv = { ...env, PYTHONPATH: cliPath, AURA_HOME: home };
      variants.push({ name: 'python', run: () => wall(python.python, ['-m', 'aura.cli.main', 'verify', 'chain', trail], pyEnv) });
    }
    for (const variant of variants) variant.run();
    const samples = new Map<string, number[]>(variants.map((v) => [v.name, []]));
    const cpuTotal = new Map<string, number>();
    for (let round = 0; round < ROUNDS; round++) {
      for (const variant of round % 2 === 0 ? variants : [...variants].reverse()) {
        const { ms, cpuMs } = variant.run();
        samples.get(variant.name)?.push(ms);
        cpuTotal.set(variant.name, (cpuTotal.get(variant.name) ?? 0) + cpuMs);
      }
    }
    /** A variant's mean CPU milliseconds a run, or null off Linux. */
    const cpuPerRun = (name: string): number | null => (childrenCpuMs() === null ? null : (cpuTotal.get(name) ?? 0) / ROUNDS);
    const aura = samples.get('aura') as number[];
    const node = samples.get('node') as number[];
    console.log(`  node, an empty ES module          ${describeSamples(node, 'ms')}`);
    console.log(`  aura verify chain (dist/)         ${describeSamples(aura, 'ms')}`);
    const figures: Figure[] = [
      { name: 'node start, empty module', value: median(node), unit: 'ms' },
      { name: 'aura verify chain, wall', value: median(aura), unit: 'ms' },
    ];
    const withCerts = samples.get('aura with NODE_EXTRA_CA_CERTS');
    if (withCerts !== undefined) {
      console.log(`  aura, with NODE_EXTRA_CA_CERTS    ${describeSamples(withCerts, 'ms')}`);
      figures.push({ name: 'aura verify chain with NODE_EXTRA_CA_CERTS, wall', value: median(withCerts), unit: 'ms' });
    }
    for (const name of variants.map((v) => v.name)) {
      const ms = cpuPerRun(name);
      if (ms !== null) figures.push({ name: `${name} CPU (user + sys), mean a run`, value: ms, unit: 'ms' });
    }
    const py = samples.get('python');
    if (py !== undefined) {
      const ratio = medianPairedRatio(aura, py);
      console.log(`  Python Aura verify chain          ${describeSamples(py, 'ms')}`);
      console.log(`  aura / Python, same-round ratios: median ${formatValue(ratio, 'x')} (goal <= ${formatValue(CEILING, 'x')}: ${ratio <= CEILING ? 'met' : 'NOT MET'})`);
      if (withCerts !== undefined) {
        const certsRatio = medianPairedRatio(withCerts, py);
        console.log(`  aura with NODE_EXTRA_CA_CERTS / Python, same-round ratios: median ${formatValue(certsRatio, 'x')}`);
        figures.push({ name: 'aura with NODE_EXTRA_CA_CERTS / Python Aura', value: certsRatio, unit: 'x' });
      }
      const [auraCpu, pyCpu] = [cpuPerRun('aura'), cpuPerRun('python')];
      if (auraCpu !== null && pyCpu !== null) console.log(`  aura / Python, CPU time (user + sys): ${formatValue(auraCpu / pyCpu, 'x')}`);
      figures.push(
        { name: 'Python Aura verify chain, wall', value: median(py), unit: 'ms' },
        {
          name: 'aura / Python Aura, CLI verify chain',
          value: ratio,
          unit: 'x',
          ceiling: CEILING,
        },
      );
    }
    printResult({ scenario: 'cli', figures, skipped });
  });
}

await main();
