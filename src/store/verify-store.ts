/**
 * `aura verify store`: the whole sessions folder against its seal log. Each sealed session's trail
 * must exist and match its seal (and its checkpoints and seal must verify, with keys); each trail
 * without a seal is open (its writer lives) or a problem; the log itself must walk; an anchor copy
 * must hold the same seals. Integrity (nothing edited) and completeness (nothing missing) are
 * reported apart, per session and for the store.
 */

import * as fs from 'node:fs';
import type { ChainFailureReason } from '../errors.js';
import type { KeyRing } from '../spine/signing.js';
import { verifyTrail } from '../spine/verify.js';
import { trailWriter } from '../spine/writer.js';
import { readSealLog, type Seal, type SealLogRead } from './seal-log.js';
import { refusalOf, scanSessionFolder, sessionFiles, type SkippedFile } from './session-files.js';

/** Where one session stands. */
export type StoreStatus =
  /** Sealed, and its trail matches the seal. */
  | 'verified'
  /** No seal yet, and its writer is alive. */
  | 'open'
  /** Sealed, but the trail is gone. */
  | 'missing_trail'
  /** Sealed, but the trail does not match (edited, truncated, rewritten, a bad signature). */
  | 'damaged'
  /** A trail with no seal and no live writer: crashed, written before sealing, or its seal removed. */
  | 'unsealed';

/** One session's verdict. */
export interface StoreSessionVerdict {
  readonly session_id: string;
  readonly status: StoreStatus;
  readonly reason?: ChainFailureReason | 'missing_trail' | 'unsealed';
  readonly message?: string;
  readonly events?: number;
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

/** Verifies every session of a store against its seal log. */
export function verifyStore(options: VerifyStoreOptions): StoreReport {
  const log = readSealLog(options.sealLog);
  const seals = new Map<string, Seal>();
  for (const entry of log.entries) seals.set(entry.seal.session_id, entry.seal);
  const folder = scanSessionFolder(options.sessionsDir);
  const ids = [...new Set([...folder.ids, ...seals.keys()])].sort();
  const keys = options.keys ?? null;
  const sessions: StoreSessionVerdict[] = [];
  for (const [i, id] of ids.entries()) {
    sessions.push(verdictOf(options.sessionsDir, id, seals.get(id), keys));
    options.onProgress?.(i + 1, ids.length);
  }
  const counts: Record<StoreStatus, number> = { verified: 0, open: 0, missing_trail: 0, damaged: 0, unsealed: 0 };
  for (const session of sessions) counts[session.status]++;
  const anchor = options.anchorLog === undefined || options.anchorLog === null ? null : anchorVerdict(options.anchorLog, log);
  const sealLog = logVerdict(options.sealLog, log);
  return {
    sessions_dir: options.sessionsDir,
    seal_log: sealLog,
    anchor,
    sessions,
    counts,
    ...(folder.skipped.length === 0 ? {} : { skipped: folder.skipped }),
    ok: sealLog.valid && (anchor === null || (anchor.valid && anchor.matches)) && counts.missing_trail + counts.damaged + counts.unsealed === 0,
  };
}

function verdictOf(sessionsDir: string, id: string, seal: Seal | undefined, keys: KeyRing | null): StoreSessionVerdict {
  const files = sessionFiles(sessionsDir, id);
  const exists = fs.existsSync(files.trail);
  const refusal = refusalOf(files.trail);
  if (seal === undefined) {
    const writer = trailWriter(files.trail);
    if (writer?.alive === true) return { session_id: id, status: 'open' };
    const why = writer !== null ? 'its writer died before closing it' : 'it has no seal: closed before sealing, written by another tool, or its seal was removed from the log';
    return { session_id: id, status: 'unsealed', reason: 'unsealed', message: why };
  }
  if (!exists) return { session_id: id, status: 'missing_trail', reason: 'missing_trail', message: `the seal names ${files.trail}, which is gone (the session was deleted)` };
  if (refusal !== null) return { session_id: id, status: 'missing_trail', reason: 'missing_trail', message: `the seal names ${files.trail}, which is not read: ${refusal}` };
  // The trail against its seal: extent, checkpoints, and the seal's own signature (spine/verify.ts).
  const report = verifyTrail(files.trail, seal, keys === null ? {} : { keys });
  if (report.hash_chain_valid && report.reason === undefined) return { session_id: id, status: 'verified', events: report.events };
  return {
    session_id: id,
    status: 'damaged',
    events: report.events,
    ...(report.reason === undefined ? {} : { reason: report.reason }),
    ...(report.message === undefined ? {} : { message: report.message }),
  };
}

function logVerdict(path: string, log: SealLogRead): SealLogVerdict {
  return { path, entries: log.entries.length, valid: log.problem === null, ...(log.problem === null ? {} : { message: log.problem.message }) };
}

function anchorVerdict(path: string, main: SealLogRead): SealLogVerdict & { matches: boolean } {
  const anchor = readSealLog(path);
  const same = anchor.entries.length === main.entries.length && anchor.entries.every((entry, i) => entry.hash === main.entries[i]?.hash);
  const verdict = logVerdict(path, anchor);
  return {
    ...verdict,
    matches: same,
    ...(same || verdict.message !== undefined ? {} : { message: `the anchor holds ${anchor.entries.length} seals and the store's log ${main.entries.length}, or other ones: one of them was rewritten` }),
  };
}
