/** Writing files and folders so that a failure is a {@link WriteError} that says its real cause. */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { WriteError } from '../errors.js';

/**
 * Runs `write`; a failure of it becomes a WriteError naming `target`.
 * @throws WriteError (a full disk, a read-only or forbidden folder, a folder where a file should be)
 */
export function writing<T>(target: string, write: () => T): T {
  try {
    return write();
  } catch (error) {
    throw new WriteError(target, error);
  }
}

/**
 * Removes a file when it is there, as `fs.rmSync(file, { force: true })` does a file, without
 * loading the recursive remover that rmSync loads at its first call (most of a millisecond of a
 * short process, such as a Claude Code hook).
 * @throws what unlink throws when something is at `file` (a folder: EISDIR or EPERM)
 */
export function removeFile(file: string): void {
  try {
    fs.unlinkSync(file);
  } catch (error) {
    // A read-only file system refuses (EROFS) even a name that is not there: only one that is, is an error.
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT' && fs.lstatSync(file, { throwIfNoEntry: false }) !== undefined) throw error;
  }
}

/**
 * Replaces `file` with `data` (mode 0600) whole, for what a process keeps for the next: written
 * beside it, then renamed over it, so a reader finds the old bytes or the new, never half. The
 * staging file is created anew (`wx`): whatever is at its name, a symlink included, is never
 * written through.
 * @returns false when it could not be written (no staging file is left behind)
 */
export function replaceWhole(file: string, data: string | Uint8Array): boolean {
  const staging = `${file}.${process.pid}.tmp`;
  try {
    removeFile(staging);
    fs.writeFileSync(staging, data, { mode: 0o600, flag: 'wx' });
    fs.renameSync(staging, file);
    return true;
  } catch {
    try {
      removeFile(staging);
    } catch {
      // Left behind under a name no reader takes.
    }
    return false;
  }
}

/**
 * Creates `dir` and any missing parents. A recursive mkdir reports a read-only or full file system
 * as ENOENT (nodejs/node#47098); then the first missing folder is made alone, which fails with
 * the real cause (EROFS, ENOSPC, EACCES, ENOTDIR), thrown as Node's error. A file where the folder
 * should be is ENOTDIR too (mkdir says EEXIST, as if all were well).
 */
export function makeFolder(dir: string, mode?: number): void {
  const options = mode === undefined ? {} : { mode };
  try {
    fs.mkdirSync(dir, { ...options, recursive: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw Object.assign(new Error(`ENOTDIR: ${dir} is a file, not a folder`), { code: 'ENOTDIR', syscall: 'mkdir', path: dir });
    if (code !== 'ENOENT') throw error;
    let missing = dir;
    while (path.dirname(missing) !== missing && !fs.existsSync(path.dirname(missing))) missing = path.dirname(missing);
    fs.mkdirSync(missing, options);
    // Made after all (another process made its parent meanwhile): the rest can follow.
    fs.mkdirSync(dir, { ...options, recursive: true });
  }
}
