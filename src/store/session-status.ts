/**
 * One session's status, decided in one place and read by every surface: `verify chain` (by path
 * or id), `verify store`, `sessions list`, `report show` and `report html`, `aura ui`, the MCP
 * tools, and the fleet store at ingest and in `verify store --store`.
 *
 * {@link sessionStatus} takes material already read (the trail's lines, the summary's text, the
 * session's seal-log entry and its place in the log, the trusted keys, whether a writer lives),
 * as sigstore's verify takes fetched data; {@link folderSessionStatus} is the thin edge that reads
 * a sessions folder's files. Everything in the material is untrusted.
 *
 * The seal of record is the seal-log entry (chained, and signed where a key is active); the
 * summary's seal stands in when the log has none. The trail, the summary and the log must agree
 * on whether the session was signed: a session whose signatures were stripped everywhere is
 * caught by the log (an unsigned entry after a signed one) or, with trusted keys, by being
 * unsigned at all, unless a later signed entry proves it was logged before signing began.
 */

import * as path from 'node:path';
import { AuraError, ChainVerificationError, NotFoundError, type ChainFailureReason } from '../errors.js';
import type { AuraEvent } from '../spine/record.js';
import { sealLogText, verifySignature, type KeyRing } from '../spine/signing.js';
import { parseJsonStrict } from '../spine/fast-record.js';
import { readTrailLines, type TrailRead } from '../spine/trail-reader.js';
import { trailLines, type TrailLine } from '../spine/trail-lines.js';
import { verifyLines, type ChainReport, type ChainSeal } from '../spine/verify.js';
import { trailWriter } from '../spine/writer.js';
import { readTextFile } from './json-file.js';
import { entrySigned, entryVouches, readSealLog, sealEntryHash, sealLogPlaces, type SealLogEntry, type SealLogPlace, type SealLogRead, type SealLogView } from './seal-log.js';
import { anchoredView } from './seal-log-anchor.js';
import { assertReadable, sessionFiles } from './session-files.js';
import { anchorWord, type SessionMaterial } from './material.js';
import { sealOfSummary } from './summary-seal.js';

/** Where a session stands. */
export type SessionStatusName =
  /** Sealed, the trail matches its seal, and every signature verified against trusted keys. */
  | 'verified'
  /** Sealed and the trail matches its seal; signatures not checked (no keys), or it predates signing. */
  | 'intact'
  /** Its writer lives: intact so far, not sealed yet. */
  | 'open'
  /** Not closed and no writer: it stopped early (a crash, a kill), possibly mid-line (`torn_tail`). */
  | 'incomplete'
  /** Closed (ends with `session.close`) but no seal: closed before sealing, or its seal removed. */
  | 'unsealed'
  /** Sealed and intact, but not signed where a signature is required. */
  | 'unsigned'
  /** Edited, truncated, rewritten, a bad signature, or its summary and seal disagree. */
  | 'damaged'
  /** A seal names it, but the trail is gone. */
  | 'missing_trail'
  /** The trail is there but cannot be read. */
  | 'unreadable';

/** What the signatures say. */
export type SignatureFacet =
  /** Every checkpoint, the seal and its log entry verified against the trusted keys. */
  | 'verified'
  /** Unsigned, and a later signed seal-log entry proves it was sealed before signing began. */
  | 'predates_signing'
  /** Signed, but no trusted keys were given. */
  | 'unchecked'
  /**
   * Signed, but nothing it holds carries a signature yet: an open (or cut short) session before
   * its first checkpoint. Its events are unproven: anyone who can write the folder could have
   * written them.
   */
  | 'pending'
  /** Not signed. */
  | 'unsigned'
  /** A signature fails, is by an untrusted key, or the records disagree on whether there is one. */
  | 'invalid';

/** Why a session is not `verified`, `intact` or `open`. */
export type StatusReason = ChainFailureReason | 'missing_trail' | 'unsealed' | 'unsigned' | 'incomplete' | 'unreadable' | 'seal_mismatch';

