/**
 * The sessions folder at a glance: one row a session (store/session-view.ts), with its status from
 * the one status module and its verdict and findings from the detector re-run on its trail.
 */

import * as path from 'node:path';
import type { KeyRing } from '../spine/signing.js';
import { SessionIndex, type IndexedSession } from './session-index.js';
import { refusalOf, sessionFiles, type SkippedFile } from './session-files.js';
import type { SealLogView } from './seal-log.js';
import { deletedSession, type SessionListing } from './session-view.js';

export type { FindingCounts, SessionListing, SessionState } from './session-view.js';

/** Where to list, and the keys to check signatures against. */
export interface ListOptions {
  /** The folder's seal log (default: `seals.jsonl` beside the sessions folder). */
  readonly sealLog?: string;
  readonly keys?: KeyRing | null;
  /** The seal log's anchor copy (config `anchor_dir`), or null. */
  readonly anchorLog?: string | null;
}

/** Lists the sessions in the folder, oldest first. */
export function listSessions(sessionsDir: string, options: ListOptions = {}): SessionListing[] {
  return listFolder(sessionsDir, options).sessions;
}

/**
 * The sessions in the folder, oldest first, and the files named like a trail that are no
 * session's (a FIFO, a device, a folder, a symlink loop or out of the folder: never followed).
 * @throws ReadError when the folder or its seal log cannot be read
 */
export function listFolder(sessionsDir: string, options: ListOptions = {}): { readonly sessions: SessionListing[]; readonly skipped: SkippedFile[] } {
  const index = new SessionIndex(sessionsDir, options.sealLog ?? path.join(path.dirname(sessionsDir), 'seals.jsonl'), { keys: options.keys ?? null, keep: true, anchorLog: options.anchorLog ?? null });
  const indexed = index.sessionsNow();
  const skipped: SkippedFile[] = [];
  for (const session of indexed) {
    if (session.view.row !== null) continue;
    const trail = sessionFiles(sessionsDir, session.id).trail;
    const why = refusalOf(trail);
    if (why !== null) skipped.push({ path: trail, why });
  }
  const held = new Set(indexed.map((session) => session.id));
  const anyGone = index.sealedSessions().some((id) => !held.has(id));
  return { sessions: listingOf(indexed, anyGone ? index.sealLogView : null), skipped: skipped.sort((a, b) => compareText(a.path, b.path)) };
}

/**
 * The rows of indexed sessions, oldest first: the sessions with a trail that may be read, and
 * those `log` seals whose trail is gone (`deleted`, whatever else of them is left). `log` is null
 * when no session it seals is gone.
 */
export function listingOf(sessions: readonly IndexedSession[], log: SealLogView | null): SessionListing[] {
  const gone = log === null ? [] : goneSessions(sessions, log).map((session) => session.row);
  const rows = [...gone, ...sessions.flatMap((session) => (session.view.row === null ? [] : [session.view.row]))];
  return rows.sort((a, b) => compareText(a.opened_at ?? '', b.opened_at ?? '') || compareText(a.session_id, b.session_id));
}

/** The sessions `log` seals of which the folder holds no file at all: each as {@link deletedSession} shows it. */
export function goneSessions(sessions: readonly IndexedSession[], log: SealLogView): ReturnType<typeof deletedSession>[] {
  const held = new Set(sessions.map((session) => session.id));
  return [...log.places].flatMap(([id, place]) => (held.has(id) ? [] : [deletedSession(id, place, null, log.anchor?.get(id))]));
}

/** Code point order: the timestamps aura writes (one ISO form) and session ids sort by it, faster than by locale. */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
