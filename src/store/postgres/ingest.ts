/**
 * Ingest: one session into the fleet store, checked on the way in and stored whole or not at all.
 *
 * Each call is one transaction: the session's row (first time), its new lines (binary COPY), its
 * close record (summary, seal-log entry, digests) when it is closed, the check of its status and
 * the detector's findings. A push killed at any point leaves the last committed state, and the
 * next push goes on from there. Two pushers of one session never interleave: the first to commit
 * wins, the other finds the session stored and compares.
 *
 * Nothing is ever overwritten: bytes that differ from what the store holds under the same id are
 * refused, the refusal recorded, and the stored session kept.
 */

import { createHash } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import type { Finding } from '../../audit/detector.js';
import { sessionReport } from '../../audit/session-report.js';
import { sessionKeyOf } from '../../session/ids.js';
import type { KeyRing } from '../../spine/signing.js';
import { linesOfBytes } from '../../spine/trail-lines.js';
import type { SealLogEntry, SealLogPlace } from '../seal-log.js';
import { alonePlace, storedStatus, type StoredStatus } from './stored-status.js';
import { STORE_KINDS } from '../store-findings.js';
import type { SessionMaterial } from '../material.js';
import { binaryCopy, type CopyValue } from './copy-binary.js';
import { storeError, transaction, type Sql, type Tx } from './connection.js';

/** A session as a host ships it. */
export interface SessionBundle {
  readonly sessionId: string;
  readonly host: string;
  /** Its lines, each with its newline when it had one: every line when closed, every complete one when open. */
  readonly lines: readonly Buffer[];
  readonly summary: Buffer | null;
  /** Its entry of the host's seal log, parsed and as the log holds it. */
  readonly sealEntry: { readonly entry: SealLogEntry; readonly raw: Buffer } | null;
  /** Where the entry stands in the host's log (signing), as the host's log says; re-checked by `verify store --store`. */
  readonly sealPlace?: SealLogPlace | null;
  /** Closed (its writer is gone): stored with its close record. Open: its lines so far. */
  readonly closed: boolean;
}

/** What the store already holds of a session. */
export interface StoredState {
  /** Lines stored, and the digest of those lines as checked at ingest. */
  readonly lines: number;
  readonly trailSha256: string | null;
  /** The close record's digests, when the session is stored closed. */
  readonly closed: { readonly trailSha256: string; readonly summarySha256: string | null } | null;
}

/** Why a session was refused. */
export type RefusalReason = 'forged_id' | 'conflict';

/** What ingesting a session did. */
export type IngestOutcome =
  | { readonly outcome: 'stored'; readonly lines: number; readonly added: number; readonly status: StoredStatus['status'] }
  | { readonly outcome: 'present' }
  | { readonly outcome: 'refused'; readonly reason: RefusalReason; readonly message: string };

const CHUNK = 500;

/** What the store holds of each of `ids` (absent: nothing). */
export async function storedStates(sql: Sql, ids: readonly string[]): Promise<Map<string, StoredState>> {
  const states = new Map<string, StoredState>();
  for (let i = 0; i < ids.length; i += CHUNK) {
    const rows = await sql<{ session_id: string; closed_trail: string | null; closed_summary: string | null; lines: number | null; trail_sha256: string | null }[]>`
      SELECT s.session_id, c.trail_sha256 AS closed_trail, c.summary_sha256 AS closed_summary, k.lines, k.trail_sha256
      FROM aura.sessions s
      LEFT JOIN aura.closes c USING (session_id)
      LEFT JOIN LATERAL (SELECT lines, trail_sha256 FROM aura.checks WHERE session_id = s.session_id ORDER BY id DESC LIMIT 1) k ON true
      WHERE s.session_id = ANY(${ids.slice(i, i + CHUNK) as string[]})`;
    for (const row of rows) {
      states.set(row.session_id, {
        lines: row.lines ?? 0,
        trailSha256: row.trail_sha256,
        closed: row.closed_trail === null ? null : { trailSha256: row.closed_trail, summarySha256: row.closed_summary },
      });
    }
  }
  return states;
}

