/**
 * `aura verify store`: the whole sessions folder against its seal log. Each session's status comes
 * from the one status module (store/session-status.ts), and its stored summary must say what its
 * trail says (the report `report show` builds from the same read); the log itself must walk, and
 * with keys every signed entry must verify; an anchor copy must hold the same seals.
 */

import { summaryDisagreement } from '../audit/session-report.js';
import type { KeyRing } from '../spine/signing.js';
import { folderMaterial } from './material.js';
import type { SealLogView } from './seal-log.js';
import { compareWithAnchor, type AnchorComparison } from './seal-log-anchor.js';
import { scanSessionFolder, sessionFiles, type SkippedFile } from './session-files.js';
import { folderSessionStatus, PASSING_STATUSES, sealLogView, type SessionStatusName, type SignatureFacet, type StatusReason } from './session-status.js';

/** Where one session stands (store/session-status.ts). */
export type StoreStatus = SessionStatusName;

/** One session's verdict. */
export interface StoreSessionVerdict {
  readonly session_id: string;
  readonly status: StoreStatus;
  readonly signatures: SignatureFacet;
  readonly reason?: StatusReason;
  readonly message?: string;
  readonly events?: number;
  /** How its stored summary disagrees with its trail (a verdict or findings edited), where its status passes: the store is then not verified. */
  readonly summary_mismatch?: string;
}

/** A seal log's verdict. */
export interface SealLogVerdict {
  readonly path: string;
  readonly entries: number;
  readonly valid: boolean;
  readonly message?: string;
}

/** The verdict on a store. */
export interface StoreReport {
  readonly sessions_dir: string;
  readonly seal_log: SealLogVerdict;
  readonly anchor: (SealLogVerdict & { readonly matches: boolean }) | null;
  readonly sessions: readonly StoreSessionVerdict[];
  readonly counts: Readonly<Record<StoreStatus, number>>;
  /** Files named like a trail that are not read (a FIFO, a device, a folder, a symlink out of the folder), and why; absent when none. */
  readonly skipped?: readonly SkippedFile[];
  /** Nothing edited and nothing missing. */
  readonly ok: boolean;
}

/** How to verify a store. */
export interface VerifyStoreOptions {
  readonly sessionsDir: string;
  readonly sealLog: string;
  readonly anchorLog?: string | null;
  readonly keys?: KeyRing | null;
  /** Called after each session, for a progress line. */
  readonly onProgress?: (done: number, total: number) => void;
}

/** Zero of every status, for counting. */
export function statusCounts(): Record<StoreStatus, number> {
  return { verified: 0, intact: 0, open: 0, incomplete: 0, unsealed: 0, unsigned: 0, damaged: 0, missing_trail: 0, unreadable: 0 };
}

/** A session a store passes: its status passes, and its summary says what its trail says. */
export function sessionPasses(session: { readonly status: StoreStatus; readonly summary_mismatch?: string }): boolean {
  return PASSING_STATUSES.has(session.status) && session.summary_mismatch === undefined;
}

/** Verifies every session of a store against its seal log. */
export function verifyStore(options: VerifyStoreOptions): StoreReport {
  const keys = options.keys ?? null;
  const log = sealLogView(options.sealLog, keys);
  const folder = scanSessionFolder(options.sessionsDir);
  const inFolder = new Set(folder.ids);
  const anchorLog = options.anchorLog === undefined || options.anchorLog === null ? null : { path: options.anchorLog, view: sealLogView(options.anchorLog, keys) };
  const compared = anchorLog === null ? null : compareWithAnchor(log.read.entries, anchorLog.view.read.entries, (id) => inFolder.has(id));
  const ids = [...new Set([...folder.ids, ...log.places.keys(), ...(compared?.sessions.keys() ?? [])])].sort();
  const sessions: StoreSessionVerdict[] = [];
  for (const [i, id] of ids.entries()) {
    const sessionLog = compared === null ? log : { ...log, anchor: compared.sessions };
    const status = folderSessionStatus(options.sessionsDir, id, { keys, log: sessionLog, collectEvents: true });
    const disagreement = status.trail === null ? null : summaryDisagreement(folderMaterial(sessionFiles(options.sessionsDir, id), sessionLog), status);
    sessions.push({
      session_id: id,
      status: status.status,
      signatures: status.signatures,
      ...(status.reason === null ? {} : { reason: status.reason }),
      ...(status.message === null ? {} : { message: status.message }),
      ...(status.chain === null ? {} : { events: status.chain.events }),
      ...(disagreement === null ? {} : { summary_mismatch: disagreement }),
    });
    options.onProgress?.(i + 1, ids.length);
  }
  const counts = statusCounts();
  for (const session of sessions) counts[session.status]++;
  const anchor = anchorLog === null || compared === null ? null : anchorVerdict(anchorLog.path, anchorLog.view, compared);
  const sealLog = logVerdict(options.sealLog, log);
  return {
    sessions_dir: options.sessionsDir,
    seal_log: sealLog,
    anchor,
    sessions,
    counts,
    ...(folder.skipped.length === 0 ? {} : { skipped: folder.skipped }),
    ok: sealLog.valid && (anchor === null || (anchor.valid && anchor.matches)) && sessions.every(sessionPasses),
  };
}

function logVerdict(path: string, log: SealLogView): SealLogVerdict {
  const problem = log.read.problem?.message ?? log.signatureProblem;
  return { path, entries: log.read.entries.length, valid: problem === null, ...(problem === null ? {} : { message: problem }) };
}

function anchorVerdict(path: string, view: SealLogView, compared: AnchorComparison): SealLogVerdict & { matches: boolean } {
  const verdict = logVerdict(path, view);
  const { sessions, strangers } = compared;
  const matches = sessions.size === 0 && strangers.length === 0;
  const why =
    sessions.size > 0
      ? `the anchor and the store's log disagree on ${sessions.size} session(s): one of them was rewritten`
      : `the anchor seals ${strangers.length} session(s) of which this store has no trace (${strangers.slice(0, 3).join(', ')}${strangers.length > 3 ? ', …' : ''}): deleted with their seals, or the anchor is shared with another store (give each store its own anchor_dir)`;
  return { ...verdict, matches, ...(matches || verdict.message !== undefined ? {} : { message: why }) };
}