/** The statuses a check passes with: nothing edited, nothing missing. */
export const PASSING_STATUSES: ReadonlySet<SessionStatusName> = new Set(['verified', 'intact', 'open']);

/** One session's status. */
export interface SessionStatus {
  readonly session_id: string;
  readonly status: SessionStatusName;
  readonly signatures: SignatureFacet;
  readonly reason: StatusReason | null;
  readonly message: string | null;
  /** The chain report, or null when there is no trail to read. */
  readonly chain: ChainReport | null;
  /** The seal the trail was checked against, and where it came from. */
  readonly seal: ChainSeal | null;
  readonly seal_from: 'seal_log' | 'summary' | null;
}

/** A status with the trail read on the same pass (when asked for): the detector's input. */
export interface SessionStatusRead extends SessionStatus {
  readonly trail: TrailRead | null;
  /** Why the trail could not be read, when `unreadable`. */
  readonly error?: AuraError;
}

/** What a status is decided from. */
export interface StatusMaterial {
  readonly sessionId: string;
  /** The trail's lines, or null when there is no trail. May throw an AuraError when unreadable. */
  readonly lines: (() => Iterable<TrailLine>) | null;
  /** The stored summary's text, or null. */
  readonly summaryText: string | null;
  /** The session's seal-log entry and its place in the log; `absent` when the log was read and has none; null when no log is known. */
  readonly sealPlace: SealLogPlace | 'absent' | null;
  /** Trusted public keys; null leaves signatures unchecked. */
  readonly keys: KeyRing | null;
  /** Whether a writer holds the trail: alive (open), gone (crashed), or none. */
  readonly writer: 'alive' | 'gone' | 'none';
  /** Keep the trail's events (the report and the lists run the detector on them). */
  readonly collectEvents?: boolean;
  /** Called with every line's record (null for a line that is not one), in line order. */
  readonly each?: (record: AuraEvent | null) => void;
}

/** Decides a session's status from its material. Throws only for a bug. */
export function sessionStatus(material: StatusMaterial): SessionStatusRead {
  const id = material.sessionId;
  const problems: { reason: StatusReason; message: string }[] = [];
  const { seal: fromSummary, sealed: summarySealed, seals: summarySeals } = summarySeal(material, problems);
  const place = material.sealPlace === 'absent' ? null : material.sealPlace;
  const entry = place?.entry ?? null;
  if (place !== null) checkEntry(id, place, fromSummary, material.keys, problems);
  // aura logs every seal before it writes the summary: a sealed summary the log lacks lost its entry.
  const unlogged = material.sealPlace === 'absent' && fromSummary !== null && summarySealed;
  const seal: ChainSeal | null = entry !== null ? { ...entry.seal } : unlogged || !summarySeals ? null : fromSummary;
  const sealFrom = entry !== null ? 'seal_log' : seal !== null ? 'summary' : null;
  const base = { session_id: id, seal, seal_from: sealFrom } as const;
  const missing = (): SessionStatusRead => {
    const message = seal === null ? 'there is no trail and no seal' : 'its seal names a trail that is gone (the session was deleted)';
    return { ...base, status: 'missing_trail', signatures: seal?.signature ? 'unchecked' : 'unsigned', reason: 'missing_trail', message, chain: null, trail: null };
  };
  if (material.lines === null) return missing();
  let trail: TrailRead | null = null;
  let chain: ChainReport;
  const options = material.keys === null ? {} : { keys: material.keys };
  try {
    const lines = material.lines();
    if (material.collectEvents === true || material.each !== undefined) {
      trail = readTrailLines(lines, seal ?? undefined, options, material.each);
      chain = trail.chain;
    } else {
      chain = verifyLines(lines, seal ?? undefined, options);
    }
  } catch (error) {
    if (!(error instanceof AuraError) || error instanceof ChainVerificationError) throw error;
    // Gone between the listing and the read, or never there: one open instead of a stat first.
    if (error instanceof NotFoundError) return missing();
    return { ...base, status: 'unreadable', signatures: 'unsigned', reason: 'unreadable', message: error.message, chain: null, trail: null, error };
  }
  if (chain.session_id !== null && chain.session_id !== id) problems.push({ reason: 'malformed_record', message: `its events name session ${chain.session_id}, not ${id}` });
  const decided = decide(material, chain, seal, entry, unlogged ? null : fromSummary, problems);
  if (unlogged && decided.status === 'unsealed') return { ...base, ...decided, message: 'its summary is sealed, but the seal log has no entry for it (the entry was removed, or the log rewritten)', chain, trail };
  return { ...base, ...decided, chain, trail };
}