/** SHA-256 hex of some buffers, as one. */
export function digestOf(parts: readonly Buffer[]): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return hash.digest('hex');
}

/** Thrown inside a transaction when the store moved under it: the work is rolled back and redone. */
class Moved extends Error {}

/** A session checked and ready to be written. */
interface Prepared {
  readonly bundle: SessionBundle;
  readonly from: number;
  readonly fresh: boolean;
  readonly trailSha256: string;
  readonly summarySha256: string | null;
  readonly check: StoredStatus;
  readonly report: { readonly verdict: string | null; readonly agentRef: string | null; readonly sessionKey: string | null; readonly findings: Finding[] };
}

/**
 * Ingests sessions against what the store holds of them (`stored`, from {@link storedStates}):
 * each is checked here, and those to write go in one transaction together, so a push of many
 * small sessions is not a few round trips a session. Should the store have moved meanwhile
 * (another pusher committed one of them), each is redone alone against what is there now.
 * @returns one outcome a bundle, in order
 * @throws StoreError when the store cannot be reached or a transaction fails (nothing of it was kept)
 */
export async function ingestSessions(sql: Sql, label: string, bundles: readonly SessionBundle[], keys: KeyRing | null, stored: ReadonlyMap<string, StoredState>): Promise<IngestOutcome[]> {
  try {
    return await ingestOnce(sql, bundles, keys, stored);
  } catch (error) {
    if (!raced(error)) throw storeError(label, error);
  }
  const outcomes: IngestOutcome[] = [];
  for (const bundle of bundles) {
    for (let attempt = 1; ; attempt++) {
      const now = await storedStates(sql, [bundle.sessionId]).catch((e: unknown) => Promise.reject(storeError(label, e)));
      try {
        outcomes.push(...(await ingestOnce(sql, [bundle], keys, now)));
        break;
      } catch (error) {
        if (!raced(error) || attempt === ATTEMPTS) throw storeError(label, error);
      }
    }
  }
  return outcomes;
}

const ATTEMPTS = 3;

function raced(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  // A unique key another pusher took first, or two batches that waited on each other.
  return error instanceof Moved || code === '23505' || code === '40P01';
}

async function ingestOnce(sql: Sql, bundles: readonly SessionBundle[], keys: KeyRing | null, stored: ReadonlyMap<string, StoredState>): Promise<IngestOutcome[]> {
  const outcomes: IngestOutcome[] = [];
  const ready: Prepared[] = [];
  const refused: { bundle: SessionBundle; reason: RefusalReason; message: string }[] = [];
  for (const bundle of bundles) {
    const decided = prepare(bundle, keys, stored.get(bundle.sessionId));
    if ('outcome' in decided) {
      if (decided.outcome === 'refused') refused.push({ bundle, reason: decided.reason, message: decided.message });
      outcomes.push(decided);
    } else {
      ready.push(decided);
      outcomes.push({ outcome: 'stored', lines: decided.bundle.lines.length, added: decided.bundle.lines.length - decided.from, status: decided.check.status });
    }
  }
  if (ready.length > 0) await transaction(sql, (tx) => write(tx, ready));
  // Recorded once the sessions beside them are in, so a batch redone does not record them twice.
  for (const r of refused) await refuse(sql, r.bundle, r.reason, r.message, digestOf(r.bundle.lines));
  return outcomes;
}

