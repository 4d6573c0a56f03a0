/**
 * Opens evidence files (trails, summaries, seal logs) so that nothing named like one can stall a
 * reader: the open never blocks (O_NONBLOCK: a FIFO with no writer would otherwise wait for one
 * for good), and anything but a regular file (a FIFO, a device such as /dev/zero, a folder, a
 * socket) is refused by its type before a byte is read.
 */

import * as fs from 'node:fs';
import { NotFoundError, ReadError } from '../errors.js';

// O_NONBLOCK does nothing to a regular file's reads; it only keeps the open itself from waiting.
const OPEN_FLAGS = fs.constants.O_RDONLY | fs.constants.O_NONBLOCK;

/** What a file is when it is not a regular file ("a FIFO (named pipe)"), or null when it is one. */
export function notRegularFile(stats: fs.Stats): string | null {
  if (stats.isFile()) return null;
  if (stats.isFIFO()) return 'a FIFO (named pipe)';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  if (stats.isDirectory()) return 'a folder';
  if (stats.isSocket()) return 'a socket';
  return 'not a regular file';
}

/**
 * Opens a regular file for reading; the caller closes the descriptor.
 * @param what names the file in messages ("trail").
 * @throws NotFoundError when nothing is there; ReadError when it cannot be opened or is not a regular file
 */
export function openRegularFile(path: string, what: string): number {
  let fd: number;
  try {
    fd = fs.openSync(path, OPEN_FLAGS);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new NotFoundError(what, path);
    throw new ReadError(path, error);
  }
  let kind: string | null;
  try {
    kind = notRegularFile(fs.fstatSync(fd));
  } catch (error) {
    fs.closeSync(fd);
    throw new ReadError(path, error);
  }
  if (kind !== null) {
    fs.closeSync(fd);
    throw new ReadError(path, new Error(`it is ${kind}, not a regular file`));
  }
  return fd;
}

/**
 * A regular file's bytes.
 * @throws NotFoundError, ReadError as {@link openRegularFile}
 */
export function readRegularFile(path: string, what: string): Buffer {
  const fd = openRegularFile(path, what);
  try {
    return fs.readFileSync(fd);
  } catch (error) {
    throw new ReadError(path, error);
  } finally {
    fs.closeSync(fd);
  }
}
