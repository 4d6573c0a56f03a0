/**
 * The worker threads that check a push's sessions: a check that throws and a worker that dies stop
 * the push with the session named, leave nothing half-stored, and a push run again stores all.
 * The pool runs the built worker (dist/), as the CLI does; a failing one is a script put before it.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Worker } from 'node:worker_threads';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { CheckFailedError } from '../../src/errors.js';
import { agent } from '../../src/session/agent.js';
import { CheckPool } from '../../src/store/postgres/check-pool.js';
import { ingestSessions, storedStates, type IngestOutcome } from '../../src/store/postgres/ingest.js';
import type { CheckTask, StoredState } from '../../src/store/postgres/ingest-check.js';
import type * as WorkerThread from '../../src/worker-thread.js';
import { auraJson } from '../helpers/cli.js';
import { REPO } from '../helpers/fixtures.js';
import { client, dropRoles, roleName, tempDatabase } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp.js';

/** The workers the pools start, so a test can hold this thread at a chosen moment of one. */
const started: Worker[] = [];
vi.mock('../../src/worker-thread.js', async (original) => {
  const real = await original<typeof WorkerThread>();
  return { ...real, startModuleWorker: (...args: Parameters<typeof real.startModuleWorker>) => started[started.push(real.startModuleWorker(...args)) - 1] };
});

const WORKER = pathToFileURL(path.join(REPO, 'dist', 'store', 'postgres', 'check-worker.js'));
const ingestRole = roleName('ingest');
const readerRole = roleName('reader');
afterAll(() => dropRoles([ingestRole, readerRole]), 60_000);

/** A worker script that runs `before` on each message ahead of the real worker's own listener. */
function workerWith(before: string): URL {
  const dir = tempDir('aura-worker-');
  // Imported first, so the real worker's listener is wrapped as it is added.
  fs.writeFileSync(
    path.join(dir, 'before.mjs'),
    `import { parentPort } from 'node:worker_threads';\nconst on = parentPort.on.bind(parentPort);\nparentPort.on = (event, listener) => on(event, (message) => { const { id, task } = message; ${before}\n listener(message); });\n`,
  );
  fs.writeFileSync(path.join(dir, 'worker.mjs'), `import './before.mjs';\nimport ${JSON.stringify(WORKER.href)};\n`);
  return pathToFileURL(path.join(dir, 'worker.mjs'));
}

async function sessions(count: number): Promise<{ home: string; ids: string[] }> {
  const home = tempDir('aura-fleet-workers-');
  const ag = agent('acme/workers', { home });
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const session = ag.session({ fsync: 'none' });
    for (let j = 0; j < 10; j++) session.emit('tool.call', { tool: 'search', args: { q: `query ${i}.${j}` } });
    ids.push((await session.close()).session_id);
  }
  return { home, ids };
}

function tasksOf(home: string, ids: readonly string[], stored: ReadonlyMap<string, StoredState>): CheckTask[] {
  return ids.map((id) => ({
    sessionId: id,
    host: 'workers',
    trail: fs.readFileSync(path.join(home, 'sessions', `${id}.jsonl`)),
    summary: fs.readFileSync(path.join(home, 'sessions', `${id}.summary.json`)),
    sealEntry: null,
    sealPlace: null,
    logRead: false,
    anchor: {},
    closed: true,
    stored: stored.get(id) ?? null,
  }));
}

async function initialized(): Promise<string> {
  const url = await tempDatabase();
  const init = auraJson(['store', 'init', '--store', url, '--ingest-role', ingestRole, '--reader-role', readerRole]);
  expect(init.status, init.stderr).toBe(0);
  return url;
}

/** Ingests with `pool` (closed afterwards); resolves with each session's outcome. */
async function ingest(url: string, pool: CheckPool, home: string, ids: readonly string[]): Promise<Map<string, IngestOutcome>> {
  const sql = client(url);
  const outcomes = new Map<string, IngestOutcome>();
  try {
    await ingestSessions(sql, 'test store', pool, tasksOf(home, ids, await storedStates(sql, ids)), (id, outcome) => outcomes.set(id, outcome));
    return outcomes;
  } finally {
    await pool.close();
  }
}

