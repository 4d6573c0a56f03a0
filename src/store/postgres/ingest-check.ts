/**
 * The check of one session on its way into the fleet store, and the rows that store it. It runs in
 * a worker thread (check-worker.ts), so the sessions of a push are checked on every core while the
 * main thread streams the ones already checked into the store; it needs nothing but the session's
 * bytes and what the store held of it when the push began.
 *
 * The status comes from the one status module (stored-status.ts over store/session-status.ts), as
 * `verify store --store` and every reader decide it. The line rows are encoded from the records
 * that check read: each line is parsed once.
 */

import { storeCrash, type Finding } from '../../audit/detector.js';
import { sessionReport } from '../../audit/session-report.js';
import { sessionKeyOf } from '../../session/ids.js';
import { digestOf } from '../../spine/hash.js';
import type { KeyRing } from '../../spine/signing.js';
import type { SealLogEntry, SealLogPlace } from '../seal-log.js';
import { STORE_KINDS } from '../store-findings.js';
import { CopyRows } from './copy-binary.js';
import { alonePlace, sealPlaceOf, storedSessionMaterial, storedStatus, type StoredMaterial, type StoredStatus } from './stored-status.js';

/** What the store already holds of a session. */
export interface StoredState {
  /** The host that pushed it first: only that host pushes it on. */
  readonly host: string;
  /** Lines stored, and the digest of those lines as checked at ingest. */
  readonly lines: number;
  readonly trailSha256: string | null;
  /** The close record's digests, when the session is stored closed. */
  readonly closed: { readonly trailSha256: string; readonly summarySha256: string | null } | null;
}

/** Why a session was refused. */
export type RefusalReason = 'forged_id' | 'conflict';

/** A session as a host ships it, with what the store held of it. */
export interface CheckTask {
  readonly sessionId: string;
  readonly host: string;
  /** The trail's bytes: all of them when closed, up to its last complete line when open. */
  readonly trail: Uint8Array;
  readonly summary: Uint8Array | null;
  /** Its entry of the host's seal log, parsed and as the log holds it. */
  readonly sealEntry: { readonly entry: SealLogEntry; readonly raw: Uint8Array } | null;
  /** Where the entry stands in the host's log (signing), as the host's log says; re-checked by `verify store --store`. */
  readonly sealPlace: SealLogPlace | null;
  /** The host's seal log was read for it (a closed one's, at push): an entry it lacks is known to be absent. Kept in its close record. */
  readonly logRead: boolean;
  /** What the host's anchor copy of its seal log says of its seal, when closed and the log has a copy; kept in its close record. */
  readonly anchor: Pick<StoredMaterial, 'anchorDisagreement'>;
  /** Closed (its writer is gone): stored with its close record. Open: its lines so far. */
  readonly closed: boolean;
  /** What the store held of it, or null for nothing. */
  readonly stored: StoredState | null;
}

/** What the check decided. */
export type Checked =
  | { readonly outcome: 'present' }
  | { readonly outcome: 'refused'; readonly reason: RefusalReason; readonly message: string; readonly trailSha256: string }
  | { readonly outcome: 'ready'; readonly write: SessionWrite };

/** A checked session as the rows that store it (column names as the schema's). */
export interface SessionWrite {
  readonly sessionId: string;
  readonly closed: boolean;
  /** Lines the store held of it before (the new ones are numbered from `from + 1`). */
  readonly from: number;
  readonly lines: number;
  readonly status: StoredStatus['status'];
  /** Its row in `aura.sessions`, when the store has none yet. */
  readonly session: { readonly session_id: string; readonly host: string; readonly agent_ref: string | null; readonly opened_at: string | null; readonly session_key: string | null } | null;
  /** Its new lines as binary COPY rows of `aura.lines`, without header and trailer. */
  readonly copy: Uint8Array;
  readonly close: Readonly<Record<string, string | number | boolean | Uint8Array | null>> | null;
  /** Its row in `aura.checks`, `detail` to be stored as JSON. */
  readonly check: {
    readonly session_id: string;
    readonly lines: number;
    readonly closed: boolean;
    readonly trail_sha256: string;
    readonly status: string;
    readonly verdict: string | null;
    readonly events: number;
    readonly hash_chain_valid: boolean;
    readonly complete: boolean;
    readonly reason: string | null;
    readonly signatures: string;
    readonly detail: Readonly<Record<string, string | number | boolean | null>>;
  };
  /** Its findings' rows in `aura.findings`, but for the id of the check they belong to. */
  readonly findings: readonly { readonly ord: number; readonly session_id: string; readonly kind: string; readonly severity: string; readonly store_level: boolean; readonly finding: Finding & { readonly session_id: string } }[];
}