/** Decides what to do with a session, and checks it when it is to be written. */
function prepare(bundle: SessionBundle, keys: KeyRing | null, stored: StoredState | undefined): Prepared | Exclude<IngestOutcome, { outcome: 'stored' }> {
  const id = bundle.sessionId;
  const trailSha256 = digestOf(bundle.lines);
  const summarySha256 = bundle.summary === null ? null : digestOf([bundle.summary]);
  if (stored?.closed) {
    if (stored.closed.trailSha256 === trailSha256 && (!bundle.closed || stored.closed.summarySha256 === summarySha256)) return { outcome: 'present' };
    const what = stored.closed.trailSha256 === trailSha256 ? 'its summary differs from the stored one' : 'its trail differs from the stored one';
    return { outcome: 'refused', reason: 'conflict', message: `${what}; the store keeps the session it has` };
  }
  const from = stored?.lines ?? 0;
  if (from > 0) {
    if (from > bundle.lines.length || digestOf(bundle.lines.slice(0, from)) !== stored?.trailSha256) {
      return { outcome: 'refused', reason: 'conflict', message: `the store holds ${from} lines of it that differ from this host's; the store keeps the session it has` };
    }
    if (from === bundle.lines.length && !bundle.closed) return { outcome: 'present' };
  }
  const check = storedStatus({
    sessionId: id,
    lines: bundle.lines,
    summary: bundle.summary,
    sealPlace: bundle.sealPlace ?? alonePlace(bundle.sealEntry?.entry ?? null),
    keys,
    closed: bundle.closed,
  });
  if (check.foreignId !== null) return { outcome: 'refused', reason: 'forged_id', message: `pushed as ${id}, but it names ${check.foreignId}` };
  return { bundle, from, fresh: stored === undefined, trailSha256, summarySha256, check, report: reportOf(bundle, check) };
}

/** Writes checked sessions in one transaction: rows, lines (one COPY), close records, checks, findings. */
async function write(tx: Tx, ready: readonly Prepared[]): Promise<void> {
  const fresh = ready.filter((p) => p.fresh);
  if (fresh.length > 0) {
    const rows = fresh.map((p) => ({ session_id: p.bundle.sessionId, host: p.bundle.host, agent_ref: p.report.agentRef, opened_at: p.check.trail.events[0]?.timestamp ?? null, session_key: p.report.sessionKey }));
    const inserted = await tx`INSERT INTO aura.sessions ${tx(rows)} ON CONFLICT (session_id) DO NOTHING RETURNING session_id`;
    if (inserted.length !== fresh.length) throw new Moved();
  }
  const going = ready.filter((p) => !p.fresh);
  if (going.length > 0) {
    const counts = await tx<{ session_id: string; n: number }[]>`
      SELECT session_id, max(line_no)::int AS n FROM aura.lines WHERE session_id = ANY(${going.map((p) => p.bundle.sessionId)}) GROUP BY session_id`;
    const now = new Map(counts.map((row) => [row.session_id, row.n]));
    if (going.some((p) => (now.get(p.bundle.sessionId) ?? 0) !== p.from)) throw new Moved();
  }
  await copyLines(tx, ready);
  const closed = ready.filter((p) => p.bundle.closed);
  if (closed.length > 0) {
    const rows = closed.map((p) => {
      const entry = p.bundle.sealEntry;
      return {
        session_id: p.bundle.sessionId,
        lines: p.bundle.lines.length,
        trail_sha256: p.trailSha256,
        summary: p.bundle.summary,
        summary_sha256: p.summarySha256,
        seal_entry: entry?.raw ?? null,
        seal_hash: entry?.entry.hash ?? null,
        seal_prev_hash: entry?.entry.prev_hash ?? null,
        host: p.bundle.host,
      };
    });
    await tx`INSERT INTO aura.closes ${tx(rows)}`;
  }
  const checks = ready.map((p) => {
    const chain = p.check.chain;
    return {
      session_id: p.bundle.sessionId,
      lines: p.bundle.lines.length,
      closed: p.bundle.closed,
      trail_sha256: p.trailSha256,
      status: p.check.status,
      verdict: p.report.verdict,
      events: chain?.events ?? 0,
      hash_chain_valid: chain?.hash_chain_valid ?? false,
      complete: chain?.complete ?? false,
      reason: p.check.reason ?? chain?.reason ?? null,
      signatures: p.check.signatures,
      detail: tx.json(detailOf(p.check)),
    };
  });
  const ids = await tx<{ id: string; session_id: string }[]>`INSERT INTO aura.checks ${tx(checks)} RETURNING id, session_id`;
  const checkOf = new Map(ids.map((row) => [row.session_id, row.id]));
  const findings = ready.flatMap((p) =>
    p.report.findings.map((finding, ord) => ({
      check_id: checkOf.get(p.bundle.sessionId) as string,
      ord,
      session_id: p.bundle.sessionId,
      kind: finding.kind,
      severity: finding.severity,
      store_level: STORE_KINDS.has(finding.kind),
      finding: tx.json({ ...finding, session_id: p.bundle.sessionId } as Parameters<typeof tx.json>[0]),
    })),
  );
  // Parameters are capped at 65,535 a statement: seven a finding.
  for (let i = 0; i < findings.length; i += 5000) await tx`INSERT INTO aura.findings ${tx(findings.slice(i, i + 5000))}`;
}

