/**
 * The sessions of a folder as its readers show them (store/session-view.ts), kept up to date
 * incrementally: a session is read again only when what its view rests on changed.
 *
 * A view rests on the session's files (trail, summary, lock, spans: their fingerprints, DESIGN §6),
 * on its place in the seal log (its entry, whether an earlier entry is signed, the later signed
 * entry that vouches for it, and what the keys say of those signatures: a new entry can change an
 * older session's status), on whether its writer lives, and on the keys, which are the index's own.
 * The seal log is followed from where it was last verified (store/seal-log-follower.ts). With an
 * anchor copy of the log (config `anchor_dir`), a place also holds what the two say of the
 * session's seal, compared again whenever either changes.
 *
 * Which files changed is learnt from the kernel where it tells exactly (store/folder-watch.ts),
 * else by taking the fingerprint of every file. Files the kernel may not report are fingerprinted
 * at every update whatever it says: a lock (its writer can die without a write), a symlink (its
 * target changes under another name), a file with other links (written under another name); and
 * a slice of the others in turn, so a write the kernel never reports (through a mapping, or a link
 * made from outside) shows within a bounded number of updates.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { ReadError } from '../errors.js';
import type { KeyRing } from '../spine/signing.js';
import { trailWriter } from '../spine/writer.js';
import { fileStamp, MISSING_STAMP, sameStamp, stampOfStats, stampPresent, type FileStamp } from './file-stamp.js';
import { FolderWatch, settled } from './folder-watch.js';
import { indexFileOf, loadIndexFile, saveIndexFile } from './index-file.js';
import { GrowingSealLogView } from './growing-seal-log-view.js';
import { withAnchor } from './seal-log-anchor.js';
import { SealLogFollower, type FollowedLog } from './seal-log-follower.js';
import type { SealLogView } from './seal-log.js';
import { SESSION_ID_PATTERN, sessionFiles } from './session-files.js';
import { sessionView, type SessionView } from './session-view.js';

/** A session's files, in the order of its stamps. */
const SUFFIXES = ['.jsonl', '.summary.json', '.jsonl.lock', '.otel.jsonl'] as const;
const LOCK = 2;
// The spans bear on no view but by being there (an artifact with no trail): their presence is their stamp.
const SPANS = 3;
const PRESENT_STAMP: FileStamp = [0, 0, 0, 0, 0];
const ID_LENGTH = 'aura_sess_'.length + 12;
/** How many sessions a watched update fingerprints in turn beyond those the kernel named. */
const SWEEP = 128;

/** One session of the index, with the view computed for it. */
export interface IndexedSession {
  readonly id: string;
  readonly view: SessionView;
}

/** A session's place in the seal log as its status reads it: entry hash, after signing, voucher hash, signature problem, and how the anchor copy disagrees. */
type Place = readonly [entry: string | null, afterSigning: boolean, voucher: string | null, problem: string | null, anchor: string | null];

const NO_PLACE: Place = [null, false, null, null, null];

function samePlace(a: Place, b: Place): boolean {
  return a[0] === b[0] && a[1] === b[1] && a[2] === b[2] && a[3] === b[3] && a[4] === b[4];
}

interface Slot {
  readonly id: string;
  /** The fingerprints the view was computed from, taken before it was. */
  stamps: readonly FileStamp[];
  /** The seal-log place it was computed with. */
  place: Place;
  /** Its writer's liveness when it has a lock. */
  writerAlive: boolean | null;
  /** A file the kernel may not report changes to: fingerprinted at every update. */
  special: boolean;
  view: SessionView | null;
}

/** How an index learns what changed. */
export interface IndexOptions {
  /** The trusted keys statuses are checked against (null: signatures unchecked). */
  readonly keys: KeyRing | null;
  /** Learn changes from the kernel where it can tell (a long-running reader); else fingerprint every file at each update. */
  readonly watch?: boolean;
  /** Keep the work between processes, in the reader's cache (store/index-file.ts): a reader that runs once, like `aura sessions list`. */
  readonly keep?: boolean;
  /** The seal log's anchor copy (config `anchor_dir`), or null. */
  readonly anchorLog?: string | null;
}