/** The lines of a file's bytes, each with its newline when it has one (views, not copies). */
export function splitLines(bytes: Buffer): Buffer[] {
  const lines: Buffer[] = [];
  let start = 0;
  while (start < bytes.length) {
    const end = bytes.indexOf(0x0a, start);
    const stop = end < 0 ? bytes.length : end + 1;
    lines.push(bytes.subarray(start, stop));
    start = stop;
  }
  return lines;
}

/** Decides what to do with a session against what the store holds of it, and checks it when it is to be written. */
export function checkSession(task: CheckTask, keys: KeyRing | null): Checked {
  const id = task.sessionId;
  const trail = asBuffer(task.trail);
  const summary = task.summary === null ? null : asBuffer(task.summary);
  const lines = splitLines(trail);
  const trailSha256 = digestOf([trail]);
  const summarySha256 = summary === null ? null : digestOf([summary]);
  const stored = task.stored;
  if (stored?.closed) {
    if (stored.closed.trailSha256 === trailSha256 && (!task.closed || stored.closed.summarySha256 === summarySha256)) return { outcome: 'present' };
    const what = stored.closed.trailSha256 === trailSha256 ? 'its summary differs from the stored one' : 'its trail differs from the stored one';
    return { outcome: 'refused', reason: 'conflict', message: `${what}; the store keeps the session it has`, trailSha256 };
  }
  // Another host's copy (a session pulled, then pushed by its routine --all) would close a live
  // session in the store under the wrong host, and refuse its own host's close after.
  if (stored !== null && stored.host !== task.host) {
    return { outcome: 'refused', reason: 'conflict', message: `host ${stored.host} pushed it, not ${task.host}: a session is pushed by the host that wrote it; the store keeps what ${stored.host} pushed`, trailSha256 };
  }
  const from = stored?.lines ?? 0;
  if (from > 0) {
    if (from > lines.length || digestOf(lines.slice(0, from)) !== stored?.trailSha256) {
      return { outcome: 'refused', reason: 'conflict', message: `the store holds ${from} lines of it that differ from this host's; the store keeps the session it has`, trailSha256 };
    }
    if (from === lines.length && !task.closed) return { outcome: 'present' };
  }
  const entry = task.sealEntry;
  const logged = { seal_entry: entry?.raw ?? null, log_read: task.logRead };
  const check = storedStatus({ sessionId: id, lines, summary, sealPlace: sealPlaceOf(logged, task.sealPlace ?? alonePlace(entry?.entry ?? null)), keys, closed: task.closed, ...task.anchor });
  if (check.foreignId !== null) return { outcome: 'refused', reason: 'forged_id', message: `pushed as ${id}, but it names ${check.foreignId}`, trailSha256 };
  const report = reportOf(id, lines, summary, task.closed, check);
  const chain = check.chain;
  return {
    outcome: 'ready',
    write: storable({
      sessionId: id,
      closed: task.closed,
      from,
      lines: lines.length,
      status: check.status,
      session: stored === null ? { session_id: id, host: task.host, agent_ref: report.agentRef, opened_at: check.trail?.events[0]?.timestamp ?? null, session_key: report.sessionKey } : null,
      copy: lineRows(id, lines, from, check),
      close: task.closed
        ? {
            session_id: id,
            lines: lines.length,
            trail_sha256: trailSha256,
            summary,
            summary_sha256: summarySha256,
            ...logged,
            seal_hash: entry?.entry.hash ?? null,
            seal_prev_hash: entry?.entry.prev_hash ?? null,
            host: task.host,
            anchored: task.anchor.anchorDisagreement !== undefined,
            anchor_disagreement: task.anchor.anchorDisagreement ?? null,
          }
        : null,
      check: {
        session_id: id,
        lines: lines.length,
        closed: task.closed,
        trail_sha256: trailSha256,
        status: check.status,
        verdict: report.verdict,
        events: chain?.events ?? 0,
        hash_chain_valid: chain?.hash_chain_valid ?? false,
        complete: chain?.complete ?? false,
        reason: check.reason ?? chain?.reason ?? null,
        signatures: check.signatures,
        detail: detailOf(check),
      },
      findings: report.findings.map((finding, ord) => ({ ord, session_id: id, kind: finding.kind, severity: finding.severity, store_level: STORE_KINDS.has(finding.kind), finding: { ...finding, session_id: id } })),
    }),
  };
}

