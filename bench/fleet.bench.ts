/**
 * The fleet store on PostgreSQL, three figures:
 *
 * 1. `aura push` of 1,000 sessions x 1,000 events (every line checked, stored with its fields, the
 *    detector run, each session one transaction), in events/s, against a plain binary `COPY` of
 *    the same lines read from the same files into a table with no key, in the same run,
 *    interleaved. Target: push >= 50% of COPY.
 * 2. `get_session_findings` over 10,000 stored sessions (1M events), warm, over stdio with the SDK
 *    client (`aura mcp --store`), while another process pushes 1,000 more sessions into the same
 *    store. Target: median <= 100 ms.
 * 3. `aura verify store --store` over those 10,000 sessions (before the extra pushes) against the
 *    local `aura verify store` of the same sessions, interleaved (two rounds), in events/s. Target:
 *    the store >= 50% of local.
 *
 * The sessions are built once and kept (bench/utils/dataset.ts: AURA_BENCH_DATA, default the OS
 * temp folder's `aura-bench-data`): later runs, and the other scenarios over the same 10,000
 * sessions, reuse them. So is the store of those 10,000 sessions: pushed once into the database
 * `aura_bench_fleet_find_kept_*` on AURA_BENCH_PG (default the local server), which each run copies
 * (`CREATE DATABASE ... TEMPLATE`) rather than pushing them again; drop it to free its space (it
 * keeps the roles `aura_bench_ingest` and `aura_bench_reader` too). The other databases
 * (`aura_bench_fleet_push`, `_copy`, `_find`) are made afresh each run and dropped at the end.
 */

import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import postgres from 'postgres';
import { COPY_HEADER, COPY_TRAILER, CopyRows } from '../src/store/postgres/copy-binary.js';
import { openStore } from '../src/store/postgres/connection.js';
import { initStore, SCHEMA_VERSION } from '../src/store/postgres/schema.js';
import { verifyFleetStore } from '../src/store/postgres/verify.js';
import { splitLines } from '../src/store/postgres/ingest-check.js';
import { pushSessions } from '../src/store/push.js';
import { listSessionIds } from '../src/store/session-files.js';
import { verifyStore } from '../src/store/verify-store.js';
import { dataset, FINDINGS_STORE } from './utils/dataset.js';
import { describeSamples, formatCount, interleave, median, medianPairedRatio, quantile, samplesOf, since } from './utils/measure.js';
import { printResult, type Figure } from './utils/result.js';

