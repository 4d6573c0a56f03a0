/**
 * Commits a set of files together (DESIGN §3): each is written in full to a staging file beside
 * its target and only then are they renamed into place. If any staging write fails, no target is
 * touched; if a rename fails, the targets already renamed are put back as they were.
 */

import * as fs from 'node:fs';
import { ExportError } from '../errors.js';

/** A file to commit. */
export interface FileToCommit {
  readonly path: string;
  /** Text (written as UTF-8) or bytes (written as they are). */
  readonly content: string | Uint8Array;
}

/** The staging file of a target. One writer a session, so a fixed name is safe. */
export function stagingPathOf(target: string): string {
  return `${target}.staging`;
}

/**
 * Writes every file or none.
 * @throws ExportError naming the file that failed; the staging files are removed.
 */
export function commitFiles(sessionId: string, files: readonly FileToCommit[]): void {
  const staged: string[] = [];
  try {
    for (const file of files) {
      const staging = stagingPathOf(file.path);
      writeDurably(staging, file.content, file.path, sessionId);
      staged.push(staging);
    }
    renameAll(sessionId, files);
  } finally {
    for (const staging of staged) fs.rmSync(staging, { force: true });
  }
}

function writeDurably(staging: string, content: string | Uint8Array, target: string, sessionId: string): void {
  let fd: number;
  try {
    fd = fs.openSync(staging, 'w', 0o644);
  } catch (error) {
    throw new ExportError(sessionId, target, error);
  }
  try {
    fs.writeFileSync(fd, content);
    fs.fsyncSync(fd);
  } catch (error) {
    fs.closeSync(fd);
    fs.rmSync(staging, { force: true });
    throw new ExportError(sessionId, target, error);
  }
  fs.closeSync(fd);
}

function renameAll(sessionId: string, files: readonly FileToCommit[]): void {
  const done: { target: string; backup: string | null }[] = [];
  try {
    for (const file of files) {
      let backup: string | null = null;
      try {
        backup = keepPrevious(file.path);
        fs.renameSync(stagingPathOf(file.path), file.path);
      } catch (error) {
        if (backup !== null) fs.rmSync(backup, { force: true });
        throw new ExportError(sessionId, file.path, error);
      }
      done.push({ target: file.path, backup });
    }
  } catch (error) {
    for (const { target, backup } of done.reverse()) {
      try {
        if (backup === null) fs.rmSync(target, { force: true });
        else fs.renameSync(backup, target);
      } catch {
        // The disk that refused the commit may refuse this too: the ExportError says what failed first.
      }
    }
    throw error;
  }
  for (const { backup } of done) if (backup !== null) fs.rmSync(backup, { force: true });
}

/**
 * Keeps the current target under a second name (a hard link: no copy) so a failed commit can
 * restore it; null when there is none. A folder where the file should be is left for the rename
 * to refuse (EISDIR), which says what is wrong better than the link would (EPERM).
 */
function keepPrevious(target: string): string | null {
  const backup = `${target}.previous`;
  fs.rmSync(backup, { force: true });
  try {
    fs.linkSync(target, backup);
    return backup;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || (code === 'EPERM' && fs.statSync(target, { throwIfNoEntry: false })?.isDirectory() === true)) return null;
    throw error;
  }
}
