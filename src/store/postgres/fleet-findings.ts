/**
 * The findings channel over the fleet store (DESIGN §6): the store-level probes of a fleet, then
 * each session's findings as the detector gave them at ingest, in session then detector order.
 *
 * Fleet probes: pushes the store refused (`PUSH_REFUSED`), seals whose host sealed an earlier
 * session the store does not hold (`PUSH_GAP`), and hosts that stopped pushing (`HOST_SILENT`).
 * Session findings were computed once, when the session was pushed, from the bytes stored; a
 * call reads them, trimmed per kind in the database to `limit + 1` (what the delivery seam needs
 * to observe capping), so a fleet of ten thousand sessions answers in one round trip.
 *
 * Rows changed since: a session none of whose lines are left (a superuser deleted them), or whose
 * first line names another session (rows copied or renamed; a push of such a session is refused),
 * is read off two small indexes at each call and checked again from its rows now, by the status
 * and the report ingest uses. Its store-level findings are then those of its rows now, as a
 * folder's are of its files: `TRAIL_MISSING` as for a sealed session deleted from a folder, and
 * `HASH_CHAIN_BROKEN` (or the seal's `TRAIL_TRUNCATED`) as for a trail copied under another id.
 * Other edits of single rows are `verify store --store`'s to find: it reads every byte.
 */

import type { Finding } from '../../audit/detector.js';
import { severityOf } from '../../audit/kinds.js';
import { statusFindings } from '../../audit/session-report.js';
import { STORE_KINDS } from '../store-findings.js';
import type { Sql } from './connection.js';
import { reportOf } from './ingest-check.js';
import { hostKeys, readStoredSession, storedLines, storedSessionStatus, storedStatus } from './stored-status.js';

/** What to find. */
export interface FleetFindingsQuery {
  /** Scopes session findings to the sessions this label names (their id, or the key they declared); store-level ones always cover the fleet. */
  readonly sessionKey: string | null;
  /** Findings a kind the caller will be given: `limit + 1` a kind are read. */
  readonly perKindLimit: number;
  /** A host whose last push is older than this is silent. */
  readonly silentAfterMs: number;
}

/** The fleet's findings, ready for the delivery seam; `label` names the store in messages. */
export async function fleetFindings(sql: Sql, label: string, query: FleetFindingsQuery): Promise<Finding[]> {
  const take = query.perKindLimit + 1;
  const [refusals, gaps, silent, changed, found] = await Promise.all([
    sql<{ session_id: string; host: string; reason: string; message: string; refused_at: Date }[]>`
      SELECT session_id, host, reason, message, refused_at FROM aura.refusals ORDER BY id DESC LIMIT ${take}`,
    sql<{ session_id: string; host: string; prev_hash: string }[]>`
      SELECT c.session_id, c.host, c.seal_prev_hash AS prev_hash FROM aura.closes c
      WHERE c.seal_prev_hash IS NOT NULL AND NOT EXISTS (SELECT 1 FROM aura.closes p WHERE p.seal_hash = c.seal_prev_hash)
      ORDER BY c.session_id COLLATE "C" LIMIT ${take}`,
    sql<{ host: string; last: Date }[]>`
      SELECT host, max(pushed_at) AS last FROM aura.pushes GROUP BY host
      HAVING max(pushed_at) < now() - make_interval(secs => ${query.silentAfterMs / 1000}) ORDER BY host LIMIT ${take}`,
    rowsChanged(sql, label),
    sessionFindings(sql, query, []),
  ]);
  // Rows changed since ingest are rare: only then is the read made again without those sessions' store-level findings.
  const sessions = changed.length === 0 ? found : await sessionFindings(sql, query, changed.map((session) => session.id));
  const fleet: Finding[] = [
    ...refusals.map((r) => ({
      kind: 'PUSH_REFUSED',
      severity: severityOf('PUSH_REFUSED'),
      message: `a push of ${r.session_id} from ${r.host} was refused (${r.reason}): ${r.message}`,
      event_ids: [],
      session_id: r.session_id,
      host: r.host,
      reason: r.reason,
      refused_at: r.refused_at.toISOString(),
    })),
    ...gaps.map((g) => ({
      kind: 'PUSH_GAP',
      severity: severityOf('PUSH_GAP'),
      message: `${g.host} sealed a session before ${g.session_id} (seal ${g.prev_hash.slice(0, 12)}…) that the store does not hold`,
      event_ids: [],
      session_id: g.session_id,
      host: g.host,
      missing_seal: g.prev_hash,
    })),
    ...silent.map((h) => ({
      kind: 'HOST_SILENT',
      severity: severityOf('HOST_SILENT'),
      message: `${h.host} last pushed at ${h.last.toISOString()}`,
      event_ids: [],
      host: h.host,
      last_push: h.last.toISOString(),
    })),
  ];
  // Each re-checked session's findings where its ingest store-level ones stood, ahead of its session ones.
  const bySession = [...changed.flatMap((session) => session.findings), ...sessions];
  bySession.sort((a, b) => (a.session_id < b.session_id ? -1 : a.session_id > b.session_id ? 1 : 0));
  return [...fleet, ...bySession];
}

/**
 * Per kind, the first `take` findings of the sessions' latest checks, read off the index on
 * (kind, session_id, ord): a loose index scan over the kinds, then `take` rows a kind, so the
 * cost follows the kinds and the limit, not the fleet (10,000 sessions, 50,000 findings: under a
 * millisecond, where a window over every finding took 400 ms). A kind is store-level or not as a
 * whole, so with a session key one branch or the other runs for each kind. The store-level
 * findings of the `rechecked` sessions are left out: theirs are those of their rows now.
 */
