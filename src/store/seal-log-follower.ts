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
import { fileStamp, sameStamp, type FileStamp } from './file-stamp.js';
import { readSealLogBytes, walkSealLog, type SealLogEntry, type SealLogMark, type SealLogRead } from './seal-log.js';

/** The whole lines verified so far, and the bytes they were verified from (those up to the mark). */
interface Verified {
  readonly mark: SealLogMark;
  readonly entries: readonly SealLogEntry[];
  readonly bytes: Buffer;
}

const START: SealLogMark = { end: 0, lines: 0, prev: null };
const NOTHING: Verified = { mark: START, entries: [], bytes: Buffer.alloc(0) };

/** What a follower verified, as kept between processes (store/index-file.ts): its entries and the digest of their bytes. */
export interface FollowedLog {
  readonly mark: SealLogMark;
  readonly entries: readonly SealLogEntry[];
  readonly digest: string;
}

/** One seal log, followed. */
export class SealLogFollower {
  private verified: Verified = NOTHING;
  private stamp: FileStamp | null = null;
  private read: SealLogRead = { entries: [], problem: null };

  /** The log as {@link current} last read it. */
  get last(): SealLogRead {
    return this.read;
  }
  /** What the log says, in one string: its entries (each hash chains over those before it) and its first problem. */
  identity = '';

  /** @param kept what a follower of this log verified before, taken again once the log still starts with those bytes */
  constructor(
    readonly logPath: string,
    private kept: FollowedLog | null = null,
  ) {}

  /** How many bytes of the log it has verified. */
  get verifiedBytes(): number {
    return this.verified.mark.end;
  }

  /** What it has verified, to be kept. */
  followed(): FollowedLog {
    const { mark, entries, bytes } = this.verified;
    return { mark, entries, digest: digestOf([bytes.subarray(0, mark.end)]) };
  }

  /**
   * The log as it is now.
   * @throws ReadError when it is there but cannot be read
   */
  current(): SealLogRead {
    // The stamp is taken before the read: a write during it changes the stamp, so it shows next time.
    const stamp = fileStamp(this.logPath);
    if (this.stamp !== null && sameStamp(this.stamp, stamp)) return this.read;
    const bytes = readSealLogBytes(this.logPath);
    this.stamp = stamp;
    this.update(bytes ?? Buffer.alloc(0));
    return this.read;
  }

  private update(bytes: Buffer): void {
    let verified = this.kept === null ? this.stillVerified(bytes) : this.takeKept(bytes);
    const entries = [...verified.entries];
    const { problem, whole } = walkSealLog(bytes, verified.mark, entries);
    if (whole.end > verified.mark.end) {
      verified = { mark: whole, entries: entries.slice(0, entriesUpTo(entries, verified.entries.length, whole)), bytes };
    }
    this.verified = verified;
    this.read = { entries, problem };
    this.identity = `${entries.length} ${entries.at(-1)?.hash ?? '-'} ${problem === null ? '-' : `${problem.line} ${problem.message}`}`;
  }

  /** What was verified, when the log still begins with the bytes it was verified from; else nothing. */
  private stillVerified(bytes: Buffer): Verified {
    const verified = this.verified;
    const end = verified.mark.end;
    if (end === 0 || (bytes.length >= end && bytes.subarray(0, end).equals(verified.bytes.subarray(0, end)))) return verified;
    return NOTHING;
  }

  /** What a follower before verified, taken as {@link stillVerified} takes its own. */
  private takeKept(bytes: Buffer): Verified {
    const kept = this.kept as FollowedLog;
    this.kept = null;
    if (bytes.length < kept.mark.end) return NOTHING;
    return digestOf([bytes.subarray(0, kept.mark.end)]) === kept.digest ? { mark: kept.mark, entries: kept.entries, bytes } : NOTHING;
  }
}

/** How many of `entries` lie within the whole lines up to `whole` (a last line without its newline may add one past them). */
function entriesUpTo(entries: readonly SealLogEntry[], before: number, whole: SealLogMark): number {
  for (let i = entries.length; i > before; i--) if ((entries[i - 1] as SealLogEntry).hash === whole.prev) return i;
  return before;
}