type Decided = Pick<SessionStatus, 'status' | 'signatures' | 'reason' | 'message'>;

function decide(material: StatusMaterial, chain: ChainReport, seal: ChainSeal | null, entry: SealLogEntry | null, fromSummary: ChainSeal | null, problems: { reason: StatusReason; message: string }[]): Decided {
  const keys = material.keys;
  const trailSigned = chain.signatures.signed;
  const facet: SignatureFacet = chain.reason === 'signature_invalid' ? 'invalid' : !trailSigned ? 'unsigned' : keys === null ? 'unchecked' : chain.signatures.checked > 0 ? 'verified' : 'pending';
  const alive = material.writer === 'alive';
  if (chain.reason !== undefined) {
    if (seal === null && (chain.reason === 'torn_tail' || chain.reason === 'empty')) {
      return alive ? openStatus(facet, keys) : { status: 'incomplete', signatures: facet, reason: chain.reason, message: chain.message ?? chain.reason };
    }
    return { status: 'damaged', signatures: facet, reason: chain.reason, message: chain.message ?? chain.reason };
  }
  // The records must agree on whether the session was signed: stripping one of them is tampering.
  const signedBy = [
    ['the trail', trailSigned],
    ...(entry === null ? [] : [['its seal-log entry', entrySigned(entry)] as const]),
    ...(fromSummary === null || material.summaryText === null ? [] : [['its summary', typeof fromSummary.signature === 'string'] as const]),
  ] as const;
  if (signedBy.some(([, signed]) => signed !== trailSigned)) {
    const says = signedBy.map(([what, signed]) => `${what} ${signed ? 'is signed' : 'is not'}`).join(', ');
    problems.unshift({ reason: 'signature_invalid', message: `the records disagree on whether the session was signed: ${says} (a signature stripped)` });
  }
  const problem = problems[0];
  if (problem !== undefined) return { status: 'damaged', signatures: problem.reason === 'signature_invalid' ? 'invalid' : facet, reason: problem.reason, message: problem.message };
  if (seal === null) {
    if (alive) return openStatus(facet, keys);
    if (!chain.complete) return { status: 'incomplete', signatures: facet, reason: 'incomplete', message: material.writer === 'gone' ? 'its writer died before closing it' : 'the trail does not end with session.close and no writer holds it' };
    return { status: 'unsealed', signatures: facet, reason: 'unsealed', message: 'it is closed but has no seal: neither a seal-log entry nor a sealed summary (closed before sealing, written by Python Aura, or its seal removed)' };
  }
  if (trailSigned) return { status: facet === 'verified' ? 'verified' : 'intact', signatures: facet, reason: null, message: null };
  const place = material.sealPlace === 'absent' ? null : material.sealPlace;
  if (place?.afterSigning === true) {
    return { status: 'unsigned', signatures: 'unsigned', reason: 'unsigned', message: 'it is not signed, but it was sealed after signing began in this store: its signatures were stripped, or a process without the key wrote it' };
  }
  if (place?.voucher !== null && place?.voucher !== undefined) return { status: 'intact', signatures: 'predates_signing', reason: null, message: null };
  if (keys !== null) return { status: 'unsigned', signatures: 'unsigned', reason: 'unsigned', message: 'it is not signed, and trusted keys were given: nothing proves it predates signing' };
  return { status: 'intact', signatures: 'unsigned', reason: null, message: null };
}

