/**
 * A fleet-stored session's status: the one status module (store/session-status.ts) over the bytes
 * the store holds, at ingest, in `verify store --store`, in `verify_session` and in the findings
 * channel, so all give one verdict on the same bytes. Also the records of each line (the fields
 * stored beside the bytes) and any other session the material names (a forged or mislabelled push).
 */

import { parseJsonStrict } from '../../spine/fast-record.js';
import type { AuraEvent } from '../../spine/record.js';
import { KeyRing } from '../../spine/signing.js';
import { linesOfBytes } from '../../spine/trail-lines.js';
import type { SessionMaterial } from '../material.js';
import { sealLogPlaces, type SealLogEntry, type SealLogPlace } from '../seal-log.js';
import { anchorVerdict, sessionStatus, type SessionStatusRead } from '../session-status.js';
import type { Sql } from './connection.js';

/**
 * A stored session's material. Its `anchorDisagreement` is what its host's anchor copy said of its
 * seal when it was pushed closed: the store cannot read the copy itself.
 */
export interface StoredMaterial extends Pick<SessionMaterial, 'anchorDisagreement'> {
  readonly sessionId: string;
  /** Each line's bytes, with its newline when it had one; null when the store holds none of the lines pushed ({@link storedLines}). */
  readonly lines: readonly Buffer[] | null;
  readonly summary: Buffer | null;
  /** Its seal-log entry and where it stands in its host's log, as {@link sealPlaceOf} gives it. */
  readonly sealPlace: SealLogPlace | 'absent' | null;
  readonly keys: KeyRing | null;
  /** Pushed closed (its writer gone), or followed while open. */
  readonly closed: boolean;
}

/** The status, with what the store keeps beside the bytes. */
export interface StoredStatus extends SessionStatusRead {
  /** Each line's record, by line (null for a line that is not one). */
  readonly records: readonly (AuraEvent | null)[];
  /** Another session id that the events, the summary or the seal name, or null. */
  readonly foreignId: string | null;
}

/** Decides a stored session's status. */
export function storedStatus(material: StoredMaterial): StoredStatus {
  const id = material.sessionId;
  const records: (AuraEvent | null)[] = [];
  const named = new Set<string>();
  const summaryText = material.summary?.toString('utf8') ?? null;
  const lines = material.lines;
  const read = sessionStatus({
    sessionId: id,
    lines: lines === null ? null : () => linesOfBytes(lines),
    summaryText,
    sealPlace: material.sealPlace,
    keys: material.keys,
    writer: material.closed ? 'none' : 'alive',
    each: (record) => {
      records.push(record);
      if (record !== null && typeof record.session_id === 'string' && record.session_id !== id) named.add(record.session_id);
    },
  });
  const status = anchorVerdict(read, material.anchorDisagreement);
  const sealed = material.sealPlace === 'absent' ? null : material.sealPlace?.entry.seal.session_id;
  if (typeof sealed === 'string' && sealed !== id) named.add(sealed);
  const summaryId = summaryIdOf(summaryText);
  if (summaryId !== null && summaryId !== id) named.add(summaryId);
  const gone = status.status === 'missing_trail' ? { message: 'the store holds no line of it (its rows were deleted)' } : {};
  return { ...status, ...gone, records, foreignId: [...named][0] ?? null };
}

/** A stored session's lines and summary as the readers' material, its files named as a folder names them. */
export function storedSessionMaterial(id: string, lines: readonly Buffer[], summary: Buffer | null): SessionMaterial {
  return {
    sessionId: id,
    trailName: `${id}.jsonl`,
    summaryName: `${id}.summary.json`,
    lines: () => linesOfBytes(lines),
    summaryText: summary === null ? null : () => summary.toString('utf8'),
  };
}

/**
 * The lines to check of a stored session: none stored of a session pushed with some is a trail
 * whose rows were deleted (`missing_trail`); none of one pushed empty is an empty trail, as at ingest.
 * @param pushed the lines the store recorded as pushed (its close record's, else its latest check's), null when it recorded none
 */
export function storedLines(rows: readonly Buffer[], pushed: number | null): readonly Buffer[] | null {
  return rows.length === 0 && pushed !== 0 ? null : rows;
}

function summaryIdOf(text: string | null): string | null {
  if (text === null) return null;
  try {
    const id = (parseJsonStrict(text) as Record<string, unknown> | null)?.['session_id'];
    return typeof id === 'string' ? id : null;
  } catch {
    return null;
  }
}

/** A stored seal-log entry's bytes, parsed; null when there are none or they are not an entry. */
export function parseSealEntry(raw: Buffer | null): SealLogEntry | null {
  if (raw === null) return null;
  try {
    const entry = parseJsonStrict(raw.toString('utf8')) as SealLogEntry | null;
    return entry !== null && typeof entry === 'object' && typeof entry.seal === 'object' && entry.seal !== null && typeof entry.hash === 'string' ? entry : null;
  } catch {
    return null;
  }
}

/** An entry's place when nothing is known of the log around it. */
export function alonePlace(entry: SealLogEntry | null): SealLogPlace | null {
  return entry === null ? null : { entry, afterSigning: false, voucher: null };
}

/**
 * The keys each host pushed (of `host` only, when named), by host: a session is judged by its own
 * host's keys, as on that host, since one host's signing says nothing of another's (a host that
 * never signed would read `unsigned` beside one that does). Null for a host that pushed none: its
 * signatures are then unchecked, as locally with no keys given.
 */
