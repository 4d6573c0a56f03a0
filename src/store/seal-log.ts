/**
 * The seal log (`seals.jsonl` beside the sessions folder): one line a closed session, each line
 * linking the one before by hash, like the trails themselves. Deleting a session leaves its seal
 * without a trail; deleting or editing a seal breaks the log's chain. With `anchor_dir` set, every
 * seal is also appended to a second log elsewhere, so rewriting both takes write access to both.
 *
 * Where a signing key is active, each entry is also signed: `{seal, prev_hash, hash, key_id,
 * signature}`, the signature over `aura/seal-log\n<hash>\n`. The hash chains over every entry
 * before it, so one signed entry vouches for the whole log up to it: an entry logged before it
 * provably predates signing, and an unsigned entry after a signed one is a session that should
 * have been signed (its signature removed, or written by a process without the key).
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { AuraError, NotFoundError, TrailWriteError } from '../errors.js';
import { canonicalJson } from '../spine/canonical.js';
import { contentHash } from '../spine/hash.js';
import { sealLogText, type Signer } from '../spine/signing.js';
import { tryLock } from '../spine/writer.js';
import { makeFolder, removeFile } from './fs-write.js';
import { parseJsonStrict } from '../spine/fast-record.js';
import { readRegularFile } from '../spine/regular-file.js';

/** What a closed session seals: its trail's extent, signed when a key is active. */
export interface Seal {
  readonly session_id: string;
  readonly events: number;
  readonly first_hash: string | null;
  readonly head_hash: string | null;
  readonly closed_at: string | null;
  readonly key_id: string | null;
  readonly signature: string | null;
}

/** One line of the log. */
export interface SealLogEntry {
  readonly seal: Seal;
  readonly prev_hash: string | null;
  readonly hash: string;
  /** The key that signed the entry (over {@link sealLogText} of its hash), or null: absent in logs written before entries were signed. */
  readonly key_id?: string | null;
  readonly signature?: string | null;
}

/** Where an entry stands in its log as to signing. */
export interface SealLogPlace {
  readonly entry: SealLogEntry;
  /** An earlier entry is signed: signing had begun when this session was sealed. */
  readonly afterSigning: boolean;
  /** The nearest later signed entry, whose hash chains over this one (null: none). */
  readonly voucher: SealLogEntry | null;
  /**
   * What is wrong with the signatures of the entry or its voucher, checked once for the whole log
   * against trusted keys (null: nothing); absent when they were not checked here.
   */
  readonly signatureProblem?: string | null;
  /** The entry's hash was checked against its seal when the log was read. */
  readonly hashChecked?: boolean;
}

/** True when the entry, or the seal it holds, carries a signature. */
export function entrySigned(entry: SealLogEntry): boolean {
  return typeof entry.signature === 'string' || typeof entry.seal.signature === 'string';
}

/**
 * True when the entry carries a signature of its own, over its hash, which chains over every entry
 * before it: only such an entry vouches for their order. A seal's signature covers the seal alone,
 * and a session moved before it in a rewritten log would still be covered by it.
 */
export function entryVouches(entry: SealLogEntry): boolean {
  return typeof entry.signature === 'string';
}

/**
 * Each entry's place as to signing, by session id. The entries need not be in order: they are
 * followed by their links (a fleet store holds them one a session), each log from its head.
 */