/**
 * A session a writer still holds. Its lock is a file anyone who can write the folder can make, so
 * with trusted keys an unsigned one does not pass: nothing proves it predates signing (as for a
 * sealed one), and a signing writer declares its key in its first event. A signed one passes, but
 * its signatures are `pending` until its first checkpoint: a session's first thousand events (the
 * default cadence) are proven only then, and a live session must not fail a check for being young.
 */
function openStatus(facet: SignatureFacet, keys: KeyRing | null): Decided {
  if (keys !== null && facet === 'unsigned') return { status: 'unsigned', signatures: 'unsigned', reason: 'unsigned', message: 'a writer holds it, but it is not signed, and trusted keys were given: nothing proves it predates signing' };
  // A live session before its first checkpoint: a signing writer's, or a forgery with a planted lock; only the checkpoint tells.
  if (facet === 'pending') return { status: 'open', signatures: facet, reason: null, message: 'no checkpoint is written yet: nothing it holds is signed, so nothing proves who wrote it' };
  return { status: 'open', signatures: facet, reason: null, message: null };
}

/**
 * The seal the summary stands for (its `seal`, or Python Aura's `event_count`), and whether it
 * holds a `seal` of aura's own, from one parse of it.
 */
function summarySeal(material: StatusMaterial, problems: { reason: StatusReason; message: string }[]): { readonly seal: ChainSeal | null; readonly sealed: boolean; readonly seals: boolean } {
  if (material.summaryText === null) return { seal: null, sealed: false, seals: false };
  let value: unknown;
  try {
    value = parseJsonStrict(material.summaryText);
  } catch {
    problems.push({ reason: 'seal_mismatch', message: 'its summary is not JSON' });
    return { seal: null, sealed: false, seals: false };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    problems.push({ reason: 'seal_mismatch', message: 'its summary is not a summary: not a JSON object' });
    return { seal: null, sealed: false, seals: false };
  }
  const summary = value as Record<string, unknown>;
  const named = summary['session_id'];
  if (typeof named === 'string' && named !== material.sessionId) problems.push({ reason: 'seal_mismatch', message: `its summary names session ${named}, not ${material.sessionId}` });
  const own = summary['seal'];
  const sealed = own !== null && typeof own === 'object';
  // aura's summary says `seal: null` when it was written without one (`aura export` of a session
  // never sealed: crashed, or cut short): its chain describes the trail, it does not seal it.
  // Python Aura's has no `seal` and seals by its `event_count`.
  const seals = own !== null;
  try {
    return { seal: sealOfSummary(value, `${material.sessionId}.summary.json`), sealed, seals };
  } catch (error) {
    // A summary without a seal (Python Aura's carries event_count; a bare one nothing): no seal.
    if (error instanceof AuraError && !(error instanceof ChainVerificationError)) return { seal: null, sealed, seals: false };
    throw error;
  }
}

