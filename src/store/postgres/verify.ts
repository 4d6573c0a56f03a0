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
 * A session pushed from a folder whose seal log is anchored is judged with what the host's anchor
 * copy said of its seal at push, kept in its close record: the store cannot read the copy.
 *
 * Each session goes through the one status module the store uses at ingest (store/session-status.ts),
 * with its seal-log entry placed in its host's log as the store holds it (which entries are signed).
 */

import { summaryDisagreement } from '../../audit/session-report.js';
import { sessionPasses, statusCounts, type StoreStatus } from '../verify-store.js';
import type { KeyRing } from '../../spine/signing.js';
import { sealLogPlaces, type SealLogPlace } from '../seal-log.js';
import type { SignatureFacet, StatusReason } from '../session-status.js';
import { storeCall, type Sql } from './connection.js';
import { digestOf } from '../../spine/hash.js';
import { anchorOf, hostKeys, parseSealEntry, sealPlaceOf, storedLines, storedSessionMaterial, storedStatus, type AnchorColumns, type LogColumns } from './stored-status.js';

/** One session's verdict. */
export interface FleetSessionVerdict {
  readonly session_id: string;
  readonly host: string;
  readonly status: StoreStatus;
  /** The status recorded when it was pushed. */
  readonly recorded: string | null;
  readonly signatures?: SignatureFacet;
  readonly reason?: StatusReason | 'rows';
  readonly message?: string;
  readonly events?: number;
  /** How its stored summary disagrees with its stored lines (a verdict or findings edited), where its status passes: the store is then not verified. */
  readonly summary_mismatch?: string;
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

interface Head extends AnchorColumns, LogColumns {
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
}

/**
 * Verifies every stored session. `keys` are the verifier's trusted keys; with none, the keys the
 * hosts pushed are used (which shows a rewrite by someone without a host's key, not by the host).
 * @throws StoreError
 */
export async function verifyFleetStore(sql: Sql, label: string, keys: KeyRing | null, onProgress?: (done: number, total: number) => void): Promise<FleetStoreReport> {
  return storeCall(label, async () => {
    const ringOf = keys === null ? await hostKeys(sql, label) : () => keys;
    const heads = await sql<Head[]>`
      SELECT s.session_id, s.host, c.lines AS closed_lines, c.trail_sha256 AS closed_sha, c.summary, c.seal_entry, c.log_read, c.anchored, c.anchor_disagreement,
        k.lines AS checked_lines, k.trail_sha256 AS checked_sha, k.status AS recorded
      FROM aura.sessions s
      LEFT JOIN aura.closes c USING (session_id)
      LEFT JOIN LATERAL (SELECT lines, trail_sha256, status FROM aura.checks WHERE session_id = s.session_id ORDER BY id DESC LIMIT 1) k ON true`;
    const entries = new Map(heads.flatMap((head) => {
      const entry = parseSealEntry(head.seal_entry);
      return entry === null ? [] : [[head.session_id, entry] as const];
    }));
    const places = sealLogPlaces([...entries.values()]);
    const unread = new Map(heads.map((head) => [head.session_id, head]));
    const sessions: FleetSessionVerdict[] = [];
    const verdictOf = (head: Head, rows: readonly LineRow[]): FleetSessionVerdict => verdictOfSession(head, rows, ringOf(head.host), entries.has(head.session_id) ? (places.get(head.session_id) ?? null) : null);
    const done = (verdict: FleetSessionVerdict): void => {
      sessions.push(verdict);
      onProgress?.(sessions.length, heads.length);
    };
    const emit = (group: readonly LineRow[]): void => {
      const id = (group[0] as LineRow).session_id;
      const head = unread.get(id);
      unread.delete(id);
      if (head !== undefined) done(verdictOf(head, group));
      else done({ session_id: id, host: '-', recorded: null, status: 'damaged', reason: 'rows', message: 'line rows of a session the store has no record of (its session row was deleted)' });
    };
    // In the primary key's order, so the index is read as it is: each session's rows together, in
    // line order, one session in memory at a time. Another order (such as COLLATE "C" where the
    // database's differs) sorted every line of the store first.
    let group: LineRow[] = [];
    for await (const rows of sql<LineRow[]>`SELECT session_id, line_no, line, event_id, kind, ts FROM aura.lines ORDER BY session_id, line_no`.cursor(2000)) {
      for (const row of rows) {
        if (group.length > 0 && (group[0] as LineRow).session_id !== row.session_id) {
          emit(group);
          group = [];
        }
        group.push(row);
      }
    }
    if (group.length > 0) emit(group);
    for (const head of unread.values()) done(verdictOf(head, []));
    sessions.sort((a, b) => (a.session_id < b.session_id ? -1 : a.session_id > b.session_id ? 1 : 0));
    const gaps = await sql<SealGap[]>`
      SELECT c.session_id, c.host, c.seal_prev_hash AS prev_hash FROM aura.closes c
      WHERE c.seal_prev_hash IS NOT NULL AND NOT EXISTS (SELECT 1 FROM aura.closes p WHERE p.seal_hash = c.seal_prev_hash)
      ORDER BY c.session_id`;
    const [refused] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM aura.refusals`;
    const counts = statusCounts();
    for (const session of sessions) counts[session.status]++;
    return {
      store: label,
      keys_from: keys === null ? 'store' : 'given',
      sessions,
      counts,
      gaps: [...gaps],
      refusals: refused?.n ?? 0,
      ok: sessions.every(sessionPasses) && gaps.length === 0,
    };
  });
}

function verdictOfSession(head: Head, rows: readonly LineRow[], keys: KeyRing | null, place: SealLogPlace | null): FleetSessionVerdict {
  const base = { session_id: head.session_id, host: head.host, recorded: head.recorded };
  const closed = head.closed_lines !== null;
  const lines = storedLines(rows.map((row) => row.line), head.closed_lines ?? head.checked_lines);
  const check = storedStatus({ sessionId: head.session_id, lines, summary: head.summary, sealPlace: sealPlaceOf(head, place), keys, closed, ...anchorOf(head) });
  const reasoned = { ...(check.reason === null ? {} : { reason: check.reason }), ...(check.message === null ? {} : { message: check.message }) };
  if (lines === null) return { ...base, status: check.status, ...reasoned };
  const problems = rowProblems(head, rows);
  if (head.seal_entry !== null && place === null) problems.push('its seal-log entry is not an entry (edited)');
  rows.forEach((row, i) => {
    const record = check.records[i] ?? null;
    if (record === null) return;
    const beside: [string, unknown, string | null][] = [
      ['event_id', record.event_id, row.event_id],
      ['kind', record.kind, row.kind],
      ['ts', record.timestamp, row.ts],
    ];
    const wrong = beside.find(([, value, stored]) => (typeof value === 'string' ? value : null) !== stored);
    if (wrong !== undefined && problems.length < 5) problems.push(`line ${row.line_no}: its stored ${wrong[0]} disagrees with its bytes (edited beside the line)`);
  });
  const events = check.chain?.events ?? 0;
  const facts = { ...base, signatures: check.signatures, events };
  if (check.status === 'damaged') return { ...facts, status: 'damaged', reason: check.reason ?? 'rows', message: check.message ?? problems[0] ?? 'damaged' };
  if (problems.length > 0) return { ...facts, status: 'damaged', reason: 'rows', message: problems.join('; ') };
  const disagreement = summaryDisagreement(storedSessionMaterial(head.session_id, lines, head.summary), check);
  return { ...facts, status: check.status, ...reasoned, ...(disagreement === null ? {} : { summary_mismatch: disagreement }) };
}

/** The rows against the record of what was pushed: numbering, count and digest. */
function rowProblems(head: Head, rows: readonly LineRow[]): string[] {
  const problems: string[] = [];
  const missing = rows.findIndex((row, i) => row.line_no !== i + 1);
  if (missing >= 0) problems.push(`line row ${missing + 1} is missing (deleted, or renumbered)`);
  if (head.checked_lines === null && rows.length > 0) problems.push('it has line rows but no check, where every push records one beside its lines (its checks were deleted)');
  const expected = head.closed_lines ?? head.checked_lines;
  const sha = head.closed_sha ?? head.checked_sha;
  if (expected !== null && rows.length !== expected) problems.push(`it has ${rows.length} line rows where ${expected} were pushed`);
  else if (sha !== null && digestOf(rows.map((row) => row.line)) !== sha) problems.push('its line bytes differ from the ones pushed (edited)');
  return problems;
}
