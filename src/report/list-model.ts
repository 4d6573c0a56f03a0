/**
 * The rows of the sessions list page: the listing of `aura sessions list` (each session's status
 * from the one status module, its verdict and findings from the detector on its trail), newest
 * first, with the status as the label the page shows.
 */

import type { KeyRing } from '../spine/signing.js';
import { listSessions } from '../store/session-list.js';
import { statusLabel } from '../store/session-status.js';
import type { SessionOverview } from '../store/source.js';

/** One row of the sessions list page. */
export type SessionsListRow = SessionOverview;

/** One row a session of the folder, newest first. */
export function sessionsListRows(sessionsDir: string, sealLog: string, keys: KeyRing | null, anchorLog: string | null = null): SessionsListRow[] {
  return listSessions(sessionsDir, { sealLog, keys, anchorLog })
    .reverse()
    .map((listing) => ({ ...listing, chain: statusLabel(listing) }));
}