/** The entry's hash holds, it seals this session, its signatures verify, and it agrees with the summary's seal. */
function checkEntry(id: string, place: SealLogPlace, fromSummary: ChainSeal | null, keys: KeyRing | null, problems: { reason: StatusReason; message: string }[]): void {
  const entry = place.entry;
  if (entry.seal.session_id !== id) problems.push({ reason: 'seal_mismatch', message: `its seal-log entry seals session ${String(entry.seal.session_id)}, not ${id}` });
  if (place.hashChecked !== true && sealEntryHash(entry.prev_hash, entry.seal) !== entry.hash) problems.push({ reason: 'seal_mismatch', message: 'its seal-log entry does not match its hash (edited)' });
  if (fromSummary !== null && (fromSummary.events !== entry.seal.events || (fromSummary.head_hash !== undefined && fromSummary.head_hash !== entry.seal.head_hash) || (typeof fromSummary.signature === 'string' && fromSummary.signature !== entry.seal.signature))) {
    problems.push({ reason: 'seal_mismatch', message: "its summary's seal differs from its seal-log entry" });
  }
  if (keys === null) return;
  // A signing writer signs the entry with the seal: an entry without its own signature no longer
  // proves its place in the log, and the log's order is what a stripped signature would hide.
  if (typeof entry.seal.signature === 'string' && !entryVouches(entry)) {
    problems.push({ reason: 'signature_invalid', message: 'its seal is signed but its seal-log entry is not: the entry\'s signature was stripped' });
    return;
  }
  // An entry signed in its own right proves its place: the signed entries after it add nothing to it.
  const problem = place.signatureProblem !== undefined ? place.signatureProblem : (entrySignatureProblem(entry, keys, 'its seal-log entry') ?? (entryVouches(entry) ? null : entrySignatureProblem(place.voucher, keys, 'the signed seal-log entry after it')));
  if (problem !== null) problems.push({ reason: 'signature_invalid', message: problem });
}

/** What is wrong with a seal-log entry's own signature against trusted keys, or null. */
export function entrySignatureProblem(entry: SealLogEntry | null, keys: KeyRing, what: string): string | null {
  if (entry === null || typeof entry.signature !== 'string') return null;
  const key = keys.publicKey(entry.key_id);
  if (key === null) return `${what} is signed by key ${String(entry.key_id)}, which is not trusted`;
  return verifySignature(key, sealLogText(entry.hash), entry.signature) ? null : `${what} has a signature that does not verify (the log was rewritten)`;
}

/** The display label of a status: the status, with its reason when it has one. */
export function statusLabel(status: Pick<SessionStatus, 'status' | 'reason' | 'signatures'>): string {
  const reason = status.reason === null || status.reason === status.status ? '' : `: ${status.reason}`;
  return `${status.status}${reason}`;
}

/**
 * Reads a seal log for status checks. With trusted keys, the newest signed entry whose signature
 * verifies vouches for every entry before it (each hash chains over those before, and the read
 * checked every hash and link), so one signature check usually covers the log; a signed entry after
 * it that fails is named, and so are the entries it alone would vouch for.
 * With `anchorLog` (config `anchor_dir`), the view also says how the log and that copy disagree.
 * @throws ReadError when either is there but cannot be read
 */
export function sealLogView(logPath: string, keys: KeyRing | null = null, anchorLog: string | null = null): SealLogView {
  return anchoredView(sealLogViewOf(readSealLog(logPath), keys), anchorLog);
}

/** The view of a seal log already read (or followed: store/seal-log-follower.ts), as {@link sealLogView}. */
export function sealLogViewOf(read: SealLogRead, keys: KeyRing | null): SealLogView {
  const places = new Map([...sealLogPlaces(read.entries)].map(([id, place]) => [id, { ...place, hashChecked: true }]));
  if (keys === null) return { read, places, signatureProblem: null };
  const failed = new Map<string, string>();
  let vouched = -1;
  for (let i = read.entries.length - 1; i >= 0 && vouched < 0; i--) {
    const entry = read.entries[i] as SealLogEntry;
    if (typeof entry.signature !== 'string') continue;
    const problem = entrySignatureProblem(entry, keys, `entry ${i + 1}`);
    if (problem === null) vouched = i;
    else failed.set(entry.hash, problem);
  }
  const index = new Map(read.entries.map((entry, i) => [entry.hash, i]));
  const checked = new Map<string, SealLogPlace>();
  for (const [id, place] of places) {
    const own = (index.get(place.entry.hash) ?? -1) <= vouched ? null : (failed.get(place.entry.hash) ?? (place.voucher === null ? null : (failed.get(place.voucher.hash) ?? null)));
    checked.set(id, { ...place, signatureProblem: own });
  }
  const first = read.entries.find((entry) => failed.has(entry.hash));
  return { read, places: checked, signatureProblem: first === undefined ? null : (failed.get(first.hash) ?? null) };
}

