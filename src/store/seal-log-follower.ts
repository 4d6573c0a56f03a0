/**
 * A seal log followed as it grows: a long-running reader re-reads the whole file only when it
 * changed, and then verifies only the lines appended since it last did. The prefix it verified
 * before is compared byte for byte with the bytes it verified, kept (a compare costs a fraction of
 * hashing them again: a log written every second is read again at every call, its stamp being too
 * recent to trust), so an entry edited, removed or reordered before that point sends it back to a
 * full walk: what it answers is always what
 * {@link readSealLog} would answer on the same bytes.
 */

import { digestOf } from '../spine/hash.js';
import { parseJson } from '../spine/native-json.js';
import { fileStamp, sameStamp, type FileStamp } from './file-stamp.js';
import { readSealLogBytes, walkSealLog, type SealLogEntry, type SealLogMark, type SealLogRead } from './seal-log.js';

/** The whole lines verified so far, and the bytes they were verified from (those up to the mark). */
interface Verified {
  readonly mark: SealLogMark;
  /** How many entries those lines hold. */
  readonly count: number;
  /** Those entries; null until asked for when the verification was taken from a kept {@link FollowedLog}. */
  readonly entries: readonly SealLogEntry[] | null;
  readonly bytes: Buffer;
}

const START: SealLogMark = { end: 0, lines: 0, prev: null };
const NOTHING: Verified = { mark: START, count: 0, entries: [], bytes: Buffer.alloc(0) };

/**
 * What a follower verified, as kept between processes (store/index-file.ts): how far, and the
 * digest of those bytes. Not the entries: a reader whose log did not change never needs them, and
 * for 10,000 sessions they were two thirds of the kept index's parse.
 */
export interface FollowedLog {
  readonly mark: SealLogMark;
  readonly count: number;
  readonly digest: string;
}

/** One seal log, followed. */
export class SealLogFollower {
  private verified: Verified = NOTHING;
  /** Entries read past the verified lines (a last line without its newline), and the first problem. */
  private after: readonly SealLogEntry[] = [];
  private problem: SealLogRead['problem'] = null;
  private read: SealLogRead | null = { entries: [], problem: null };
  private stamp: FileStamp | null = null;
  /** What the log says, in one string: its entries (each hash chains over those before it), the rewrites seen, and its first problem. */
  identity = '';
  private rewrites = 0;

  /** @param kept what a follower of this log verified before, taken again once the log still starts with those bytes */
  constructor(
    readonly logPath: string,
    private kept: FollowedLog | null = null,
  ) {}

  /** The log as {@link refresh} last read it. */
  get last(): SealLogRead {
    this.read ??= { entries: [...this.verifiedEntries(), ...this.after], problem: this.problem };
    return this.read;
  }

  /** How many bytes of the log it has verified. */
  get verifiedBytes(): number {
    return this.verified.mark.end;
  }

  /** What it has verified, to be kept. */
  followed(): FollowedLog {
    const { mark, count, bytes } = this.verified;
    return { mark, count, digest: digestOf([bytes.subarray(0, mark.end)]) };
  }

  /**
   * The log as it is now.
   * @throws ReadError when it is there but cannot be read
   */
  current(): SealLogRead {
    this.refresh();
    return this.last;
  }

  /**
   * Reads the log again when it changed: {@link identity} is then up to date, and the entries are
   * taken only when {@link last} is asked for.
   * @throws ReadError when it is there but cannot be read
   */
  refresh(): void {
    // The stamp is taken before the read: a write during it changes the stamp, so it shows next time.
    const stamp = fileStamp(this.logPath);
    if (this.stamp !== null && sameStamp(this.stamp, stamp)) return;
    const bytes = readSealLogBytes(this.logPath);
    this.stamp = stamp;
    this.update(bytes ?? Buffer.alloc(0));
  }

  private update(bytes: Buffer): void {
    const before = this.kept === null ? this.verified.mark.end : this.kept.mark.end;
    let verified = this.kept === null ? this.stillVerified(bytes) : this.takeKept(bytes);
    // Bytes verified before are not there now: the log was rewritten, not appended to. It may name
    // the same seals, linked the same way, and differ in the entries' own signatures, which the
    // count and the head do not show.
    if (before > 0 && verified.mark.end === 0) this.rewrites++;
    let after: SealLogEntry[] = [];
    const { problem, whole } = walkSealLog(bytes, verified.mark, after);
    if (whole.end > verified.mark.end) {
      const within = entriesUpTo(after, whole);
      const entries = verified.entries === null ? null : [...verified.entries, ...after.slice(0, within)];
      verified = { mark: whole, count: verified.count + within, entries, bytes };
      after = after.slice(within);
    }
    this.verified = verified;
    this.after = after;
    this.problem = problem;
    this.read = null;
    const head = after.at(-1)?.hash ?? verified.mark.prev ?? '-';
    this.identity = `${verified.count + after.length} ${head} ${this.rewrites} ${problem === null ? '-' : `${problem.line} ${problem.message}`}`;
  }

  /**
   * The verified entries, taken from their bytes again when they came from a kept log: those
   * bytes are the ones verified (their digest matched), and every line of them was a seal entry
   * `walkSealLog` accepted, so `parseJson` gives the values its strict parse gave.
   */
  private verifiedEntries(): readonly SealLogEntry[] {
    const verified = this.verified;
    if (verified.entries !== null) return verified.entries;
    const texts: string[] = [];
    const bytes = verified.bytes;
    for (let at = 0; at < verified.mark.end; ) {
      const newline = bytes.indexOf(0x0a, at);
      const text = bytes.toString('utf8', at, newline);
      if (text.trim() !== '') texts.push(text);
      at = newline + 1;
    }
    const entries = parseJson(`[${texts.join(',')}]`) as SealLogEntry[];
    this.verified = { ...verified, entries };
    return entries;
  }

  /** What was verified, when the log still begins with the bytes it was verified from; else nothing. */
  private stillVerified(bytes: Buffer): Verified {
    const verified = this.verified;
    const end = verified.mark.end;
    if (end === 0 || (bytes.length >= end && bytes.subarray(0, end).equals(verified.bytes.subarray(0, end)))) return { ...verified, bytes };
    return NOTHING;
  }

  /** What a follower before verified, taken as {@link stillVerified} takes its own. */
  private takeKept(bytes: Buffer): Verified {
    const kept = this.kept as FollowedLog;
    this.kept = null;
    if (bytes.length < kept.mark.end) return NOTHING;
    return digestOf([bytes.subarray(0, kept.mark.end)]) === kept.digest ? { mark: kept.mark, count: kept.count, entries: null, bytes } : NOTHING;
  }
}

/** How many of `entries`, read from a mark on, lie within the whole lines up to `whole` (a last line without its newline may add one past them). */
function entriesUpTo(entries: readonly SealLogEntry[], whole: SealLogMark): number {
  for (let i = entries.length; i > 0; i--) if ((entries[i - 1] as SealLogEntry).hash === whole.prev) return i;
  return 0;
}