/** The new lines of every session, with the fields queries need beside their bytes, by one binary COPY. */
async function copyLines(tx: Tx, ready: readonly Prepared[]): Promise<void> {
  const rows: CopyValue[][] = [];
  for (const { bundle, check, from } of ready) {
    for (let i = from; i < bundle.lines.length; i++) {
      const record = check.records[i] ?? null;
      rows.push([bundle.sessionId, i + 1, bundle.lines[i] as Buffer, text(record?.event_id), text(record?.kind), text(record?.timestamp), text(record?.prev_hash), text(record?.content_hash)]);
    }
  }
  if (rows.length === 0) return;
  const stream = await tx`COPY aura.lines (session_id, line_no, line, event_id, kind, ts, prev_hash, content_hash) FROM STDIN WITH (FORMAT binary)`.writable();
  await pipeline(Readable.from([binaryCopy(rows)]), stream);
}

function text(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

/** The verdict and findings of the detector on the checked trail, as `report show` gives them. */
function reportOf(bundle: SessionBundle, check: StoredStatus): Prepared['report'] {
  const material: SessionMaterial = {
    sessionId: bundle.sessionId,
    trailName: `${bundle.sessionId}.jsonl`,
    summaryName: `${bundle.sessionId}.summary.json`,
    lines: () => linesOfBytes(bundle.lines),
    summaryText: bundle.summary === null ? null : () => (bundle.summary as Buffer).toString('utf8'),
  };
  let findings: Finding[];
  let verdict: string | null = null;
  let agentRef: string | null = null;
  let sessionKey: string | null = null;
  try {
    const report = sessionReport(material, false, check);
    verdict = typeof report.summary.audit_report['verdict'] === 'string' ? report.summary.audit_report['verdict'] : null;
    agentRef = typeof report.summary['agent_ref'] === 'string' ? report.summary['agent_ref'] : null;
    // The key the session declared: `get_session_findings` takes it as a label for the session (SuperAuditor §7).
    sessionKey = sessionKeyOf(report.summary['session_key']);
    // An open session is simply not closed yet; a closed one without a summary is worth a look.
    findings = report.summary.audit_report.findings.filter((f) => bundle.closed || f.kind !== 'TRAIL_INCOMPLETE');
    if (bundle.closed && bundle.summary === null && check.chain?.complete === true) {
      findings.push({ kind: 'SUMMARY_MISSING', severity: 'warn', message: 'the trail is closed but has no summary', event_ids: [] });
    }
  } catch (error) {
    // A summary the reader refuses must not keep the session out: its findings say why (v1.1 §5.4).
    findings = [{ kind: 'CHECK_CRASHED', severity: 'warn', message: `reading ${bundle.sessionId} failed: ${error instanceof Error ? error.message : String(error)}`, event_ids: [], probe: 'store' }];
  }
  return { verdict, agentRef, sessionKey, findings };
}

function detailOf(check: StoredStatus): Record<string, string | number | boolean | null> {
  return {
    problem: check.message,
    seal_from: check.seal_from,
    key_id: check.chain?.signatures.key_id ?? null,
    checkpoints: check.chain?.signatures.checkpoints ?? 0,
    first_hash: check.chain?.first_hash ?? null,
    head_hash: check.chain?.head_hash ?? null,
    event_id: check.chain?.event_id ?? null,
    line: check.chain?.line ?? null,
  };
}

async function refuse(sql: Sql, bundle: SessionBundle, reason: RefusalReason, message: string, trailSha256: string): Promise<void> {
  await sql`INSERT INTO aura.refusals (session_id, host, reason, message, trail_sha256) VALUES (${bundle.sessionId}, ${bundle.host}, ${reason}, ${message}, ${trailSha256})`;
}
