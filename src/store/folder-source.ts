/** The local sessions folder as a {@link SessionSource}: the default source of every reader. */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { sessionsListRows } from '../report/list-model.js';
import type { KeyRing } from '../spine/signing.js';
import { refusalOf, resolveSessionKey } from './session-files.js';
import { listSessions, type SessionListing } from './session-list.js';
import { sealLogView } from './session-status.js';
import { folderMaterial, type SessionMaterial } from './material.js';
import type { SessionOverview, SessionSource } from './source.js';

/** A sessions folder. */
export class FolderSource implements SessionSource {
  readonly kind = 'folder';

  /**
   * @param sealLog the folder's seal log (default: `seals.jsonl` beside the folder)
   * @param anchorLog that log's anchor copy (config `anchor_dir`), or null
   */
  constructor(
    readonly sessionsDir: string,
    readonly sealLog: string = path.join(path.dirname(sessionsDir), 'seals.jsonl'),
    readonly anchorLog: string | null = null,
  ) {}

  get label(): string {
    return this.sessionsDir;
  }

  list(keys: KeyRing | null = null): Promise<SessionListing[]> {
    return Promise.resolve(listSessions(this.sessionsDir, { sealLog: this.sealLog, keys, anchorLog: this.anchorLog }));
  }

  overview(keys: KeyRing | null): Promise<SessionOverview[]> {
    return Promise.resolve(sessionsListRows(this.sessionsDir, this.sealLog, keys, this.anchorLog));
  }

  /** The session's files as material; one with neither a trail nor a summary is refused by its readers (NotFoundError). */
  material(sessionKey: string): Promise<SessionMaterial> {
    return Promise.resolve(folderMaterial(resolveSessionKey(this.sessionsDir, sessionKey), sealLogView(this.sealLog, null, this.anchorLog)));
  }

  keysOf(_sessionId: string, reader: KeyRing | null): Promise<KeyRing | null> {
    return Promise.resolve(reader);
  }

  /**
   * Whether the session has a trail or a summary that may be read: a FIFO, a device, a folder or
   * a symlink out of the folder named like one is no session, as in the list.
   */
  holds(sessionKey: string): boolean {
    const files = resolveSessionKey(this.sessionsDir, sessionKey);
    // The refusal first: it looks at the link itself, so a symlink loop is refused, not stat'ed.
    const isFile = (file: string): boolean => refusalOf(file) === null && fs.statSync(file, { throwIfNoEntry: false })?.isFile() === true;
    return isFile(files.trail) || isFile(files.summary);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
