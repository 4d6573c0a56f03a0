/**
 * What `aura proxy` adds to a `tools/call`: the same SDK client calls `echo` of
 * `@modelcontextprotocol/server-everything` over stdio directly and through the proxy (every call
 * a guarded `session.tool()`: three trail lines, policy, the approvals inbox), 2,000 calls each,
 * interleaved in rounds of 100 so a slow spell lands on both. Reported: median and p99 of each and
 * the difference (targets: <= 1 ms = 1000 µs added at the median, <= 3 ms at p99), and calls per second
 * through one proxy with 8 callers in flight at once, beside the same load sent directly, in
 * interleaved rounds (target: proxied >= 0.8x direct, median of the same-round ratios).
 * `AURA_BENCH_PROXY_CALLS` changes the number of calls.
 */

import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { formatCount, formatValue, median, medianPairedRatio, quantile, REPETITIONS, since, withTempDir } from './utils/measure.js';
import { childPids, processCpuSeconds } from './utils/process-cpu.js';
import { printResult, type Figure } from './utils/result.js';

const CALLS = Number(process.env['AURA_BENCH_PROXY_CALLS'] ?? 2_000);
const ROUND = 100;
const WARMUP = 300;
const CALLERS = 8;
const MEDIAN_CEILING_US = 1000;
const P99_CEILING_US = 3000;
const THROUGHPUT_TARGET = 0.8;
const ROOT = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const EVERYTHING = path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');

/** A connected client, and the pid of the process it spawned. */
async function connect(args: readonly string[]): Promise<{ client: Client; pid: number | null }> {
  const client = new Client({ name: 'bench', version: '1.0.0' });
  const transport = new StdioClientTransport({ command: process.execPath, args: [...args], cwd: ROOT, stderr: 'inherit' });
  await client.connect(transport);
  return { client, pid: transport.pid };
}

async function echo(client: Client, n: number): Promise<void> {
  const result = await client.callTool({ name: 'echo', arguments: { message: `call ${n}` } });
  if (result.isError === true) throw new Error(JSON.stringify(result.content));
}

/** Milliseconds of each of `calls` sequential calls. */
async function latencies(client: Client, calls: number, into: number[]): Promise<void> {
  for (let i = 0; i < calls; i++) {
    const start = performance.now();
    await echo(client, i);
    into.push(since(start));
  }
}

/** One throughput run: calls per second, and the CPU each process spent per call (null where unknown). */
interface ThroughputRun {
  readonly rate: number;
  readonly cpuPerCall: number | null;
}

/** The CPU seconds so far of this process (the client) and the given processes, or null where unknown. */
function cpuOf(pids: readonly number[]): number | null {
  const own = process.cpuUsage();
  let total = (own.user + own.system) / 1e6;
  for (const pid of pids) {
    const seconds = processCpuSeconds(pid);
    if (seconds === null) return null;
    total += seconds;
  }
  return total;
}

/** Calls per second with `callers` calls in flight at once, `calls` in all, and the CPU of `pids` and this process per call. */
async function throughput(client: Client, calls: number, callers: number, pids: readonly number[]): Promise<ThroughputRun> {
  let next = 0;
  const cpuBefore = cpuOf(pids);
  const start = performance.now();
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (next < calls) await echo(client, next++);
    }),
  );
  const rate = (calls / since(start)) * 1000;
  const cpuAfter = cpuOf(pids);
  return { rate, cpuPerCall: cpuBefore === null || cpuAfter === null ? null : ((cpuAfter - cpuBefore) / calls) * 1e6 };
}

/**
 * CPU per call of every process, direct and proxied, and what it allows: when the cores are busy
 * (8 callers keep them so), calls per second are at most cores / CPU per call, so the proxied /
 * direct throughput cannot pass direct CPU / proxied CPU however the proxy's work is scheduled.
 */
function cpuPerCallFigures(directRuns: readonly ThroughputRun[], proxiedRuns: readonly ThroughputRun[]): Figure[] {
  const cpu = (runs: readonly ThroughputRun[]): number[] => runs.flatMap((r) => (r.cpuPerCall === null ? [] : [r.cpuPerCall]));
  const [directCpu, proxiedCpu] = [cpu(directRuns), cpu(proxiedRuns)];
  if (directCpu.length === 0 || proxiedCpu.length === 0) return [];
  return [
    { name: 'CPU per call, direct (all processes)', value: median(directCpu), unit: 'µs' },
    { name: 'CPU per call, proxied (all processes)', value: median(proxiedCpu), unit: 'µs' },
    { name: `CPU-bound ceiling of the ratio, ${os.availableParallelism()} cores`, value: median(directCpu) / median(proxiedCpu), unit: 'x' },
  ];
}

