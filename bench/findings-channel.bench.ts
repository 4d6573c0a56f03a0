/**
 * The findings channel and `aura sessions list` over a big store: 10,000 sessions, 1M events in
 * all. Over stdio, with the SDK client: the first `get_session_findings` call (every trail read
 * and verified), a warm call (nothing changed: fingerprints only), a warm call after one trail
 * changed, and calls while another process writes to the store without pause (events, and a
 * session closed and sealed every second). Beside them, in the same run, `verify chain` over
 * every fifth trail, so the first call's cost per MB can be compared, and `aura sessions list` (the
 * built command, a fresh process each, after one run that fills the reader's cache). Targets: warm <= 100 ms, after one change <= 150 ms,
 * under a writer <= 100 ms, sessions list <= 1 s.
 *
 * Building the store takes minutes: it is built once and kept (bench/utils/dataset.ts). The
 * trails a run changes are cut back to their size before, and what the writer added is removed,
 * so the next run finds the same store.
 */

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { verifyTrail } from '../src/spine/verify.js';
import { benchDataDir, dataset, FINDINGS_STORE } from './utils/dataset.js';
import { describeSamples, formatCount, median, since } from './utils/measure.js';
import { printResult, type Figure } from './utils/result.js';

const EVENTS_PER_SESSION = FINDINGS_STORE.events;
const ROOT = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const BIN = path.join(ROOT, 'dist', 'cli', 'bin.cjs');

async function call(client: Client): Promise<number> {
  const start = performance.now();
  // The first call reads and verifies every trail: on a loaded machine, longer than the SDK's default minute.
  const result = await client.callTool({ name: 'get_session_findings', arguments: { per_kind_limit: 5, include_summary: false } }, undefined, { timeout: 60 * 60_000 });
  if (result.isError === true) throw new Error(JSON.stringify(result.content));
  return since(start);
}

/** Starts a process that writes to the store without pause; resolves once its first session is open. */
async function startWriter(home: string): Promise<ChildProcess> {
  const writer = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench', 'utils', 'fresh-child.ts'), 'write', home], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: writer.stdout as Readable }).once('line', () => resolve());
    writer.once('exit', (code) => reject(new Error(`the writer exited with ${String(code)}`)));
  });
  return writer;
}

/** Puts the kept store back as it was: the files the writer added removed, the seal log cut back. */
function restore(before: ReadonlyMap<string, ReadonlySet<string>>, sealLog: string, sealSize: number): void {
  for (const [dir, names] of before) {
    for (const name of fs.readdirSync(dir)) if (!names.has(name)) fs.rmSync(path.join(dir, name), { recursive: true, force: true });
  }
  fs.truncateSync(sealLog, sealSize);
}

/** Milliseconds of one `aura sessions list` (the built command, a fresh process) over the store. */
function sessionsList(home: string, sessions: number): number {
  const start = performance.now();
  // The reader's cache (store/index-file.ts) is kept with the bench data, not in the user's cache folder.
  const env = { ...process.env, AURA_CACHE_DIR: path.join(benchDataDir(), 'reader-cache') };
  const result = spawnSync(process.execPath, [BIN, '--home', home, 'sessions', 'list', '--json'], { encoding: 'utf8', maxBuffer: 1 << 30, env });
  const ms = since(start);
  if (result.status !== 0) throw new Error(`aura sessions list exited ${String(result.status)}: ${result.stderr}`);
  const listed = (JSON.parse(result.stdout) as { sessions: unknown[] }).sessions.length;
  if (listed !== sessions) throw new Error(`aura sessions list listed ${listed} sessions, expected ${sessions}`);
  return ms;
}