export function sealLogPlaces(entries: readonly SealLogEntry[]): Map<string, SealLogPlace> {
  const next = new Map<string, SealLogEntry>();
  const hashes = new Set(entries.map((entry) => entry.hash));
  for (const entry of entries) if (entry.prev_hash !== null) next.set(entry.prev_hash, entry);
  const places = new Map<string, SealLogPlace>();
  for (const head of entries.filter((entry) => entry.prev_hash === null || !hashes.has(entry.prev_hash))) {
    const log: SealLogEntry[] = [];
    for (let at: SealLogEntry | undefined = head; at !== undefined && log.length <= entries.length; at = next.get(at.hash)) log.push(at);
    let voucher: SealLogEntry | null = null;
    const vouchers = log.map(() => null as SealLogEntry | null);
    for (let i = log.length - 1; i >= 0; i--) {
      vouchers[i] = voucher;
      if (entryVouches(log[i] as SealLogEntry)) voucher = log[i] as SealLogEntry;
    }
    let signing = false;
    log.forEach((entry, i) => {
      places.set(entry.seal.session_id, { entry, afterSigning: signing, voucher: vouchers[i] ?? null });
      if (entrySigned(entry)) signing = true;
    });
  }
  return places;
}

/** What reading a seal log found. */
export interface SealLogRead {
  readonly entries: readonly SealLogEntry[];
  /** The first problem: a line that is not an entry, or a broken link. */
  readonly problem: { readonly line: number; readonly message: string } | null;
}

/** A sessions folder's seal log, read once for many sessions. */
export interface SealLogView {
  readonly read: SealLogRead;
  readonly places: ReadonlyMap<string, SealLogPlace>;
  /** With keys: the first entry whose signature fails (the log was rewritten), else null. */
  readonly signatureProblem: string | null;
  /**
   * How the log and its anchor copy (config `anchor_dir`) disagree, by session id, when the copy
   * is consulted (store/seal-log-anchor.ts): such a session is `damaged: seal_mismatch`.
   */
  readonly anchor?: ReadonlyMap<string, string>;
  /** The anchor copy's own first problem (a line that is not an entry, a broken link), when it is consulted. */
  readonly anchorProblem?: SealLogRead['problem'];
}

/** The hash of an entry: the trail's rule, over the canonical text of the seal. */
export function sealEntryHash(prevHash: string | null, seal: Seal): string {
  return contentHash(prevHash, canonicalJson(seal, 'seal'));
}

// Closes in several processes append to one log: each append holds the lock a few ms at most.
const LOCK_WAIT_MS = 5000;
const LOCK_RETRY_MS = 5;

/**
 * Appends a seal, linked to the last entry.
 * @throws TrailWriteError when the log cannot be written or its lock is held too long
 */
export function appendSeal(logPath: string, seal: Seal, signer: Signer | null = null): SealLogEntry {
  try {
    makeFolder(path.dirname(logPath));
  } catch (error) {
    throw new TrailWriteError(logPath, error);
  }
  const lockPath = `${logPath}.lock`;
  const deadline = Date.now() + LOCK_WAIT_MS;
  while (tryLock(lockPath, seal.session_id, logPath) !== null) {
    if (Date.now() > deadline) throw new TrailWriteError(logPath, new Error(`its lock ${lockPath} is held by another process`));
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, LOCK_RETRY_MS);
  }
  try {
    const { prevHash, torn } = lastHash(logPath);
    const hash = sealEntryHash(prevHash, seal);
    const entry: SealLogEntry = { seal, prev_hash: prevHash, hash, key_id: signer?.keyId ?? null, signature: signer === null ? null : signer.sign(sealLogText(hash)) };
    // A last line cut short (an append that never finished) is ended where it stands, so the new
    // entry is a line of its own: the log shows the torn line to its readers, and closes go on.
    fs.appendFileSync(logPath, `${torn ? '\n' : ''}${JSON.stringify(entry)}\n`, { mode: 0o644 });
    return entry;
  } catch (error) {
    throw new TrailWriteError(logPath, error);
  } finally {
    removeFile(lockPath);
  }
}

/**
 * The hash of the last whole entry, read from the end of the file, and whether a torn line (one
 * without its newline) follows it.
 */