/** How a folder session's status is read. */
export interface FolderStatusOptions {
  readonly keys: KeyRing | null;
  /** The folder's seal log, or null when there is none to consult. */
  readonly log: SealLogView | null;
  /** The trail's path, when not the folder's own (`verify chain <path>`). */
  readonly trail?: string;
  /** A summary to take the seal from instead of the folder's (`verify chain --summary F`), or null for none. */
  readonly summary?: string | null;
  readonly collectEvents?: boolean;
}

/**
 * The status of session `id` of a sessions folder, from its files.
 * @throws NotFoundError, ReadError for a `summary` given that cannot be read
 */
export function folderSessionStatus(sessionsDir: string, id: string, options: FolderStatusOptions): SessionStatusRead {
  const files = sessionFiles(sessionsDir, id);
  const trail = options.trail ?? files.trail;
  const sealPlace = options.log === null ? null : (options.log.places.get(id) ?? 'absent');
  // A session with a seal-log entry was closed: whether a writer lives matters only without one.
  const writer = sealPlace !== null && sealPlace !== 'absent' ? null : trailWriter(trail);
  // The folder's own files are read only as its readers read them: no FIFO, no symlink out of it.
  const ownTrail = options.trail === undefined || path.resolve(options.trail) === path.resolve(files.trail);
  let summaryText: string | null = null;
  if (typeof options.summary === 'string') summaryText = readTextFile(options.summary, 'summary');
  else if (options.summary === undefined) {
    try {
      assertReadable(files.summary);
      summaryText = readTextFile(files.summary, 'summary');
    } catch {
      // None, or unreadable now (removed, no permission, not a file): the session is judged without it.
      summaryText = null;
    }
  }
  const status = sessionStatus({
    sessionId: id,
    lines: () => {
      if (ownTrail) assertReadable(trail);
      return trailLines(trail);
    },
    summaryText,
    sealPlace,
    keys: options.keys,
    writer: writer === null ? 'none' : writer.alive ? 'alive' : 'gone',
    ...(options.collectEvents === true ? { collectEvents: true } : {}),
  });
  return anchorVerdict(status, anchorWord(options.log, id).anchorDisagreement);
}

/**
 * A status with the anchor copy's word on its seal (`disagreement`: how the log and the copy
 * disagree on it; null when the folder's log is anchored and they agree; undefined when it is not
 * anchored). What was already found wrong with the session stays its reason; else the anchor
 * speaks. In an anchored folder, a seal the log lacks (a summary's `event_count`, as Python Aura's)
 * is no seal: anyone who can write the folder can write a summary, and only the log is anchored.
 */
export function anchorVerdict(status: SessionStatusRead, disagreement: string | null | undefined): SessionStatusRead {
  if (disagreement === undefined || status.status === 'damaged' || status.status === 'unreadable') return status;
  if (disagreement !== null) return { ...status, status: 'damaged', reason: 'seal_mismatch', message: disagreement };
  if (status.status !== 'intact' || status.seal_from !== 'summary') return status;
  return { ...status, status: 'unsealed', reason: 'unsealed', message: "it is sealed only by its summary, and this folder's seal log, which is anchored, has no entry for it: a seal outside the anchored log proves nothing" };
}

/** The status of a reader's session material (a folder's files, or the fleet store's bytes). */
export function materialStatus(material: SessionMaterial, keys: KeyRing | null, collectEvents = true): SessionStatusRead {
  let summaryText: string | null = null;
  try {
    summaryText = material.summaryText?.() ?? null;
  } catch (error) {
    if (!(error instanceof AuraError)) throw error;
  }
  const status = sessionStatus({
    sessionId: material.sessionId,
    lines: material.lines,
    summaryText,
    sealPlace: material.sealPlace ?? null,
    keys,
    writer: material.writer ?? 'none',
    collectEvents,
  });
  return anchorVerdict(status, material.anchorDisagreement);
}
