/**
 * findings-writes: `get_session_findings` over the 10,000-session store while another process
 * writes to it continuously (an event every few milliseconds, a session closed and its seal
 * appended every second), over stdio with the SDK client (`aura mcp`). Every timed call comes
 * within 2 s of a write. The store is a writable copy of the kept one (bench/utils/dataset.ts:
 * hard links for the sessions, the seal log copied), removed afterwards. Goal: median <= 100 ms.
 */

import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { dataset, FINDINGS_STORE, writableCopy } from './utils/dataset.js';
import { GOAL } from './utils/goals.js';
import { describeSamples, formatCount, formatValue, median, quantile, since, spread, withTempDir } from './utils/measure.js';
import { printResult } from './utils/result.js';

const CALLS = 15;
const GAP_MS = 200;
const CEILING_MS = 100;
const ROOT = path.dirname(path.dirname(fileURLToPath(import.meta.url)));

async function call(client: Client): Promise<number> {
  const start = performance.now();
  const result = await client.callTool({ name: 'get_session_findings', arguments: { per_kind_limit: 5, include_summary: false } });
  if (result.isError === true) throw new Error(JSON.stringify(result.content));
  return since(start);
}

async function main(): Promise<void> {
  const kept = await dataset('find', 'bench/find', FINDINGS_STORE);
  await withTempDir('findings-writes', async (dir) => {
    const home = path.join(dir, 'home');
    writableCopy(kept, home);
    console.log(`findings-writes: ${formatCount(FINDINGS_STORE.sessions)} sessions, ${CALLS} calls ${GAP_MS} ms apart while another process writes to the store`);
    const client = new Client({ name: 'bench', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: ['--import', 'tsx', path.join(ROOT, 'src', 'cli', 'main.ts'), '--home', home, 'mcp'], cwd: ROOT, stderr: 'inherit' }));
    const writer = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench', 'utils', 'fresh-child.ts'), 'write', home], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const first = await call(client);
      const quiet = [await call(client), await call(client), await call(client)];
      console.log(`  first call ${formatValue(first, 'ms')}; warm, no writer yet: ${describeSamples(quiet, 'ms')}`);
      await new Promise<void>((resolve, reject) => {
        createInterface({ input: writer.stdout }).once('line', () => resolve());
        writer.once('exit', (code) => reject(new Error(`the writer exited with ${String(code)}`)));
      });
      await new Promise((resolve) => setTimeout(resolve, 500));
      const during: number[] = [];
      for (let i = 0; i < CALLS; i++) {
        during.push(await call(client));
        await new Promise((resolve) => setTimeout(resolve, GAP_MS));
      }
      console.log(`  while writing: ${describeSamples(during, 'ms')}; p90 ${formatValue(quantile(during, 0.9), 'ms')} (goal <= ${formatValue(CEILING_MS, 'ms')}: ${median(during) <= CEILING_MS ? 'met' : 'NOT MET'})`);
      printResult({
        scenario: 'findings-writes',
        figures: [
          { name: 'warm call, no writer', value: median(quiet), unit: 'ms' },
          {
            name: 'call while a writer appends',
            value: median(during),
            unit: 'ms',
            ceiling: CEILING_MS,
            goal: { row: GOAL.findingsWrites, measured: `${formatValue(median(during), 'ms')} (${spread(during, 'ms')})`, baseline: `no writer ${formatValue(median(quiet), 'ms')}` },
          },
        ],
      });
    } finally {
      writer.kill();
      await client.close();
    }
  });
}

await main();
