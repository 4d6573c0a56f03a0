/**
 * A followed seal log's view (store/session-status.ts's sealLogViewOf) kept up to date as the log
 * grows. A log mostly grows by appends, and an append changes few places: its own entries', and,
 * when an appended entry is signed, those of the last signed entry and the entries since (it now
 * vouches for them) and, with keys, of the entries since the last entry whose signature
 * verified (a newer one now covers them). Every other place rests on entries that did not change,
 * so only those are recomputed, and which sessions they are is told to the caller. Anything but an
 * append (an entry edited, removed, re-signed) rebuilds the view from the first entry, with the
 * same code, so an append and a rebuild cannot disagree.
 *
 * The entries are taken as one chain in log order, each linking the one before, as readSealLog and
 * the follower give them.
 */

import type { KeyRing } from '../spine/signing.js';
import { entrySigned, entryVouches, type SealLogEntry, type SealLogPlace, type SealLogRead, type SealLogView } from './seal-log.js';
import { entrySignatureProblem } from './session-status.js';

/** A seal log's view, grown with its log. */
export class GrowingSealLogView {
  private read: SealLogRead = { entries: [], problem: null };
  /** The places, changed in place as the log grows: a view given out reads the log as last updated. */
  private readonly places = new Map<string, SealLogPlace>();
  /** Where each session's place is: its last entry, by index. */
  private readonly at = new Map<string, number>();
  private firstSigned = -1;
  private lastSigned = -1;
  /** With keys: the newest signed entry whose signature verifies, and the signed entries after it that fail (by hash), first failed first. */
  private vouched = -1;
  private failed = new Map<string, string>();
  /** Null until the first build, and after a rebuild: every place may have changed. */
  private changed: Set<string> | null = null;
  private current: SealLogView = { read: this.read, places: this.places, signatureProblem: null };

  constructor(private readonly keys: KeyRing | null) {}

  /** The view of the log as `read` reads it. */
  of(read: SealLogRead): SealLogView {
    if (read === this.read) return this.current;
    const before = this.read.entries;
    const entries = read.entries;
    let appended = entries.length >= before.length;
    for (let i = 0; appended && i < before.length; i++) appended = sameEntry(before[i] as SealLogEntry, entries[i] as SealLogEntry);
    if (!appended) this.reset();
    this.grow(entries, appended ? before.length : 0);
    this.read = read;
    this.current = { read, places: this.places, signatureProblem: this.failed.values().next().value ?? null };
    return this.current;
  }

  /** The sessions whose place changed since this was last asked (null: any may have), and forgets them. */
  takeChanged(): ReadonlySet<string> | null {
    const changed = this.changed;
    this.changed = new Set();
    return changed;
  }

  private reset(): void {
    this.places.clear();
    this.at.clear();
    this.firstSigned = this.lastSigned = this.vouched = -1;
    this.failed = new Map();
    this.changed = null;
  }

  /** Takes in the entries from `from` on, and recomputes the places they can change. */
  private grow(entries: readonly SealLogEntry[], from: number): void {
    const lastSigned = this.lastSigned;
    const vouched = this.vouched;
    for (let i = from; i < entries.length; i++) {
      const entry = entries[i] as SealLogEntry;
      // A session sealed again takes its place from its last entry.
      this.at.set(entry.seal.session_id, i);
      if (entrySigned(entry) && this.firstSigned < 0) this.firstSigned = i;
      if (entryVouches(entry)) this.lastSigned = i;
    }
    if (this.keys !== null) this.checkSignatures(entries, from, this.keys);
    let low = from;
    // A new signed entry vouches for the entries after the last signed one, and for that one.
    if (this.lastSigned !== lastSigned) low = Math.min(low, Math.max(lastSigned, 0));
    if (this.vouched !== vouched) low = Math.min(low, vouched + 1);
    let voucher: SealLogEntry | null = null;
    for (let i = entries.length - 1; i >= low; i--) {
      const entry = entries[i] as SealLogEntry;
      const id = entry.seal.session_id;
      if (this.at.get(id) === i) {
        const place: SealLogPlace = { entry, afterSigning: this.firstSigned >= 0 && this.firstSigned < i, voucher, hashChecked: true };
        this.places.set(id, this.keys === null ? place : { ...place, signatureProblem: i <= this.vouched ? null : (this.failed.get(entry.hash) ?? (voucher === null ? null : (this.failed.get(voucher.hash) ?? null))) });
        this.changed?.add(id);
      }
      if (entryVouches(entry)) voucher = entry;
    }
  }

  /**
   * As sealLogViewOf: the newest signed entry that verifies vouches for all before it. Appended
   * entries are checked from the last back to the first that verifies; if none does, the entries
   * before them stand as they were checked.
   */
  private checkSignatures(entries: readonly SealLogEntry[], from: number, keys: KeyRing): void {
    const failed: [string, string][] = [];
    for (let i = entries.length - 1; i >= from; i--) {
      const entry = entries[i] as SealLogEntry;
      if (typeof entry.signature !== 'string') continue;
      const problem = entrySignatureProblem(entry, keys, `entry ${i + 1}`);
      if (problem === null) {
        this.vouched = i;
        this.failed = new Map();
        break;
      }
      failed.push([entry.hash, problem]);
    }
    for (const [hash, problem] of failed.reverse()) this.failed.set(hash, problem);
  }
}

/** The same entry: its hash covers its seal and the entry before, so the rest is its own signature. */
function sameEntry(a: SealLogEntry, b: SealLogEntry): boolean {
  return a === b || (a.hash === b.hash && a.prev_hash === b.prev_hash && a.key_id === b.key_id && a.signature === b.signature);
}