export async function hostKeys(sql: Sql, label: string, host?: string): Promise<(host: string) => KeyRing | null> {
  const rows = await sql<{ host: string; public_key: string }[]>`SELECT host, public_key FROM aura.host_keys WHERE ${host ?? null}::text IS NULL OR host = ${host ?? null}::text`;
  const texts = new Map<string, string[]>();
  for (const row of rows) texts.set(row.host, [...(texts.get(row.host) ?? []), row.public_key]);
  const rings = new Map([...texts].map(([name, keys]) => [name, KeyRing.ofPublicKeyTexts(keys, `${label}#host_keys/${name}`)]));
  return (name) => rings.get(name) ?? null;
}

/** What a close record says of its host's seal log (null without a close record). */
export interface LogColumns {
  /** The session's entry, as its host's log held it at push. */
  readonly seal_entry: Uint8Array | null;
  /** The pushing host read its seal log for it (false in close records of before schema version 6). */
  readonly log_read: boolean | null;
}

/**
 * A stored session's place in its host's seal log, as its host's folder gives it: `place`, its
 * entry's place as the store holds that log; `absent` when its host read its log at push and the
 * log had no entry for it, so a summary sealed without one reads `unsealed` as in the folder; null
 * when no one knows: a close record of before version 6 (push --follow did not read the log), or
 * none (a session followed while open). Every reader of the store and the check at ingest take it
 * from here.
 */
export function sealPlaceOf(close: LogColumns, place: SealLogPlace | null): SealLogPlace | 'absent' | null {
  return close.seal_entry === null && close.log_read === true ? 'absent' : place;
}

/** Where a stored session's entry stands in its host's log, as the store holds that log ({@link sealPlaceOf}). */
export async function storedPlace(sql: Sql, stored: StoredSession): Promise<SealLogPlace | 'absent' | null> {
  const close = { seal_entry: stored.sealEntry, log_read: stored.logRead };
  // Without an entry of its own, it has no place in its host's log: the host's entries are not read.
  if (stored.sealEntry === null) return sealPlaceOf(close, null);
  const rows = await sql<{ seal_entry: Buffer | null }[]>`SELECT seal_entry FROM aura.closes WHERE host = ${stored.host} AND seal_entry IS NOT NULL`;
  const entries = rows.flatMap((row) => {
    const entry = parseSealEntry(row.seal_entry);
    return entry === null ? [] : [entry];
  });
  return sealPlaceOf(close, sealLogPlaces(entries).get(stored.sessionId) ?? null);
}

/** One stored session's bytes, as the store holds them now. */
export interface StoredSession {
  readonly sessionId: string;
  readonly host: string;
  readonly lines: readonly Buffer[];
  readonly summary: Buffer | null;
  readonly sealEntry: Buffer | null;
  /** The close record's line count and digest, when the session was pushed closed. */
  readonly closed: { readonly lines: number; readonly trailSha256: string; readonly summarySha256: string | null } | null;
  /** The lines the store recorded as pushed: its close record's count, else its latest check's; null when it recorded neither. */
  readonly pushedLines: number | null;
  /** Its host read its seal log when it pushed it closed ({@link LogColumns}). */
  readonly logRead: boolean;
  /** What its host's anchor copy said of its seal when it was pushed closed, spread into its material. */
  readonly anchor: Pick<StoredMaterial, 'anchorDisagreement'>;
}

/** A stored session's rows now, or null when the store has no record of it. */
export async function readStoredSession(sql: Sql, sessionId: string): Promise<StoredSession | null> {
  const [head] = await sql<({ host: string; lines: number | null; trail_sha256: string | null; summary: Buffer | null; summary_sha256: string | null; seal_entry: Buffer | null; checked_lines: number | null } & LogColumns & AnchorColumns)[]>`
    SELECT s.host, c.lines, c.trail_sha256, c.summary, c.summary_sha256, c.seal_entry, c.log_read, c.anchored, c.anchor_disagreement,
      (SELECT k.lines FROM aura.checks k WHERE k.session_id = s.session_id ORDER BY k.id DESC LIMIT 1) AS checked_lines
    FROM aura.sessions s LEFT JOIN aura.closes c USING (session_id) WHERE s.session_id = ${sessionId}`;
  if (head === undefined) return null;
  const rows = await sql<{ line: Buffer }[]>`SELECT line FROM aura.lines WHERE session_id = ${sessionId} ORDER BY line_no`;
  return {
    sessionId,
    host: head.host,
    lines: rows.map((row) => row.line),
    summary: head.summary,
    sealEntry: head.seal_entry,
    closed: head.lines === null || head.trail_sha256 === null ? null : { lines: head.lines, trailSha256: head.trail_sha256, summarySha256: head.summary_sha256 },
    pushedLines: head.lines ?? head.checked_lines,
    logRead: head.log_read === true,
    anchor: anchorOf(head),
  };
}

/** A close record's anchor columns (null without a close record). */
export interface AnchorColumns {
  readonly anchored: boolean | null;
  readonly anchor_disagreement: string | null;
}

/** A close record's anchor columns as material says them: absent when its host's log had no anchor copy. */
export function anchorOf(close: AnchorColumns): Pick<StoredMaterial, 'anchorDisagreement'> {
  return close.anchored === true ? { anchorDisagreement: close.anchor_disagreement } : {};
}

/** A stored session's status from its rows now, its seal-log entry placed in its host's log as the store holds it. */
export async function storedSessionStatus(sql: Sql, stored: StoredSession, keys: KeyRing | null): Promise<StoredStatus> {
  const place = await storedPlace(sql, stored);
  return storedStatus({ sessionId: stored.sessionId, lines: storedLines(stored.lines, stored.pushedLines), summary: stored.summary, sealPlace: place, keys, closed: stored.closed !== null, ...stored.anchor });
}
