/**
 * The reading interface of a sessions store (DESIGN §1): the local sessions folder and the fleet
 * store on PostgreSQL both answer it, so every reader (`sessions list`, `report show`, `report
 * html`, `aura ui`, `aura mcp`) takes a source and never asks where the bytes live.
 *
 * A session is handed to the readers as its material: the trail's lines and the stored summary's
 * text, read on demand. Everything in it is untrusted (a trail may be hand-edited, a row edited by
 * a database superuser): readers verify what they read.
 */

import type { KeyRing } from '../spine/signing.js';
import type { SessionMaterial } from './material.js';
import type { SessionListing } from './session-list.js';

/** A session as the sessions list page shows it: the listing, with its status as a label. */
export interface SessionOverview extends SessionListing {
  /** The status label (store/session-status.ts `statusLabel`): `verified`, `damaged: edited`, … */
  readonly chain: string;
}

/** A session's material, and the keys it is judged with (see {@link SessionSource.keysOf}). */
export async function materialWithKeys(source: SessionSource, sessionKey: string, reader: KeyRing | null): Promise<{ files: SessionMaterial; keys: KeyRing | null }> {
  const files = await source.material(sessionKey);
  return { files, keys: await source.keysOf(files.sessionId, reader) };
}

/** Where sessions are read from: the local folder, or the fleet store. */
export interface SessionSource {
  /** The local sessions folder, or the fleet store. */
  readonly kind: 'folder' | 'store';
  /** Names the source for people: a folder path, or the store's URL without its credentials. */
  readonly label: string;
  /** Every session at a glance, with its status against `keys` (default: none), oldest first. */
  list(keys?: KeyRing | null): Promise<SessionListing[]>;
  /** Every session with its findings counted and its chain status, newest first (the list page). */
  overview(keys: KeyRing | null): Promise<SessionOverview[]>;
  /**
   * One session's material. A folder hands over the files a session id names, and its readers
   * refuse a session with neither a trail nor a summary (NotFoundError); the store refuses an id
   * it does not hold.
   * @throws InvalidSessionIdError for a key that is not a session id; NotFoundError
   */
  material(sessionKey: string): Promise<SessionMaterial>;
  /**
   * The keys a session is judged with: `reader`'s (the keys the reader trusts) for a folder; for
   * the store, those, else the keys the session's host pushed.
   */
  keysOf(sessionId: string, reader: KeyRing | null): Promise<KeyRing | null>;
  /** Releases what the source holds (connections). */
  close(): Promise<void>;
}