/** The index's work as kept between processes. */
interface KeptIndex {
  readonly log: FollowedLog;
  /** The identity of the log the kept views' places were taken from. */
  readonly placesFrom: string;
  /** The sessions the log seals, as of `placesFrom`. */
  readonly sealed: readonly string[];
  readonly slots: readonly (readonly [id: string, stamps: readonly (readonly (number | null)[])[], place: Place, writerAlive: boolean | null, view: SessionView])[];
}

// Bumped when what is kept changes shape.
const KEPT_FORMAT = '6';

/** The sessions of one folder, indexed. */
export class SessionIndex {
  private readonly prefix: string;
  private readonly log: SealLogFollower;
  private readonly watch: FolderWatch | null;
  private readonly slots = new Map<string, Slot>();
  private sorted: Slot[] | null = null;
  /** The log the views' places were taken from (its identity, and its anchor copy's), and its view, grown with it and made when first needed. */
  private placesFrom = '';
  private readonly logView: GrowingSealLogView;
  private readonly anchor: SealLogFollower | null;
  /** The view with the anchor copy's word, and the identity it was made at. */
  private anchored: { readonly from: string; readonly view: SealLogView } | null = null;
  private sweepAt = 0;
  private readonly keptIn: string | null;
  private changedSinceKept = false;
  private keptLogBytes = -1;
  private keptPlacesFrom = '';
  /** The sessions the log seals, and the log identity they were taken at. */
  private sealed: { readonly from: string; readonly ids: readonly string[] } | null = null;

  constructor(
    readonly sessionsDir: string,
    readonly sealLog: string,
    private readonly options: IndexOptions,
  ) {
    this.prefix = path.join(sessionsDir, path.sep);
    this.watch = options.watch === true ? new FolderWatch(sessionsDir) : null;
    const keys = options.keys?.list().map((key) => key.keyId).sort() ?? [];
    const anchorLog = options.anchorLog ?? null;
    this.anchor = anchorLog === null ? null : new SealLogFollower(anchorLog);
    this.keptIn = options.keep === true ? indexFileOf([KEPT_FORMAT, path.resolve(sessionsDir), path.resolve(sealLog), anchorLog === null ? '' : path.resolve(anchorLog), ...keys]) : null;
    const kept = this.keptIn === null ? null : (loadIndexFile(this.keptIn) as KeptIndex | null);
    this.log = new SealLogFollower(sealLog, kept?.log ?? null);
    this.logView = new GrowingSealLogView(options.keys);
    this.keptLogBytes = kept?.log.mark.end ?? -1;
    this.placesFrom = kept?.placesFrom ?? '';
    this.keptPlacesFrom = this.placesFrom;
    if (kept !== null) this.sealed = { from: kept.placesFrom, ids: kept.sealed };
    for (const [id, stamps, place, writerAlive, view] of kept?.slots ?? []) {
      this.slots.set(id, { id, stamps: stamps.map((stamp) => stamp.map((n) => n ?? NaN) as unknown as FileStamp), place, writerAlive, special: false, view });
    }
  }

  /** The seal log as the last update read it: its problem is a finding of the folder. */
  get sealLogView(): SealLogView {
    const view = this.logView.of(this.log.last);
    if (this.anchor === null) return view;
    if (this.anchored?.from !== this.placesFrom) this.anchored = { from: this.placesFrom, view: withAnchor(view, this.anchor.last) };
    return this.anchored.view;
  }

  /**
   * The sessions the seal log seals, as the last update read it. A reader whose log says what it
   * said when the index was kept takes them from the kept index, without the log's entries: a
   * listing needs those only for a sealed session whose files are gone.
   */
  sealedSessions(): readonly string[] {
    if (this.sealed?.from !== this.placesFrom) this.sealed = { from: this.placesFrom, ids: [...this.sealLogView.places.keys()] };
    return this.sealed.ids;
  }

  /** The log's identity, with its anchor copy's when it has one: either changing may move places. */
  private placesIdentity(): string {
    if (this.anchor === null) return this.log.identity;
    this.anchor.refresh();
    return `${this.log.identity}|${this.anchor.identity}`;
  }

