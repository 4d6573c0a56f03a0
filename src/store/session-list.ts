/**
 * The sessions folder at a glance: one row a session (store/session-view.ts), with its status from
 * the one status module and its verdict and findings from the detector re-run on its trail.
 */

import * as path from 'node:path';
import type { KeyRing } from '../spine/signing.js';
import { SessionIndex, type IndexedSession } from './session-index.js';
import type { SessionListing } from './session-view.js';

export type { FindingCounts, SessionListing, SessionState } from './session-view.js';

/** Where to list, and the keys to check signatures against. */
export interface ListOptions {
  /** The folder's seal log (default: `seals.jsonl` beside the sessions folder). */
  readonly sealLog?: string;
  readonly keys?: KeyRing | null;
}

/** Lists the sessions in the folder, oldest first. */
export function listSessions(sessionsDir: string, options: ListOptions = {}): SessionListing[] {
  const index = new SessionIndex(sessionsDir, options.sealLog ?? path.join(path.dirname(sessionsDir), 'seals.jsonl'), { keys: options.keys ?? null, keep: true });
  return listingOf(index.sessionsNow());
}

/** The rows of indexed sessions, oldest first: the sessions with a trail that may be read. */
export function listingOf(sessions: readonly IndexedSession[]): SessionListing[] {
  const rows = sessions.flatMap((session) => (session.view.row === null ? [] : [session.view.row]));
  return rows.sort((a, b) => compareText(a.opened_at ?? '', b.opened_at ?? '') || compareText(a.session_id, b.session_id));
}

/** Code point order: the timestamps aura writes (one ISO form) and session ids sort by it, faster than by locale. */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
