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

/**
 * Why a file is not read when it is not a regular file, as an error for {@link describeCause}
 * ("it is a FIFO (named pipe), not a regular file"), or null when it is one.
 */
export function notRegularFile(stats: fs.Stats): Error | null {
  if (stats.isFile()) return null;
  // A folder says what reading one says elsewhere: EISDIR.
  if (stats.isDirectory()) return Object.assign(new Error('EISDIR: illegal operation on a directory'), { code: 'EISDIR' });
  const kind = stats.isFIFO() ? 'a FIFO (named pipe)' : stats.isCharacterDevice() ? 'a character device' : stats.isBlockDevice() ? 'a block device' : stats.isSocket() ? 'a socket' : 'something else';
  return new Error(`it is ${kind}, not a regular file`);
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
  let refusal: Error | null;
  try {
    refusal = notRegularFile(fs.fstatSync(fd));
  } catch (error) {
    refusal = error as Error;
  }
  if (refusal !== null) {
    fs.closeSync(fd);
    throw new ReadError(path, refusal);
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
