/**
 * `aura verify store --store URL`: every session of the fleet store re-checked from its stored
 * bytes, as if a database superuser had had a go at the rows (the append-only trigger stops every
 * other role, not a superuser). What such a hand can do, and what catches it:
 *
 * - a line row edited: its content hash fails, and the digest recorded at ingest differs;
 * - a line row deleted: a gap in `line_no`, a broken link, fewer lines than the close record or
 *   the seal says;
 * - rows reordered (their `line_no` swapped): the links break (`deleted_or_reordered`);
 * - a field beside the bytes edited (`kind`, `event_id`, …): it no longer matches the bytes;
 * - a whole session deleted: the next seal of its host links to a seal the store lacks (a gap);
 * - a chain rewritten and rehashed: its seal, the seal-log entry and their signatures.
 *
 * Each session goes through the one status check the store uses at ingest (store/session-check.ts).
 */

import type { StoreStatus } from '../verify-store.js';
import type { ChainFailureReason } from '../../errors.js';
import { KeyRing } from '../../spine/signing.js';
import type { SealLogEntry } from '../seal-log.js';
import { checkSession } from '../session-check.js';
import { storeCall, type Sql } from './connection.js';
import { digestOf } from './ingest.js';
import { parseJsonStrict } from '../../spine/fast-record.js';

/** One session's verdict. */
export interface FleetSessionVerdict {
  readonly session_id: string;
  readonly host: string;
  readonly status: StoreStatus;
  /** The status recorded when it was pushed. */
  readonly recorded: string | null;
  readonly reason?: ChainFailureReason | 'missing_trail' | 'unsealed' | 'rows';
  readonly message?: string;
  readonly events?: number;
}

/** A host's seal that links to one the store does not hold. */
export interface SealGap {
  readonly session_id: string;
  readonly host: string;
  readonly prev_hash: string;
}

/** The verdict on the fleet store. */
export interface FleetStoreReport {
  readonly store: string;
  /** Whose keys signatures were checked against: the verifier's own, or the ones hosts pushed. */
  readonly keys_from: 'given' | 'store';
  readonly sessions: readonly FleetSessionVerdict[];
  readonly counts: Readonly<Record<StoreStatus, number>>;
  readonly gaps: readonly SealGap[];
  /** Pushes the store refused (kept apart: the stored sessions were kept). */
  readonly refusals: number;
  /** Nothing edited, nothing missing. */
  readonly ok: boolean;
}

interface Head {
  session_id: string;
  host: string;
  closed_lines: number | null;
  closed_sha: string | null;
  summary: Buffer | null;
  seal_entry: Buffer | null;
  checked_lines: number | null;
  checked_sha: string | null;
  recorded: string | null;
}

interface LineRow {
  session_id: string;
  line_no: number;
  line: Buffer;
  event_id: string | null;
  kind: string | null;
  ts: string | null;
  prev_hash: string | null;
  content_hash: string | null;
}

/**
 * Verifies every stored session. `keys` are the verifier's trusted keys; with none, the keys the
 * hosts pushed are used (which shows a rewrite by someone without a host's key, not by the host).
 * @throws StoreError
 */
