/**
 * Ingest: sessions into the fleet store, checked on the way in and each stored whole or not at all.
 *
 * The sessions are checked on a pool of worker threads (check-pool.ts, ingest-check.ts), in order,
 * a few batches ahead; each batch of checked sessions is one transaction: their rows (first time),
 * their new lines (one binary COPY), their close records (summary, seal-log entry, digests) when
 * closed, their checks and the detector's findings. While one batch is written, the next ones are
 * checked. A push killed at any point leaves the last committed state, and the next push goes on
 * from there. Two pushers of one session never interleave: the first to commit wins, the other
 * finds the session stored and compares.
 *
 * Nothing is ever overwritten: bytes that differ from what the store holds under the same id are
 * refused, the refusal recorded, and the stored session kept.
 */

import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import type { CheckPool } from './check-pool.js';
import { COPY_HEADER, COPY_TRAILER } from './copy-binary.js';
import { storeError, transaction, type Sql, type Tx } from './connection.js';
import type { Checked, CheckTask, RefusalReason, SessionWrite, StoredState } from './ingest-check.js';

/** What ingesting a session did. */
export type IngestOutcome =
  | { readonly outcome: 'stored'; readonly lines: number; readonly added: number; readonly status: SessionWrite['status'] }
  | { readonly outcome: 'present' }
  | { readonly outcome: 'refused'; readonly reason: RefusalReason; readonly message: string };

const CHUNK = 500;

/** What the store holds of each of `ids` (absent: nothing). */
export async function storedStates(sql: Sql, ids: readonly string[]): Promise<Map<string, StoredState>> {
  const states = new Map<string, StoredState>();
  for (let i = 0; i < ids.length; i += CHUNK) {
    const rows = await sql<{ session_id: string; host: string; closed_trail: string | null; closed_summary: string | null; lines: number | null; trail_sha256: string | null }[]>`
      SELECT s.session_id, s.host, c.trail_sha256 AS closed_trail, c.summary_sha256 AS closed_summary, k.lines, k.trail_sha256
      FROM aura.sessions s
      LEFT JOIN aura.closes c USING (session_id)
      LEFT JOIN LATERAL (SELECT lines, trail_sha256 FROM aura.checks WHERE session_id = s.session_id ORDER BY id DESC LIMIT 1) k ON true
      WHERE s.session_id = ANY(${ids.slice(i, i + CHUNK) as string[]})`;
    for (const row of rows) {
      states.set(row.session_id, {
        host: row.host,
        lines: row.lines ?? 0,
        trailSha256: row.trail_sha256,
        closed: row.closed_trail === null ? null : { trailSha256: row.closed_trail, summarySha256: row.closed_summary },
      });
    }
  }
  return states;
}

// A batch is one transaction: up to this many sessions, or this many bytes of trail.
const BATCH_SESSIONS = 100;
const BATCH_BYTES = 8 * 1024 * 1024;
// Sessions handed to the pool ahead of the batch being written: enough to keep every worker busy
// through a commit, few enough that memory stays a few batches.
const AHEAD_BYTES = 3 * BATCH_BYTES;

/** A session on its way: its task, and its check under way. */
interface InFlight {
  readonly task: CheckTask;
  readonly checked: Promise<Checked>;
}

/**
 * Ingests sessions in order: each is checked on `pool` against what the store held of it (its
 * task's `stored`), and those to write go in batches, one transaction each, so a push of many
 * small sessions is not a few round trips a session. Should the store have moved meanwhile
 * (another pusher committed one of them), each of the batch is redone alone against what is there
 * now. `done` hears of each session once its outcome holds (stored ones once committed).
 * @throws StoreError when the store cannot be reached or a transaction fails (nothing of that
 *   transaction was kept); CheckFailedError when a session could not be checked
 */
export async function ingestSessions(sql: Sql, label: string, pool: CheckPool, tasks: Iterable<CheckTask>, done: (sessionId: string, outcome: IngestOutcome) => void): Promise<void> {
  const source = tasks[Symbol.iterator]();
  const ahead: InFlight[] = [];
  let aheadBytes = 0;
  let exhausted = false;
  const refill = (): void => {
    while (!exhausted && aheadBytes < AHEAD_BYTES) {
      const next = source.next();
      if (next.done === true) exhausted = true;
      else {
        const checked = pool.check(next.value);
        // Failures are taken when the batch is; until then they must not count as unhandled.
        checked.catch(() => undefined);
        ahead.push({ task: next.value, checked });
        aheadBytes += next.value.trail.length;
      }
    }
  };
  let writing: Promise<void> = Promise.resolve();
  try {
    refill();
    while (ahead.length > 0) {
      const batch: InFlight[] = [];
      let bytes = 0;
      while (ahead.length > 0 && (batch.length === 0 || (batch.length < BATCH_SESSIONS && bytes + (ahead[0] as InFlight).task.trail.length <= BATCH_BYTES))) {
        const item = ahead.shift() as InFlight;
        batch.push(item);
        bytes += item.task.trail.length;
      }
      aheadBytes -= bytes;
      refill();
      const checked = await Promise.all(batch.map((item) => item.checked));
      await writing;
      writing = writeBatch(sql, label, pool, batch.map((item) => item.task), checked, done);
      writing.catch(() => undefined);
    }
  } finally {
    // A batch being written finishes (committed or rolled back) before the push says how it ended.
    await writing.catch(() => undefined);
  }
  await writing;
}

