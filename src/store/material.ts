/**
 * A session's material: the trail's lines and the stored summary's text, read on demand, with its
 * place in its seal log and whether a writer holds it. The local folder makes it from files, the
 * fleet store from rows; the status module and the readers take it and never ask where the bytes
 * live. Everything in it is untrusted.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import type { TrailLine } from '../spine/trail-lines.js';
import { trailLines } from '../spine/trail-lines.js';
import { trailWriter } from '../spine/writer.js';
import { readTextFile } from './json-file.js';
import type { SealLogPlace, SealLogView } from './seal-log.js';
import { assertReadable, type SessionFiles } from './session-files.js';

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
  /** How its seal log and that log's anchor copy disagree on it; null when they agree; absent when the log has no anchor copy. */
  readonly anchorDisagreement?: string | null;
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
    ...anchorWord(log, files.sessionId),
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

/**
 * A folder session's material as the findings channel reads it: what is said of its files names
 * them by their names in the folder, as the fleet store's check at ingest does. The channel's
 * callers include aura mcp's tenants, who may not learn where the server keeps the folder.
 */
export function channelMaterial(files: SessionFiles, log: SealLogView | null): SessionMaterial {
  return { ...folderMaterial(files, log), trailName: path.basename(files.trail), summaryName: path.basename(files.summary) };
}

/**
 * What a seal log's anchor copy says of session `id`'s seal, as material carries it: the folder's
 * readers, and a push that hands it to the fleet store, which cannot read the copy itself.
 */
export function anchorWord(log: SealLogView | null, id: string): Pick<SessionMaterial, 'anchorDisagreement'> {
  return log?.anchor === undefined ? {} : { anchorDisagreement: log.anchor.get(id) ?? null };
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
