/**
 * The fingerprint of a file (DESIGN §6): size, mtime, ctime and inode. Any write changes the
 * ctime, even one that restores the mtime, and nobody but the kernel sets it, so an unchanged
 * fingerprint means unchanged bytes, with one exception: a write in the same clock tick as the
 * stamp. A ctime that recent is not trusted (the stamp then equals nothing), so such a file is read
 * again until its ctime is safely past.
 */

import * as fs from 'node:fs';

/** How old a ctime must be to be trusted: no filesystem ticks coarser (FAT: 2 s). */
export const RACY_WINDOW_MS = 2000;

/** Size, mtime, ctime (NaN while racy), inode and link count; all NaN for a missing file. */
export type FileStamp = readonly [size: number, mtimeMs: number, ctimeMs: number, ino: number, nlink: number];

/** The stamp of a file that is not there. */
export const MISSING_STAMP: FileStamp = [NaN, NaN, NaN, NaN, NaN];

/** The fingerprint of `file` now, following a symlink; the missing stamp when there is none to take (its reader says why). */
export function fileStamp(file: string): FileStamp {
  const now = Date.now();
  let s: fs.Stats | undefined;
  try {
    s = fs.statSync(file, { throwIfNoEntry: false });
  } catch {
    return MISSING_STAMP;
  }
  return s === undefined ? MISSING_STAMP : stampOfStats(s, now);
}

/** The fingerprint of stats taken at `now` (ms). */
export function stampOfStats(s: fs.Stats, now: number): FileStamp {
  // Milliseconds as doubles keep the nanoseconds Linux records to well under a microsecond.
  return [s.size, s.mtimeMs, now - s.ctimeMs < RACY_WINDOW_MS ? NaN : s.ctimeMs, s.ino, s.nlink];
}

/** True when both stamps name the same bytes, or both no file: a racy ctime (NaN) equals nothing. */
export function sameStamp(a: FileStamp, b: FileStamp): boolean {
  if (!stampPresent(a) && !stampPresent(b)) return true;
  return a[0] === b[0] && a[1] === b[1] && a[2] === b[2] && a[3] === b[3] && a[4] === b[4];
}

/** True when the stamp is of a file that is there. */
export function stampPresent(stamp: FileStamp): boolean {
  return !Number.isNaN(stamp[3]);
}