async function main(): Promise<void> {
  await withTempDir('proxy', async (home) => {
    const directRun = await connect([EVERYTHING, 'stdio']);
    const proxiedRun = await connect([path.join(ROOT, 'dist', 'cli', 'bin.cjs'), '--home', home, 'proxy', '--', process.execPath, EVERYTHING, 'stdio']);
    const [direct, proxied] = [directRun.client, proxiedRun.client];
    try {
      console.log(`proxy: ${formatCount(CALLS)} echo calls each, direct and through aura proxy (server-everything over stdio), rounds of ${ROUND}`);
      await latencies(direct, WARMUP, []);
      await latencies(proxied, WARMUP, []);
      const directMs: number[] = [];
      const proxiedMs: number[] = [];
      for (let round = 0; round * ROUND < CALLS; round++) {
        const order = round % 2 === 0 ? [direct, proxied] : [proxied, direct];
        for (const client of order) await latencies(client, Math.min(ROUND, CALLS - round * ROUND), client === direct ? directMs : proxiedMs);
      }
      // The proxy's upstream is its child: the CPU of every process a call passes through is counted.
      const pidsOf = (run: { pid: number | null }): number[] => (run.pid === null ? [] : [run.pid, ...childPids(run.pid)]);
      const [directPids, proxiedPids] = [pidsOf(directRun), pidsOf(proxiedRun)];
      const directRuns: ThroughputRun[] = [];
      const proxiedRuns: ThroughputRun[] = [];
      for (let round = 0; round < REPETITIONS; round++) {
        const order = round % 2 === 0 ? [direct, proxied] : [proxied, direct];
        for (const client of order) {
          if (client === direct) directRuns.push(await throughput(client, CALLS / 2, CALLERS, directPids));
          else proxiedRuns.push(await throughput(client, CALLS / 2, CALLERS, proxiedPids));
        }
      }
      const [directRates, proxiedRates] = [directRuns.map((r) => r.rate), proxiedRuns.map((r) => r.rate)];
      const [directRate, proxiedRate] = [median(directRates), median(proxiedRates)];
      const throughputRatio = medianPairedRatio(proxiedRates, directRates);
      const cpuFigures = cpuPerCallFigures(directRuns, proxiedRuns);
      const addedP99 = (quantile(proxiedMs, 0.99) - quantile(directMs, 0.99)) * 1000;

      const figures: Figure[] = [
        { name: 'direct median', value: median(directMs) * 1000, unit: 'µs' },
        { name: 'proxied median', value: median(proxiedMs) * 1000, unit: 'µs' },
        { name: 'added at the median', value: (median(proxiedMs) - median(directMs)) * 1000, unit: 'µs', ceiling: MEDIAN_CEILING_US },
        { name: 'direct p99', value: quantile(directMs, 0.99) * 1000, unit: 'µs' },
        { name: 'proxied p99', value: quantile(proxiedMs, 0.99) * 1000, unit: 'µs' },
        {
          name: 'added at p99',
          value: addedP99,
          unit: 'µs',
          ceiling: P99_CEILING_US,
        },
        { name: `direct calls/s, ${CALLERS} callers`, value: directRate, unit: 'calls/s' },
        { name: `proxied calls/s, ${CALLERS} callers`, value: proxiedRate, unit: 'calls/s' },
        {
          name: 'proxied / direct throughput',
          value: throughputRatio,
          unit: 'x',
          target: THROUGHPUT_TARGET,
        },
        ...cpuFigures,
      ];
      for (const f of figures) {
        const goal = f.ceiling !== undefined ? ` (target <= ${formatValue(f.ceiling, f.unit)}: ${f.value <= f.ceiling ? 'met' : 'MISSED'})` : f.target !== undefined ? ` (target >= ${formatValue(f.target, f.unit)}: ${f.value >= f.target ? 'met' : 'MISSED'})` : '';
        console.log(`  ${f.name.padEnd(34)} ${formatValue(f.value, f.unit)}${goal}`);
      }
      printResult({ scenario: 'proxy', figures });
    } finally {
      await direct.close();
      await proxied.close();
    }
  });
}

await main();