export async function verifyFleetStore(sql: Sql, label: string, keys: KeyRing | null, onProgress?: (done: number, total: number) => void): Promise<FleetStoreReport> {
  return storeCall(label, async () => {
    const ring = keys ?? KeyRing.ofPublicKeyTexts((await sql<{ public_key: string }[]>`SELECT public_key FROM aura.host_keys`).map((r) => r.public_key), `${label}#host_keys`);
    const heads = await sql<Head[]>`
      SELECT s.session_id, s.host, c.lines AS closed_lines, c.trail_sha256 AS closed_sha, c.summary, c.seal_entry,
        k.lines AS checked_lines, k.trail_sha256 AS checked_sha, k.status AS recorded
      FROM aura.sessions s
      LEFT JOIN aura.closes c USING (session_id)
      LEFT JOIN LATERAL (SELECT lines, trail_sha256, status FROM aura.checks WHERE session_id = s.session_id ORDER BY id DESC LIMIT 1) k ON true
      ORDER BY s.session_id COLLATE "C"`;
    const sessions: FleetSessionVerdict[] = [];
    let at = 0;
    const done = (verdict: FleetSessionVerdict): void => {
      sessions.push(verdict);
      onProgress?.(sessions.length, heads.length);
    };
    // Heads and lines come in the same order, so one pass pairs them, one session in memory at a time.
    const emit = (group: readonly LineRow[]): void => {
      const id = (group[0] as LineRow).session_id;
      while (at < heads.length && (heads[at] as Head).session_id < id) done(verdictOf(heads[at++] as Head, [], ring));
      if (at < heads.length && (heads[at] as Head).session_id === id) done(verdictOf(heads[at++] as Head, group, ring));
      else done({ session_id: id, host: '-', recorded: null, status: 'damaged', reason: 'rows', message: 'line rows of a session the store has no record of (its session row was deleted)' });
    };
    let group: LineRow[] = [];
    for await (const rows of sql<LineRow[]>`SELECT session_id, line_no, line, event_id, kind, ts, prev_hash, content_hash FROM aura.lines ORDER BY session_id COLLATE "C", line_no`.cursor(2000)) {
      for (const row of rows) {
        if (group.length > 0 && (group[0] as LineRow).session_id !== row.session_id) {
          emit(group);
          group = [];
        }
        group.push(row);
      }
    }
    if (group.length > 0) emit(group);
    while (at < heads.length) done(verdictOf(heads[at++] as Head, [], ring));
    const gaps = await sql<SealGap[]>`
      SELECT c.session_id, c.host, c.seal_prev_hash AS prev_hash FROM aura.closes c
      WHERE c.seal_prev_hash IS NOT NULL AND NOT EXISTS (SELECT 1 FROM aura.closes p WHERE p.seal_hash = c.seal_prev_hash)
      ORDER BY c.session_id`;
    const [refused] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM aura.refusals`;
    const counts: Record<StoreStatus, number> = { verified: 0, open: 0, missing_trail: 0, damaged: 0, unsealed: 0 };
    for (const session of sessions) counts[session.status]++;
    return {
      store: label,
      keys_from: keys === null ? 'store' : 'given',
      sessions,
      counts,
      gaps: [...gaps],
      refusals: refused?.n ?? 0,
      ok: counts.damaged + counts.missing_trail + counts.unsealed === 0 && gaps.length === 0,
    };
  });
}

function verdictOf(head: Head, rows: readonly LineRow[], keys: KeyRing): FleetSessionVerdict {
  const base = { session_id: head.session_id, host: head.host, recorded: head.recorded };
  const closed = head.closed_lines !== null;
  if (rows.length === 0) {
    return { ...base, status: 'missing_trail', reason: 'missing_trail', message: 'the store holds no line of it (its rows were deleted)' };
  }
  const problems = rowProblems(head, rows);
  const lines = rows.map((row) => row.line);
  let sealEntry: SealLogEntry | null = null;
  if (head.seal_entry !== null) {
    try {
      sealEntry = parseJsonStrict(head.seal_entry.toString('utf8')) as SealLogEntry;
    } catch {
      problems.push('its seal-log entry is not JSON (edited)');
    }
  }
  const check = checkSession({ sessionId: head.session_id, lines, summaryText: head.summary?.toString('utf8') ?? null, sealEntry, keys, closed });
  rows.forEach((row, i) => {
    const record = check.records[i] ?? null;
    if (record === null) return;
    const beside: [string, unknown, string | null][] = [
      ['event_id', record.event_id, row.event_id],
      ['kind', record.kind, row.kind],
      ['ts', record.timestamp, row.ts],
      ['prev_hash', record.prev_hash, row.prev_hash],
      ['content_hash', record.content_hash, row.content_hash],
    ];
    const wrong = beside.find(([, value, stored]) => (typeof value === 'string' ? value : null) !== stored);
    if (wrong !== undefined && problems.length < 5) problems.push(`line ${row.line_no}: its stored ${wrong[0]} disagrees with its bytes (edited beside the line)`);
  });
  if (check.status === 'damaged') {
    return { ...base, status: 'damaged', events: check.chain.events, ...(check.chain.reason === undefined ? { reason: 'rows' as const } : { reason: check.chain.reason }), message: check.problem ?? problems[0] ?? 'damaged' };
  }
  if (problems.length > 0) return { ...base, status: 'damaged', events: check.chain.events, reason: 'rows', message: problems.join('; ') };
  return { ...base, status: check.status, events: check.chain.events, ...(check.problem === null ? {} : { reason: 'unsealed' as const, message: check.problem }) };
}

/** The rows against the record of what was pushed: numbering, count and digest. */
function rowProblems(head: Head, rows: readonly LineRow[]): string[] {
  const problems: string[] = [];
  const missing = rows.findIndex((row, i) => row.line_no !== i + 1);
  if (missing >= 0) problems.push(`line row ${missing + 1} is missing (deleted, or renumbered)`);
  const expected = head.closed_lines ?? head.checked_lines;
  const sha = head.closed_sha ?? head.checked_sha;
  if (expected !== null && rows.length !== expected) problems.push(`it has ${rows.length} line rows where ${expected} were pushed`);
  else if (sha !== null && digestOf(rows.map((row) => row.line)) !== sha) problems.push('its line bytes differ from the ones pushed (edited)');
  return problems;
}