function lastHash(logPath: string): { prevHash: string | null; torn: boolean } {
  let fd: number;
  try {
    fd = fs.openSync(logPath, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { prevHash: null, torn: false };
    throw error;
  }
  try {
    const size = fs.fstatSync(fd).size;
    if (size === 0) return { prevHash: null, torn: false };
    const length = Math.min(size, 64 * 1024);
    const buffer = Buffer.alloc(length);
    fs.readSync(fd, buffer, 0, length, size - length);
    const torn = buffer[length - 1] !== 0x0a;
    const lines = buffer.toString('utf8').split('\n');
    if (torn) lines.pop();
    const whole = lines.filter((line) => line.trim() !== '');
    if (whole.length === 0 && torn && size === length) return { prevHash: null, torn };
    const entry = parseJsonStrict(whole[whole.length - 1] ?? '{}') as Partial<SealLogEntry>;
    if (typeof entry.hash !== 'string') throw new AuraError('READ_FAILED', `${logPath}: its last line is not a seal entry`, { data: { path: logPath } });
    return { prevHash: entry.hash, torn };
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Reads a seal log and walks its chain. A missing log reads as empty.
 * @throws ReadError when it is there but cannot be read (a folder in its place, no permission)
 */
export function readSealLog(logPath: string): SealLogRead {
  return walkedSealLog(readSealLogBytes(logPath));
}

/** A seal log's bytes walked as {@link readSealLog} does (null: there is none, which reads as empty). */
export function walkedSealLog(bytes: Buffer | null): SealLogRead {
  if (bytes === null) return { entries: [], problem: null };
  const entries: SealLogEntry[] = [];
  return { entries, problem: walkSealLog(bytes, { end: 0, lines: 0, prev: null }, entries).problem };
}

/**
 * A seal log's bytes, or null when there is none.
 * @throws ReadError when it is there but cannot be read
 */
export function readSealLogBytes(logPath: string): Buffer | null {
  try {
    return readRegularFile(logPath, 'seal log');
  } catch (error) {
    if (error instanceof NotFoundError) return null;
    throw error;
  }
}

/** How far a walk of a seal log got: the bytes of whole lines read, their count, and the last entry's hash. */
export interface SealLogMark {
  readonly end: number;
  readonly lines: number;
  readonly prev: string | null;
}

/**
 * Walks a seal log's lines from `from`, appending each entry that links and matches its hash to
 * `entries`, until the first problem. `whole` marks where the lines ending in a newline end: a
 * last line without one is read too (as the full read always did), but a writer may still be
 * adding to it, so a follower resumes before it.
 */
export function walkSealLog(bytes: Buffer, from: SealLogMark, entries: SealLogEntry[]): { readonly problem: SealLogRead['problem']; readonly whole: SealLogMark } {
  let whole = from;
  let prev = from.prev;
  let at = from.end;
  for (let number = from.lines + 1; at < bytes.length; number++) {
    const newline = bytes.indexOf(0x0a, at);
    const next = newline < 0 ? bytes.length : newline + 1;
    const line = bytes.toString('utf8', at, newline < 0 ? bytes.length : newline);
    at = next;
    if (line.trim() !== '') {
      let entry: SealLogEntry;
      try {
        entry = parseJsonStrict(line) as SealLogEntry;
      } catch {
        return { problem: { line: number, message: `line ${number} is not JSON` }, whole };
      }
      if (entry === null || typeof entry !== 'object' || typeof entry.seal !== 'object' || entry.seal === null || typeof entry.hash !== 'string') {
        return { problem: { line: number, message: `line ${number} is not a seal entry` }, whole };
      }
      if (entry.prev_hash !== prev) return { problem: { line: number, message: `line ${number} does not link to the entry before it (a seal deleted or reordered)` }, whole };
      if (sealEntryHash(prev, entry.seal) !== entry.hash) return { problem: { line: number, message: `line ${number}: the seal does not match its hash (edited)` }, whole };
      entries.push(entry);
      prev = entry.hash;
    }
    if (newline >= 0) whole = { end: next, lines: number, prev };
  }
  return { problem: null, whole };
}