  /**
   * Every session of the folder as it is now, in session id order: every write made before the
   * call is in the answer.
   * @throws ReadError when the folder or the seal log cannot be read
   */
  async sessions(): Promise<readonly IndexedSession[]> {
    if (this.watch !== null) await settled();
    return this.sessionsNow(this.watch?.take() ?? null);
  }

  /**
   * As {@link sessions}, without the kernel's word: every file is fingerprinted.
   * @throws ReadError when the folder or the seal log cannot be read
   */
  sessionsNow(changed: ReadonlySet<string> | null = null): readonly IndexedSession[] {
    this.log.refresh();
    // A log that says what it said when the views were computed leaves every place as it was.
    const identity = this.placesIdentity();
    const logChanged = identity !== this.placesFrom;
    this.placesFrom = identity;
    if (changed === null) this.checkAll();
    else this.checkChanged(changed);
    const slots = this.ordered();
    if (logChanged) this.dropMovedViews(slots);
    for (const slot of slots) if (slot.view === null) this.compute(slot);
    if (this.keptIn !== null && (this.changedSinceKept || this.log.verifiedBytes !== this.keptLogBytes || this.placesFrom !== this.keptPlacesFrom)) this.keep(this.keptIn, slots);
    // Every slot has its view now.
    return slots as readonly IndexedSession[];
  }

  /** Drops the views of the sessions whose place in the log moved: after an append, only those of the sessions it can move are compared. */
  private dropMovedViews(slots: readonly Slot[]): void {
    this.logView.of(this.log.last);
    // What the anchor copy says of a seal may change with any entry of either log: every place is compared then.
    const logChanges = this.logView.takeChanged();
    const changed = this.anchor === null ? logChanges : null;
    const moved = (slot: Slot | undefined): void => {
      if (slot?.view !== null && slot?.view !== undefined && !samePlace(this.placeOf(slot.id), slot.place)) slot.view = null;
    };
    if (changed === null) slots.forEach(moved);
    else for (const id of changed) moved(this.slots.get(id));
  }

  private keep(file: string, slots: readonly Slot[]): void {
    this.changedSinceKept = false;
    this.keptLogBytes = this.log.verifiedBytes;
    this.keptPlacesFrom = this.placesFrom;
    const kept: KeptIndex = { log: this.log.followed(), placesFrom: this.placesFrom, sealed: this.sealedSessions(), slots: slots.map((slot) => [slot.id, slot.stamps, slot.place, slot.writerAlive, slot.view as SessionView]) };
    saveIndexFile(file, kept);
  }

  /** Stops watching the folder. */
  close(): void {
    this.watch?.close();
  }