/** Writes a checked batch, records its refusals, and tells of each session. */
async function writeBatch(sql: Sql, label: string, pool: CheckPool, tasks: readonly CheckTask[], checked: readonly Checked[], done: (sessionId: string, outcome: IngestOutcome) => void): Promise<void> {
  const writes = checked.flatMap((c) => (c.outcome === 'ready' ? [c.write] : []));
  try {
    if (writes.length > 0) await transaction(sql, (tx) => write(tx, writes));
  } catch (error) {
    if (!raced(error)) throw storeError(label, error);
    for (let i = 0; i < tasks.length; i++) {
      const task = tasks[i] as CheckTask;
      const outcome = checked[i] as Checked;
      if (outcome.outcome === 'ready') done(task.sessionId, await writeAlone(sql, label, pool, task));
      else await settled(sql, label, task, outcome, done);
    }
    return;
  }
  for (let i = 0; i < tasks.length; i++) await settled(sql, label, tasks[i] as CheckTask, checked[i] as Checked, done);
}

/** Tells of a session of a committed batch; a refusal is recorded once the sessions beside it are in, so a batch redone does not record it twice. */
async function settled(sql: Sql, label: string, task: CheckTask, checked: Checked, done: (sessionId: string, outcome: IngestOutcome) => void): Promise<void> {
  if (checked.outcome === 'refused') {
    await sql`INSERT INTO aura.refusals (session_id, host, reason, message, trail_sha256) VALUES (${task.sessionId}, ${task.host}, ${checked.reason}, ${checked.message}, ${checked.trailSha256})`.catch((error: unknown) => Promise.reject(storeError(label, error)));
    done(task.sessionId, { outcome: 'refused', reason: checked.reason, message: checked.message });
  } else if (checked.outcome === 'present') {
    done(task.sessionId, { outcome: 'present' });
  } else {
    done(task.sessionId, storedOutcome(checked.write));
  }
}

const ATTEMPTS = 3;

/** A session whose batch raced another pusher: checked again against what the store holds now, and written alone. */
async function writeAlone(sql: Sql, label: string, pool: CheckPool, task: CheckTask): Promise<IngestOutcome> {
  for (let attempt = 1; ; attempt++) {
    const now = await storedStates(sql, [task.sessionId]).catch((error: unknown) => Promise.reject(storeError(label, error)));
    const again = { ...task, stored: now.get(task.sessionId) ?? null };
    const checked = await pool.check(again);
    if (checked.outcome !== 'ready') {
      let outcome: IngestOutcome | undefined;
      await settled(sql, label, again, checked, (_, o) => (outcome = o));
      return outcome as IngestOutcome;
    }
    try {
      await transaction(sql, (tx) => write(tx, [checked.write]));
      return storedOutcome(checked.write);
    } catch (error) {
      if (!raced(error) || attempt === ATTEMPTS) throw storeError(label, error);
    }
  }
}

function storedOutcome(write: SessionWrite): IngestOutcome {
  return { outcome: 'stored', lines: write.lines, added: write.lines - write.from, status: write.status };
}

/** Thrown inside a transaction when the store moved under it: the work is rolled back and redone. */
class Moved extends Error {}

function raced(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  // A unique key another pusher took first, or two batches that waited on each other.
  return error instanceof Moved || code === '23505' || code === '40P01';
}

/** Writes checked sessions in one transaction: rows, lines (one COPY), close records, checks, findings. */
async function write(tx: Tx, writes: readonly SessionWrite[]): Promise<void> {
  const fresh = writes.flatMap((w) => (w.session === null ? [] : [w.session]));
  if (fresh.length > 0) {
    const inserted = await tx`INSERT INTO aura.sessions ${tx(fresh)} ON CONFLICT (session_id) DO NOTHING RETURNING session_id`;
    if (inserted.length !== fresh.length) throw new Moved();
  }
  const going = writes.filter((w) => w.session === null);
  if (going.length > 0) {
    const counts = await tx<{ session_id: string; n: number }[]>`
      SELECT session_id, max(line_no)::int AS n FROM aura.lines WHERE session_id = ANY(${going.map((w) => w.sessionId)}) GROUP BY session_id`;
    const now = new Map(counts.map((row) => [row.session_id, row.n]));
    if (going.some((w) => (now.get(w.sessionId) ?? 0) !== w.from)) throw new Moved();
  }
  if (writes.some((w) => w.copy.length > 0)) {
    const stream = await tx`COPY aura.lines (session_id, line_no, line, event_id, kind, ts) FROM STDIN WITH (FORMAT binary)`.writable();
    await pipeline(Readable.from([COPY_HEADER, ...writes.map((w) => w.copy), COPY_TRAILER]), stream);
  }
  const closes = writes.flatMap((w) => (w.close === null ? [] : [w.close]));
  if (closes.length > 0) await tx`INSERT INTO aura.closes ${tx(closes)}`;
  const checks = writes.map((w) => ({ ...w.check, detail: tx.json(w.check.detail) }));
  const ids = await tx<{ id: string; session_id: string }[]>`INSERT INTO aura.checks ${tx(checks)} RETURNING id, session_id`;
  const checkOf = new Map(ids.map((row) => [row.session_id, row.id]));
  const findings = writes.flatMap((w) => w.findings.map((f) => ({ check_id: checkOf.get(w.sessionId) as string, ...f, finding: tx.json(f.finding as Parameters<typeof tx.json>[0]) })));
  // Parameters are capped at 65,535 a statement: seven a finding.
  for (let i = 0; i < findings.length; i += 5000) await tx`INSERT INTO aura.findings ${tx(findings.slice(i, i + 5000))}`;
}