/** Every stored session has its close record and all its lines: nothing half. */
async function nothingHalf(url: string): Promise<number> {
  const sql = client(url);
  expect(await sql`SELECT s.session_id FROM aura.sessions s LEFT JOIN aura.closes c USING (session_id) WHERE c.session_id IS NULL`).toEqual([]);
  expect(await sql`SELECT c.session_id FROM aura.closes c WHERE c.lines <> (SELECT count(*) FROM aura.lines l WHERE l.session_id = c.session_id)`).toEqual([]);
  return ((await sql`SELECT count(*)::int AS n FROM aura.sessions`)[0] as { n: number }).n;
}

describe('checking sessions on worker threads', () => {
  it('stops on a worker that dies, naming the session it held, with nothing half-stored; a push run again stores all', async () => {
    const url = await initialized();
    const { home, ids } = await sessions(6);
    const victim = ids[3] as string;
    const dying = new CheckPool({ publicKeys: [], keysOrigin: 'test', size: 2, script: workerWith(`if (task.sessionId === ${JSON.stringify(victim)}) throw new Error('worker broke');`) });
    const failed = ingest(url, dying, home, ids);
    await expect(failed).rejects.toBeInstanceOf(CheckFailedError);
    await expect(failed).rejects.toMatchObject({ code: 'CHECK_FAILED', data: { session_id: victim }, message: expect.stringMatching(/died \(worker broke\).*nothing of it was stored/) });
    expect(await nothingHalf(url)).toBeLessThan(ids.length);
    const outcomes = await ingest(url, new CheckPool({ publicKeys: [], keysOrigin: 'test', script: WORKER }), home, ids);
    expect([...outcomes.values()].every((o) => o.outcome === 'stored' || o.outcome === 'present')).toBe(true);
    expect(outcomes.get(victim)).toMatchObject({ outcome: 'stored', status: 'intact' });
    expect(await nothingHalf(url)).toBe(ids.length);
    expect(auraJson(['verify', 'store', '--store', url]).json).toMatchObject({ ok: true, counts: { intact: ids.length } });
  });

  it('names the session a dying worker held, though its error overtakes the answer it sent before', async () => {
    const { home, ids } = await sessions(2);
    const victim = ids[1] as string;
    const pool = new CheckPool({ publicKeys: [], keysOrigin: 'test', size: 1, script: workerWith(`if (task.sessionId === ${JSON.stringify(victim)}) throw new Error('worker broke');`) });
    const [first, second] = tasksOf(home, ids, new Map()).map((task) => pool.check(task));
    // The worker's 'online' comes on the port its error comes on: this thread, held while that
    // port's messages are taken, takes the error before the answer the worker sent first.
    (started.at(-1) as Worker).once('online', () => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1000));
    try {
      const [answered, died] = await Promise.allSettled([first, second]);
      expect(answered).toMatchObject({ status: 'fulfilled', value: { outcome: 'ready', write: { sessionId: ids[0] } } });
      expect(died).toMatchObject({ status: 'rejected', reason: { code: 'CHECK_FAILED', data: { session_id: victim }, message: expect.stringMatching(/died \(worker broke\)/) } });
    } finally {
      await pool.close();
    }
  });

  it('fails the session whose check throws, and the worker goes on checking the next ones', async () => {
    const { home, ids } = await sessions(3);
    const victim = ids[1] as string;
    const pool = new CheckPool({
      publicKeys: [],
      keysOrigin: 'test',
      size: 1,
      // What the worker answers when the check throws, instead of the check.
      script: workerWith(`if (task.sessionId === ${JSON.stringify(victim)}) return parentPort.postMessage({ id, error: 'Error: the check broke\\n    at check' });`),
    });
    try {
      const [first, second, third] = tasksOf(home, ids, new Map()).map((task) => pool.check(task));
      await expect(first).resolves.toMatchObject({ outcome: 'ready', write: { sessionId: ids[0], status: 'intact' } });
      await expect(second).rejects.toMatchObject({ code: 'CHECK_FAILED', data: { session_id: victim }, message: expect.stringMatching(/its check threw \(Error: the check broke\)/) });
      await expect(third).resolves.toMatchObject({ outcome: 'ready', write: { sessionId: ids[2] } });
    } finally {
      await pool.close();
    }
  });
});
