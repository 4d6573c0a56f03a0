/**
 * Commits a set of files together (DESIGN §3): each is written in full to a staging file beside
 * its target and only then are they renamed into place. If any staging write fails, no target is
 * touched; if a rename fails, the targets already renamed are put back as they were.
 */

import * as fs from 'node:fs';
import { ExportError } from '../errors.js';
import { removeFile } from '../store/fs-write.js';

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

// Bytes a staged file holds before it writes: few system calls, and one buffer reused throughout
// (joined text would be a large object per write, which only a full collection frees).
const STAGED_BUFFER_BYTES = 1 << 20;

/**
 * A file written to its staging path piece by piece, as it is produced (the spans of a long
 * session), and committed with the others by {@link commitFiles}.
 */
export class StagedFile {
  /** Opened at the first write, so that nothing is created for an export that fails before it. */
  private fd: number | null = null;
  private opened = false;
  private readonly buffer = Buffer.allocUnsafe(STAGED_BUFFER_BYTES);
  private filled = 0;

  constructor(
    private readonly sessionId: string,
    readonly path: string,
  ) {}

  /** @throws ExportError (the staging file cannot be created, or is removed) */
  write(text: string): void {
    // Three bytes a UTF-16 unit at most: a text that might not fit is flushed before, or written alone.
    if (this.filled + text.length * 3 > this.buffer.length) this.flush();
    if (text.length * 3 > this.buffer.length) this.guard((fd) => writeAll(fd, Buffer.from(text, 'utf8')));
    else this.filled += this.buffer.write(text, this.filled);
  }

  /** Writes what is left and makes it durable. @throws ExportError (the staging file is removed) */
  finish(): void {
    this.flush();
    this.guard((fd) => fs.fsyncSync(fd));
    this.close();
  }

  /** Closes and removes the staging file (only one it created: what stands in its way is not its own). */
  discard(): void {
    const created = this.fd !== null;
    this.close();
    if (created) removeFile(stagingPathOf(this.path));
  }

  private flush(): void {
    if (this.filled === 0) return;
    const filled = this.filled;
    this.filled = 0;
    this.guard((fd) => writeAll(fd, this.buffer.subarray(0, filled)));
  }

  private guard(write: (fd: number) => unknown): void {
    if (!this.opened) {
      this.opened = true;
      try {
        this.fd = fs.openSync(stagingPathOf(this.path), 'w', 0o644);
      } catch (error) {
        throw new ExportError(this.sessionId, this.path, error);
      }
    }
    if (this.fd === null) throw new ExportError(this.sessionId, this.path, new Error('the staging file is closed'));
    try {
      write(this.fd);
    } catch (error) {
      this.discard();
      throw new ExportError(this.sessionId, this.path, error);
    }
  }

  private close(): void {
    if (this.fd === null) return;
    fs.closeSync(this.fd);
    this.fd = null;
  }
}

/** A staging file that another thread wrote in full and made durable: it is committed as it stands. */
export class DurableStagedFile {
  constructor(readonly path: string) {}

  /** Removes the staging file (an export that fails or is given up). */
  discard(): void {
    removeFile(stagingPathOf(this.path));
  }
}

/** Writes all of `bytes` (a write may take fewer than it is given). */
function writeAll(fd: number, bytes: Uint8Array): void {
  for (let at = 0; at < bytes.length; ) at += fs.writeSync(fd, bytes, at, bytes.length - at);
}

/**
 * Writes every file or none: each file's content is staged (a {@link StagedFile} is already), then
 * all are renamed into place.
 * @throws ExportError naming the file that failed; the staging files are removed.
 */
export function commitFiles(sessionId: string, files: readonly (FileToCommit | StagedFile | DurableStagedFile)[]): void {
  const staged: string[] = [];
  try {
    for (const file of files) {
      if (file instanceof StagedFile) file.finish();
      else if (!(file instanceof DurableStagedFile)) writeDurably(stagingPathOf(file.path), file.content, file.path, sessionId);
      staged.push(stagingPathOf(file.path));
    }
    renameAll(sessionId, files);
  } finally {
    for (const file of files) if (file instanceof StagedFile) file.discard();
    for (const staging of staged) removeFile(staging);
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
    removeFile(staging);
    throw new ExportError(sessionId, target, error);
  }
  fs.closeSync(fd);
}

function renameAll(sessionId: string, files: readonly { readonly path: string }[]): void {
  const done: { target: string; backup: string | null }[] = [];
  try {
    for (const file of files) {
      let backup: string | null = null;
      try {
        backup = keepPrevious(file.path);
        fs.renameSync(stagingPathOf(file.path), file.path);
      } catch (error) {
        if (backup !== null) removeFile(backup);
        throw new ExportError(sessionId, file.path, error);
      }
      done.push({ target: file.path, backup });
    }
  } catch (error) {
    for (const { target, backup } of done.reverse()) {
      try {
        if (backup === null) removeFile(target);
        else fs.renameSync(backup, target);
      } catch {
        // The disk that refused the commit may refuse this too: the ExportError says what failed first.
      }
    }
    throw error;
  }
  for (const { backup } of done) if (backup !== null) removeFile(backup);
}

/**
 * Keeps the current target under a second name (a hard link: no copy) so a failed commit can
 * restore it; null when there is none. A folder where the file should be is left for the rename
 * to refuse (EISDIR), which says what is wrong better than the link would (EPERM).
 */
function keepPrevious(target: string): string | null {
  const backup = `${target}.previous`;
  removeFile(backup);
  try {
    fs.linkSync(target, backup);
    return backup;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || (code === 'EPERM' && fs.statSync(target, { throwIfNoEntry: false })?.isDirectory() === true)) return null;
    throw error;
  }
}