  /** Every file of the folder fingerprinted, from one listing. */
  private checkAll(): void {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(this.sessionsDir, { withFileTypes: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw new ReadError(this.sessionsDir, error);
      entries = [];
    }
    const found = new Map<string, (fs.Dirent | undefined)[]>();
    for (const entry of entries) {
      const name = entry.name;
      // Suffix checks before the pattern: on 30,000 names the cheap test decides most.
      if (!(name.endsWith('.jsonl') || name.endsWith('.summary.json') || name.endsWith('.lock'))) continue;
      const kind = SUFFIXES.indexOf(name.slice(ID_LENGTH) as (typeof SUFFIXES)[number]);
      const id = name.slice(0, ID_LENGTH);
      if (kind < 0 || !SESSION_ID_PATTERN.test(id)) continue;
      let files = found.get(id);
      if (files === undefined) found.set(id, (files = [undefined, undefined, undefined, undefined]));
      files[kind] = entry;
    }
    for (const id of this.slots.keys()) if (!found.has(id)) this.drop(id);
    // A lock alone is no session: its trail is still to be created, or already gone.
    for (const [id, files] of found) if (files.every((entry, i) => i === LOCK || entry === undefined)) found.delete(id);
    const now = Date.now();
    for (const [id, files] of found) {
      const slot = this.slotOf(id);
      let special = false;
      const regular = files.every((entry) => entry === undefined || entry.isFile());
      const stamps = files.map((entry, i) => {
        if (entry === undefined) return MISSING_STAMP;
        if (i === SPANS) return PRESENT_STAMP;
        const file = this.prefix + id + (SUFFIXES[i] as string);
        if (!entry.isFile()) return fileStamp(file);
        try {
          const s = fs.statSync(file);
          if (s.nlink > 1) special = true;
          return stampOfStats(s, now);
        } catch {
          return MISSING_STAMP;
        }
      });
      this.settle(slot, stamps, special || !regular, regular);
    }
  }

  /** The sessions the kernel named, those it may not report on, and a slice of the others. */
  private checkChanged(changed: ReadonlySet<string>): void {
    const ids = new Set<string>();
    for (const name of changed) {
      const id = name.slice(0, ID_LENGTH);
      if (SUFFIXES.includes(name.slice(ID_LENGTH) as (typeof SUFFIXES)[number]) && SESSION_ID_PATTERN.test(id)) ids.add(id);
    }
    for (const slot of this.slots.values()) if (slot.special || stampPresent(slot.stamps[LOCK] as FileStamp)) ids.add(slot.id);
    const slots = this.ordered();
    for (let i = 0; i < Math.min(SWEEP, slots.length); i++) {
      const slot = slots[(this.sweepAt + i) % slots.length] as Slot;
      if (slot.stamps.some((stamp, at) => at !== SPANS && stampPresent(stamp) && !sameStamp(stamp, fileStamp(this.prefix + slot.id + (SUFFIXES[at] as string))))) ids.add(slot.id);
    }
    this.sweepAt = slots.length === 0 ? 0 : (this.sweepAt + SWEEP) % slots.length;
    for (const id of ids) this.checkOne(id);
  }

  private checkOne(id: string): void {
    let special = false;
    let regular = true;
    const stamps = SUFFIXES.map((suffix, i) => {
      const file = this.prefix + id + suffix;
      const link = fs.lstatSync(file, { throwIfNoEntry: false });
      if (link === undefined) return MISSING_STAMP;
      if (i === SPANS) return PRESENT_STAMP;
      if (link.nlink > 1) special = true;
      if (!link.isFile()) regular = false;
      return link.isFile() ? stampOfStats(link, Date.now()) : fileStamp(file);
    });
    if (!stamps.some((stamp, i) => i !== LOCK && stampPresent(stamp))) {
      this.drop(id);
      return;
    }
    this.settle(this.slotOf(id), stamps, special || !regular, regular);
  }

  /**
   * Keeps the slot's view when its fingerprints and its writer's liveness are as they were. A
   * session with a file that is not a regular one (a symlink: whether it may be read rests on where
   * it leads) is read again each time.
   */
  private settle(slot: Slot, stamps: readonly FileStamp[], special: boolean, regular: boolean): void {
    slot.special = special;
    const writerAlive = stampPresent(stamps[LOCK] as FileStamp) ? (trailWriter(this.prefix + slot.id + '.jsonl')?.alive ?? null) : null;
    const same = regular && slot.view !== null && writerAlive === slot.writerAlive && stamps.every((stamp, i) => sameStamp(stamp, slot.stamps[i] as FileStamp));
    if (same) return;
    slot.stamps = stamps;
    slot.writerAlive = writerAlive;
    slot.view = null;
  }

  private compute(slot: Slot): void {
    this.changedSinceKept = true;
    slot.place = this.placeOf(slot.id);
    slot.view = sessionView(sessionFiles(this.sessionsDir, slot.id), this.sealLogView, this.options.keys);
  }

  /** What the session's status takes from the seal log: its entry, whether signing had begun, its voucher, what the keys say of them. */
  private placeOf(id: string): Place {
    const view = this.sealLogView;
    const place = view.places.get(id);
    return [place?.entry.hash ?? null, place?.afterSigning ?? false, place?.voucher?.hash ?? null, place?.signatureProblem ?? null, view.anchor?.get(id) ?? null];
  }

  private slotOf(id: string): Slot {
    let slot = this.slots.get(id);
    if (slot === undefined) {
      slot = { id, stamps: [], place: NO_PLACE, writerAlive: null, special: false, view: null };
      this.slots.set(id, slot);
      this.sorted = null;
    }
    return slot;
  }

  private drop(id: string): void {
    if (!this.slots.delete(id)) return;
    this.sorted = null;
    this.changedSinceKept = true;
  }

  private ordered(): Slot[] {
    this.sorted ??= [...this.slots.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return this.sorted;
  }
}