async function sessionFindings(sql: Sql, query: FleetFindingsQuery, rechecked: string[]): Promise<(Finding & { session_id: string })[]> {
  const take = query.perKindLimit + 1;
  const rows = await sql<{ finding: Finding & { session_id: string } }[]>`
    WITH RECURSIVE kinds AS (
      (SELECT kind, store_level FROM aura.findings ORDER BY kind LIMIT 1)
      UNION ALL
      SELECT n.kind, n.store_level FROM kinds k CROSS JOIN LATERAL (SELECT f.kind, f.store_level FROM aura.findings f WHERE f.kind > k.kind ORDER BY f.kind LIMIT 1) n
    )
    SELECT p.finding FROM kinds k CROSS JOIN LATERAL (
      (SELECT f.finding, f.session_id, f.ord FROM aura.findings f
        WHERE (${query.sessionKey}::text IS NULL OR k.store_level) AND f.kind = k.kind
          AND NOT (k.store_level AND f.session_id = ANY(${rechecked}::text[]))
          AND NOT EXISTS (SELECT 1 FROM aura.checks c WHERE c.session_id = f.session_id AND c.id > f.check_id)
        ORDER BY f.session_id COLLATE "C", f.ord LIMIT ${take})
      UNION ALL
      (SELECT f.finding, f.session_id, f.ord FROM aura.findings f
        WHERE ${query.sessionKey}::text IS NOT NULL AND NOT k.store_level AND f.kind = k.kind
          AND f.session_id COLLATE "C" IN (SELECT s.session_id FROM aura.sessions s WHERE s.session_id = ${query.sessionKey}::text OR s.session_key = ${query.sessionKey}::text)
          AND NOT EXISTS (SELECT 1 FROM aura.checks c WHERE c.session_id = f.session_id AND c.id > f.check_id)
        ORDER BY f.session_id COLLATE "C", f.ord LIMIT ${take})
    ) p
    ORDER BY p.session_id COLLATE "C", p.ord`;
  return rows.map((row) => row.finding);
}

/** A session checked again from its rows now, with its store-level findings. */
interface Rechecked {
  readonly id: string;
  readonly findings: readonly (Finding & { readonly session_id: string })[];
}

/**
 * The sessions whose rows changed since they were pushed, as far as the indexes of first lines
 * tell (schema version 4), each with the store-level findings of its rows now.
 */
async function rowsChanged(sql: Sql, label: string): Promise<Rechecked[]> {
  const [unfirst, naming] = await Promise.all([
    // Sessions without a first line (a merge of two indexes of a row a session), then, for those
    // few, whether any line is left and how many the store recorded as pushed.
    sql<{ session_id: string; closed_lines: number | null; checked_lines: number | null }[]>`
      WITH unfirst AS MATERIALIZED (
        SELECT s.session_id FROM aura.sessions s WHERE NOT EXISTS (SELECT 1 FROM aura.lines l WHERE l.session_id = s.session_id AND l.line_no = 1)
      )
      SELECT u.session_id,
        (SELECT c.lines FROM aura.closes c WHERE c.session_id = u.session_id) AS closed_lines,
        (SELECT k.lines FROM aura.checks k WHERE k.session_id = u.session_id ORDER BY k.id DESC LIMIT 1) AS checked_lines
      FROM unfirst u WHERE (SELECT 1 FROM aura.lines l WHERE l.session_id = u.session_id LIMIT 1) IS NULL
      ORDER BY u.session_id COLLATE "C"`,
    sql<{ session_id: string }[]>`
      SELECT session_id FROM aura.lines WHERE line_no = 1 AND aura.line_session_id(line) <> session_id ORDER BY session_id COLLATE "C"`,
  ]);
  const missing = unfirst.flatMap((row): Rechecked[] => {
    const lines = storedLines([], row.closed_lines ?? row.checked_lines);
    if (lines !== null) return [];
    const status = storedStatus({ sessionId: row.session_id, lines, summary: null, sealPlace: null, keys: null, closed: row.closed_lines !== null });
    return [{ id: row.session_id, findings: statusFindings(status).map((f) => ({ ...f, session_id: row.session_id })) }];
  });
  if (naming.length === 0) return missing;
  const keys = await hostKeys(sql, label);
  const renamed = await Promise.all(naming.map(async ({ session_id: id }): Promise<Rechecked | null> => {
    const stored = await readStoredSession(sql, id);
    if (stored === null) return null;
    const status = await storedSessionStatus(sql, stored, keys(stored.host));
    const findings = status.trail === null ? statusFindings(status) : reportOf(id, stored.lines, stored.summary, stored.closed !== null, status).findings.filter((f) => STORE_KINDS.has(f.kind));
    return { id, findings: findings.map((f) => ({ ...f, session_id: id })) };
  }));
  return [...missing, ...renamed.filter((session) => session !== null)];
}

/** The sessions a `session_key` names: the one with that id, and every one that declared it. */
export async function sessionsNamed(sql: Sql, label: string): Promise<string[]> {
  const rows = await sql<{ session_id: string }[]>`
    SELECT session_id FROM aura.sessions WHERE session_id = ${label} OR session_key = ${label} ORDER BY session_id COLLATE "C"`;
  return rows.map((row) => row.session_id);
}