async function main(): Promise<void> {
  const building = performance.now();
  const home = await dataset('find', 'bench/find', FINDINGS_STORE);
  const sessionsDir = path.join(home, 'sessions');
  const trails = fs.readdirSync(sessionsDir).filter((n) => n.endsWith('.jsonl') && !n.endsWith('.otel.jsonl'));
  const megabytes = trails.reduce((sum, n) => sum + fs.statSync(path.join(sessionsDir, n)).size, 0) / 1e6;
  console.log(`findings-channel: ${formatCount(trails.length)} sessions, ${formatCount(trails.length * EVENTS_PER_SESSION)} events, ${megabytes.toFixed(0)} MB of trails (ready in ${(since(building) / 1000).toFixed(0)} s)`);

  // The cost per MB of verifying, from a fifth of the trails: the whole store took 15 s of the run.
  const sample = trails.filter((_, i) => i % 5 === 0);
  const sampleMegabytes = sample.reduce((sum, n) => sum + fs.statSync(path.join(sessionsDir, n)).size, 0) / 1e6;
  const verifyStart = performance.now();
  for (const name of sample) verifyTrail(path.join(sessionsDir, name));
  const verifyMs = since(verifyStart);

  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [path.join(ROOT, 'dist', 'cli', 'bin.cjs'), '--home', home, 'mcp'], cwd: ROOT, stderr: 'inherit' }));
  try {
    const first = await call(client);
    const warm: number[] = [];
    for (let i = 0; i < 5; i++) warm.push(await call(client));
    const changed: number[] = [];
    const touched = [0, 7, 14, 21, 28].map((i) => path.join(sessionsDir, trails[i] as string));
    const sizes = touched.map((file) => fs.statSync(file).size);
    try {
      for (const file of touched) {
        fs.appendFileSync(file, '\n');
        changed.push(await call(client));
      }
    } finally {
      touched.forEach((file, i) => fs.truncateSync(file, sizes[i]));
    }

    // Another process writes to the store without pause: every call comes within ms of a write.
    const sealLog = path.join(home, 'seals.jsonl');
    const sealSize = fs.statSync(sealLog).size;
    const before = new Map([sessionsDir, path.join(home, 'agents')].map((dir) => [dir, new Set(fs.readdirSync(dir))]));
    const underWrites: number[] = [];
    const writer = await startWriter(home);
    try {
      await new Promise((resolve) => setTimeout(resolve, 1500));
      for (let i = 0; i < 15; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        underWrites.push(await call(client));
      }
    } finally {
      writer.kill('SIGKILL');
      await new Promise((resolve) => writer.once('close', resolve));
      restore(before, sealLog, sealSize);
    }

    const listed: number[] = [];
    if (fs.existsSync(BIN)) {
      sessionsList(home, trails.length);
      for (let i = 0; i < 3; i++) listed.push(sessionsList(home, trails.length));
    } else console.log('  dist/ is not built (npm run build): aura sessions list not measured');

    const firstPerMb = first / megabytes;
    const verifyPerMb = verifyMs / sampleMegabytes;
    console.log(`  verify chain over every 5th trail ${formatCount(Math.round(verifyMs))} ms (${verifyPerMb.toFixed(1)} ms/MB)`);
    console.log(`  first call                      ${formatCount(Math.round(first))} ms (${firstPerMb.toFixed(1)} ms/MB, ${(firstPerMb / verifyPerMb).toFixed(2)}x verify's)`);
    console.log(`  warm call                       ${describeSamples(warm, 'ms')} (target <= 100 ms: ${median(warm) <= 100 ? 'met' : 'MISSED'})`);
    console.log(`  after one trail changed         ${describeSamples(changed, 'ms')} (target <= 150 ms: ${median(changed) <= 150 ? 'met' : 'MISSED'})`);
    console.log(`  while a writer writes           ${describeSamples(underWrites, 'ms')} (target <= 100 ms: ${median(underWrites) <= 100 ? 'met' : 'MISSED'})`);
    if (listed.length > 0) console.log(`  aura sessions list (fresh)      ${describeSamples(listed, 'ms')} (target <= 1,000 ms: ${median(listed) <= 1000 ? 'met' : 'MISSED'})`);
    const figures: Figure[] = [
      { name: `first call, ${formatCount(trails.length)} sessions`, value: first, unit: 'ms' },
      { name: 'first call cost / verify cost per MB', value: firstPerMb / verifyPerMb, unit: 'x' },
      { name: 'warm call', value: median(warm), unit: 'ms', ceiling: 100 },
      { name: 'warm call after one trail changed', value: median(changed), unit: 'ms', ceiling: 150 },
      { name: 'call within ms of a store write', value: median(underWrites), unit: 'ms', ceiling: 100 },
      ...(listed.length === 0 ? [] : [{ name: `sessions list, ${formatCount(trails.length)} sessions`, value: median(listed), unit: 'ms', ceiling: 1000 }]),
    ];
    printResult({ scenario: 'findings-channel', figures });
  } finally {
    await client.close();
  }
}

await main();