/**
 * A session's rows as PostgreSQL takes them: its text and jsonb refuse U+0000, which a trail may
 * hold (a tool's name, a message quoting one), so each is written as U+FFFD. The lines' bytes go
 * as they are, in a `bytea`.
 */
function storable<T>(value: T): T {
  if (typeof value === 'string') return (value.includes('\u0000') ? value.replaceAll('\u0000', '\ufffd') : value) as T;
  if (value === null || typeof value !== 'object' || value instanceof Uint8Array) return value;
  if (Array.isArray(value)) return value.map(storable) as T;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) out[storable(key)] = storable(item);
  return out as T;
}

/** A structured clone turns a Buffer into a plain Uint8Array: the same bytes, seen as a Buffer again. */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** The new lines with the fields queries need beside their bytes, read off the records the check parsed. */
function lineRows(id: string, lines: readonly Buffer[], from: number, check: StoredStatus): Buffer {
  let bytes = 0;
  for (let i = from; i < lines.length; i++) bytes += (lines[i] as Buffer).length + 400;
  const rows = new CopyRows(bytes);
  for (let i = from; i < lines.length; i++) {
    const record = check.records[i] ?? null;
    rows.add([id, i + 1, lines[i] as Buffer, storable(text(record?.event_id)), storable(text(record?.kind)), storable(text(record?.timestamp))]);
  }
  return rows.bytes();
}

function text(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

/** The verdict and findings of the detector on the checked trail, as `report show` gives them: at ingest, and when the findings channel checks a session's rows again. */
export function reportOf(id: string, lines: readonly Buffer[], summary: Buffer | null, closed: boolean, check: StoredStatus): { verdict: string | null; agentRef: string | null; sessionKey: string | null; findings: Finding[] } {
  try {
    const report = sessionReport(storedSessionMaterial(id, lines, summary), false, check);
    const verdict = report.summary.audit_report['verdict'];
    const agentRef = report.summary['agent_ref'];
    // An open session is simply not closed yet; a closed one without a summary is worth a look.
    const findings = report.summary.audit_report.findings.filter((f) => closed || f.kind !== 'TRAIL_INCOMPLETE');
    if (closed && summary === null && check.chain?.complete === true) {
      findings.push({ kind: 'SUMMARY_MISSING', severity: 'warn', message: 'the trail is closed but has no summary', event_ids: [] });
    }
    return {
      verdict: typeof verdict === 'string' ? verdict : null,
      agentRef: typeof agentRef === 'string' ? agentRef : null,
      // The key the session declared: `get_session_findings` takes it as a label for the session (SuperAuditor §7).
      sessionKey: sessionKeyOf(report.summary['session_key']),
      findings,
    };
  } catch (error) {
    // A summary the reader refuses must not keep the session out: its findings say why (v1.1 §5.4).
    const findings: Finding[] = [storeCrash(`reading ${id} failed: ${error instanceof Error ? error.message : String(error)}`)];
    return { verdict: null, agentRef: null, sessionKey: null, findings };
  }
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
