/**
 * The reading interface of a sessions store (DESIGN §1): the local sessions folder and the fleet
 * store on PostgreSQL both answer it, so every reader (`sessions list`, `report show`, `report
 * html`, `aura ui`, `aura mcp`) takes a source and never asks where the bytes live.
 *
 * A session is handed to the readers as its material: the trail's lines and the stored summary's
 * text, read on demand. Everything in it is untrusted (a trail may be hand-edited, a row edited by
 * a database superuser): readers verify what they read.
 */

import * as fs from 'node:fs';
import type { KeyRing } from '../spine/signing.js';
import type { TrailLine } from '../spine/trail-lines.js';
import { trailLines } from '../spine/trail-lines.js';
import { trailWriter } from '../spine/writer.js';
import { readTextFile } from './json-file.js';
import type { SealLogPlace } from './seal-log.js';
import { assertReadable, type SessionFiles } from './session-files.js';
import type { SessionListing } from './session-list.js';
import type { SealLogView } from './session-status.js';

/** One session's stored bytes, read when asked for. */
export interface SessionMaterial {
  readonly sessionId: string;
  /** Names the trail in messages and in a summary rebuilt from it (`log`): a path, or the store's URL and the id. */
  readonly trailName: string;
  /** Names the stored summary in messages. */
  readonly summaryName: string;
  /** The trail's lines in order, or null when there is no trail. */
  readonly lines: (() => Iterable<TrailLine>) | null;
  /** The stored summary's text, or null when there is none. */
  readonly summaryText: (() => string) | null;
  /** The session's seal-log entry and its place in its log; `absent` when its log has none; null when not known. */
  readonly sealPlace?: SealLogPlace | 'absent' | null;
  /** Whether a writer holds the trail (default none). */
  readonly writer?: 'alive' | 'gone' | 'none';
}

/** A session as the sessions list page shows it: the listing, with its status as a label. */
export interface SessionOverview extends SessionListing {
  /** The status label (store/session-status.ts `statusLabel`): `verified`, `damaged: edited`, … */
  readonly chain: string;
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
  /** Releases what the source holds (connections). */
  close(): Promise<void>;
}

/**
 * The material of a session in a sessions folder, read from its files when asked, placed in its
 * folder's seal log when given. A file that is there but may not be read (a FIFO, a device, a
 * symlink out of the folder) is refused when asked for, with a ReadError naming it and why.
 */
export function folderMaterial(files: SessionFiles, log: SealLogView | null = null): SessionMaterial {
  const writer = trailWriter(files.trail);
  return {
    sealPlace: log === null ? null : (log.places.get(files.sessionId) ?? 'absent'),
    writer: writer === null ? 'none' : writer.alive ? 'alive' : 'gone',
    sessionId: files.sessionId,
    trailName: files.trail,
    summaryName: files.summary,
    lines: isPresent(files.trail)
      ? () => {
          assertReadable(files.trail);
          return trailLines(files.trail);
        }
      : null,
    summaryText: isPresent(files.summary)
      ? () => {
          assertReadable(files.summary);
          return readTextFile(files.summary, 'summary');
        }
      : null,
  };
}

/** Something is there (a symlink loop too, which its reader then refuses). */
function isPresent(file: string): boolean {
  return fs.lstatSync(file, { throwIfNoEntry: false }) !== undefined;
}

/**
 * The material of a session given as files or as material: the readers take either, so library
 * callers that hold a folder's files keep working.
 */
export function materialOf(session: SessionFiles | SessionMaterial): SessionMaterial {
  return 'lines' in session ? session : folderMaterial(session);
}