const SCALE = Number(process.env['AURA_BENCH_FLEET_SCALE'] ?? 1);
const PUSH = { sessions: Math.round(1000 * SCALE), events: 1000 };
const FIND = { sessions: Math.round(FINDINGS_STORE.sessions * SCALE), events: FINDINGS_STORE.events };
const ADMIN = process.env['AURA_BENCH_PG'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const ROOT = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const REPS = 3;
// `verify store` of 1M events each way is half a minute a round; its target is met with room to
// spare (0.8-1.1x against 0.5x), so two rounds keep the whole bench near ten minutes.
const VERIFY_REPS = 2;

const admin = postgres(ADMIN, { max: 1, onnotice: () => undefined });

function databaseUrl(name: string): string {
  const url = new URL(ADMIN);
  url.pathname = `/${name}`;
  return url.toString();
}

async function freshDatabase(name: string): Promise<string> {
  await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.unsafe(`CREATE DATABASE ${name}`);
  return databaseUrl(name);
}

async function initialized(name: string): Promise<string> {
  const url = await freshDatabase(name);
  const store = openStore(url, { max: 1 });
  await initStore(store.sql, store.label, { ingest: 'aura_bench_ingest', reader: 'aura_bench_reader' });
  await store.sql.end();
  return url;
}

/**
 * A store holding the sessions of `home` (`aura push --all`), for this run to work on: a copy of
 * the kept one, which is pushed first when there is none for this data set and schema. Returns
 * its URL, and the push's rate (events/s) when it was pushed in this run.
 */
async function findStore(home: string, events: number): Promise<{ url: string; pushRate: number | null }> {
  const kept = `aura_bench_fleet_find_kept_${FIND.sessions}_s${SCHEMA_VERSION}`;
  // Names the data set the kept store was pushed from: a data set built again holds other sessions.
  const stamp = `${path.basename(home)} ${fs.statSync(path.join(home, 'complete')).mtimeMs} vacuumed`;
  const [row] = await admin<{ note: string | null }[]>`SELECT shobj_description(oid, 'pg_database') AS note FROM pg_database WHERE datname = ${kept}`;
  let pushRate: number | null = null;
  if (row?.note !== stamp) {
    const store = openStore(await initialized(kept));
    try {
      const start = performance.now();
      await pushSessions(store, { sessionsDir: path.join(home, 'sessions'), sealLog: path.join(home, 'seals.jsonl'), keysDir: path.join(home, 'keys'), host: 'bench', ids: null });
      pushRate = events / (since(start) / 1000);
      // A store in service is vacuumed by autovacuum as it fills (store init asks it to come
      // often); a server run with autovacuum off, as some test servers are, would leave the
      // visibility map empty and the findings channel fetching every row it reads from the table.
      await store.sql`VACUUM (ANALYZE)`;
    } finally {
      await store.sql.end();
    }
    await admin.unsafe(`COMMENT ON DATABASE ${kept} IS '${stamp.replaceAll("'", "''")}'`);
  }
  await admin.unsafe('DROP DATABASE IF EXISTS aura_bench_fleet_find WITH (FORCE)');
  const [version] = await admin<{ n: number }[]>`SELECT current_setting('server_version_num')::int AS n`;
  // PostgreSQL 15 copies a database through the WAL by default, block by block: the files are copied in seconds.
  await admin.unsafe(`CREATE DATABASE aura_bench_fleet_find TEMPLATE ${kept}${(version?.n ?? 0) >= 150000 ? ' STRATEGY FILE_COPY' : ''}`);
  return { url: databaseUrl('aura_bench_fleet_find'), pushRate };
}

/** `aura push --all` of a home into a fresh store: events/s. */
async function timedPush(home: string, events: number): Promise<number> {
  const url = await initialized('aura_bench_fleet_push');
  const store = openStore(url);
  try {
    const start = performance.now();
    const report = await pushSessions(store, { sessionsDir: path.join(home, 'sessions'), sealLog: path.join(home, 'seals.jsonl'), keysDir: path.join(home, 'keys'), host: 'bench', ids: null });
    const ms = since(start);
    if (report.counts.stored !== PUSH.sessions) throw new Error(`pushed ${JSON.stringify(report.counts)}`);
    return events / (ms / 1000);
  } finally {
    await store.sql.end();
  }
}

/** A plain binary COPY of the same lines, read from the same files, into a table with no key: events/s. */
async function timedCopy(home: string, events: number): Promise<number> {
  const url = await freshDatabase('aura_bench_fleet_copy');
  const sql = postgres(url, { max: 1, onnotice: () => undefined });
  try {
    await sql`CREATE TABLE plain_lines (session_id text, line_no integer, line bytea)`;
    const start = performance.now();
    const stream = await sql`COPY plain_lines (session_id, line_no, line) FROM STDIN WITH (FORMAT binary)`.writable();
    const dir = path.join(home, 'sessions');
    const chunks = (function* (): Generator<Buffer> {
      // One COPY stream: the header once, each session's rows, the trailer once.
      yield COPY_HEADER;
      for (const id of listSessionIds(dir)) {
        const bytes = fs.readFileSync(path.join(dir, `${id}.jsonl`));
        const lines = splitLines(bytes);
        const rows = new CopyRows(bytes.length + lines.length * 40);
        lines.forEach((line, i) => rows.add([id, i + 1, line]));
        yield rows.bytes();
      }
      yield COPY_TRAILER;
    })();
    const { pipeline } = await import('node:stream/promises');
    const { Readable } = await import('node:stream');
    await pipeline(Readable.from(chunks), stream);
    return events / (since(start) / 1000);
  } finally {
    await sql.end();
  }
}

async function findingsWhilePushing(findUrl: string, pushHome: string): Promise<number[]> {
  const client = new Client({ name: 'aura-bench', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [path.join(ROOT, 'dist', 'cli', 'bin.cjs'), 'mcp', '--store', findUrl], stderr: 'inherit' }));
  const call = async (): Promise<number> => {
    const start = performance.now();
    const result = await client.callTool({ name: 'get_session_findings', arguments: { per_kind_limit: 5, include_summary: false } });
    if (result.isError === true) throw new Error(JSON.stringify(result.content));
    return since(start);
  };
  try {
    for (let i = 0; i < 3; i++) await call();
    // `aura push` as a host runs it (at its default niceness), into the store being read.
    const pusher = spawn(process.execPath, [path.join(ROOT, 'dist', 'cli', 'bin.cjs'), '--home', pushHome, 'push', '--all', '--host', 'bench-pusher', '--store', findUrl, '--json'], { stdio: ['ignore', 'pipe', 'inherit'] });
    const ended = new Promise<void>((resolve) => pusher.on('close', () => resolve()));
    let running = true;
    void ended.then(() => (running = false));
    // Let the pusher get going before the first timed call.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const times: number[] = [];
    while (running && times.length < 40) {
      times.push(await call());
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    pusher.kill('SIGTERM');
    await ended;
    return times;
  } finally {
    await client.close();
  }
}

async function main(): Promise<void> {
  console.log(`fleet: push ${formatCount(PUSH.sessions)} x ${formatCount(PUSH.events)} events vs COPY; findings and verify over ${formatCount(FIND.sessions)} x ${FIND.events} events`);
  console.log(`  load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const pushHome = await dataset('push', 'bench/push', PUSH);
  const findHome = await dataset('find', 'bench/find', FIND);
  const pushEvents = PUSH.sessions * PUSH.events;
  const findEvents = FIND.sessions * FIND.events;
  const figures: Figure[] = [];
  try {
    // 1. push against COPY, interleaved.
    const samples = await interleave(
      [
        { name: 'push', run: () => timedPush(pushHome, pushEvents) },
        { name: 'copy', run: () => timedCopy(pushHome, pushEvents) },
      ],
      REPS,
    );
    const push = samplesOf(samples, 'push');
    const copy = samplesOf(samples, 'copy');
    console.log(`  aura push  ${describeSamples(push, 'events/s')}`);
    console.log(`  plain COPY ${describeSamples(copy, 'events/s')}`);
    const pushRatio = medianPairedRatio(push, copy);
    figures.push({ name: 'push', value: median(push), unit: 'events/s' }, { name: 'plain COPY of the same lines', value: median(copy), unit: 'events/s', reference: true }, { name: 'push / COPY', value: pushRatio, unit: 'x', target: 0.5 });

    // 2. one store of 10,000 sessions: verify store against the local folder, interleaved; then
    //    the findings channel over it while another process pushes 1,000 more sessions into it.
    const copying = performance.now();
    const { url: findUrl, pushRate } = await findStore(findHome, findEvents);
    if (pushRate === null) console.log(`  the store of ${formatCount(FIND.sessions)} sessions: a copy of the kept one (${(since(copying) / 1000).toFixed(1)} s)`);
    else {
      console.log(`  pushed ${formatCount(FIND.sessions)} sessions of ${FIND.events} events: ${formatCount(pushRate)} events/s (kept for later runs)`);
      figures.push({ name: `push, ${FIND.events}-event sessions`, value: pushRate, unit: 'events/s' });
    }
    const store = openStore(findUrl);
    const verified = await interleave(
      [
        {
          name: 'store',
          run: async () => {
            const start = performance.now();
            const report = await verifyFleetStore(store.sql, store.label, null);
            if (!report.ok || report.counts.verified + report.counts.intact !== FIND.sessions) throw new Error(`store: ${JSON.stringify(report.counts)}`);
            return findEvents / (since(start) / 1000);
          },
        },
        {
          name: 'local',
          run: () => {
            const start = performance.now();
            const report = verifyStore({ sessionsDir: path.join(findHome, 'sessions'), sealLog: path.join(findHome, 'seals.jsonl') });
            if (!report.ok) throw new Error(`local: ${JSON.stringify(report.counts)}`);
            return findEvents / (since(start) / 1000);
          },
        },
      ],
      VERIFY_REPS,
    );
    const fromStore = samplesOf(verified, 'store');
    const local = samplesOf(verified, 'local');
    console.log(`  verify store --store ${describeSamples(fromStore, 'events/s')}`);
    console.log(`  verify store (local) ${describeSamples(local, 'events/s')}`);
    figures.push(
      { name: 'verify store --store', value: median(fromStore), unit: 'events/s' },
      { name: 'verify store, local folder', value: median(local), unit: 'events/s', reference: true },
      { name: 'verify --store / local', value: medianPairedRatio(fromStore, local), unit: 'x', target: 0.5 },
    );
    const times = await findingsWhilePushing(findUrl, pushHome);
    if (times.length < 10) {
      // A scaled-down run (AURA_BENCH_FLEET_SCALE) pushes too little to time calls against; the other figures stand.
      console.log(`  get_session_findings while pushing: not measured, the push ended after ${times.length} calls`);
    } else {
      console.log(`  get_session_findings while pushing ${describeSamples(times, 'ms')}, p90 ${quantile(times, 0.9).toFixed(1)} ms`);
      figures.push({ name: `get_session_findings warm, ${formatCount(FIND.sessions)} sessions, pushes going on`, value: median(times), unit: 'ms', ceiling: 100 });
    }
    await store.sql.end();
  } finally {
    // The roles stay: the kept store grants to them.
    for (const name of ['push', 'copy', 'find']) await admin.unsafe(`DROP DATABASE IF EXISTS aura_bench_fleet_${name} WITH (FORCE)`);
    await admin.end();
  }
  console.log(`  load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  printResult({ scenario: 'fleet', figures });
}

await main();
