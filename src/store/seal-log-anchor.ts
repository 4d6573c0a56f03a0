/**
 * The seal log against its anchor copy (config `anchor_dir`): every seal appended to the log since
 * the anchor was set is appended to the copy too. The copy chains its own entries (it may have
 * begun after the log), so the two are compared seal by seal, not entry by entry.
 */

import { isDeepStrictEqual } from 'node:util';
import { readSealLog, type SealLogEntry, type SealLogRead, type SealLogView } from './seal-log.js';

/** Where the log and its copy disagree. */
export interface AnchorComparison {
  /** The sessions whose seal the two disagree on, each with how, by session id. */
  readonly sessions: ReadonlyMap<string, string>;
  /** Sealed in the copy, with no trace in the log nor in `known` (another store's, or deleted whole). */
  readonly strangers: readonly string[];
}

/**
 * Compares a seal log with its anchor copy. A seal the two hold for one session must be the same.
 * A seal only the copy holds was removed from the log. A seal only the log holds was added after
 * the fact when it comes after the first seal the copy also holds (before it, the copy was not
 * yet kept). A session the copy seals that neither the log nor `known` (the sessions folder) has
 * heard of is told apart: the copy may be shared with another store.
 */
export function compareWithAnchor(log: readonly SealLogEntry[], anchor: readonly SealLogEntry[], known: (sessionId: string) => boolean): AnchorComparison {
  // Seals are compared as values, which is how their canonical texts compare: a reader with 10,000 seals asks again at every change of either log.
  const logged = new Map(log.map((entry, i) => [entry.seal.session_id, { seal: entry.seal, at: i }]));
  const sessions = new Map<string, string>();
  const strangers: string[] = [];
  let start = Number.POSITIVE_INFINITY;
  const anchored = new Set<string>();
  for (const entry of anchor) {
    const id = entry.seal.session_id;
    anchored.add(id);
    const mine = logged.get(id);
    if (mine === undefined) {
      if (known(id)) sessions.set(id, `the seal log's anchor copy seals it (${String(entry.seal.events)} events) but the seal log does not: its seal was removed`);
      else strangers.push(id);
    } else if (!isDeepStrictEqual(mine.seal, entry.seal)) sessions.set(id, "its seal in the seal log differs from the anchor copy's: one of the two was rewritten");
    else start = Math.min(start, mine.at);
  }
  for (const [id, { at }] of logged) {
    if (at > start && !anchored.has(id)) sessions.set(id, 'the seal log seals it but its anchor copy does not: the entry was added to the log after the fact');
  }
  return { sessions, strangers };
}

/**
 * The view with how its log and the anchor copy at `anchorLog` disagree, session by session
 * ({@link SealLogView.anchor}); the view as it is without one. A seal only the copy holds counts
 * against the session of that id: a reader asks only of sessions its folder has.
 * @throws ReadError when the copy is there but cannot be read
 */
export function anchoredView(view: SealLogView, anchorLog: string | null): SealLogView {
  return anchorLog === null ? view : withAnchor(view, readSealLog(anchorLog));
}

/** {@link anchoredView} with the anchor copy already read (or followed: store/seal-log-follower.ts). */
export function withAnchor(view: SealLogView, anchor: SealLogRead): SealLogView {
  return { ...view, anchor: compareWithAnchor(view.read.entries, anchor.entries, () => true).sessions, anchorProblem: anchor.problem };
}
