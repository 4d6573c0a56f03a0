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
export function openRegularFile(path: string, what: string, follow = true): number {
  let fd: number;
  try {
    fd = fs.openSync(path, follow ? OPEN_FLAGS : OPEN_FLAGS | fs.constants.O_NOFOLLOW);
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
  return readOpened(path, what, (fd) => fs.readFileSync(fd));
}

/**
 * A regular file's bytes as they were when it was opened (what it grows by later is not read), in
 * memory that worker threads share: a worker handed them reads them where they are, instead of
 * a copy of its own.
 * @throws NotFoundError, ReadError as {@link openRegularFile}
 */
export function readRegularFileShared(path: string, what: string): Buffer {
  return readOpened(path, what, (fd) => {
    const bytes = Buffer.from(new SharedArrayBuffer(fs.fstatSync(fd).size));
    let read = 0;
    for (let n = -1; n !== 0 && read < bytes.length; read += n) n = fs.readSync(fd, bytes, read, bytes.length - read, read);
    return read === bytes.length ? bytes : bytes.subarray(0, read);
  });
}

/**
 * The first `maxBytes` of a regular file, the file itself and not a symlink to one (a lock beside a
 * trail: a line of JSON, never read whole when something else stands in its place).
 * @throws NotFoundError, ReadError as {@link openRegularFile}; ReadError for a symlink
 */
export function readRegularFileStart(path: string, what: string, maxBytes: number): Buffer {
  return readOpened(path, what, (fd) => {
    const bytes = Buffer.alloc(maxBytes);
    return bytes.subarray(0, fs.readSync(fd, bytes, 0, maxBytes, 0));
  }, false);
}

function readOpened(path: string, what: string, read: (fd: number) => Buffer, follow = true): Buffer {
  const fd = openRegularFile(path, what, follow);
  try {
    return read(fd);
  } catch (error) {
    throw new ReadError(path, error);
  } finally {
    fs.closeSync(fd);
  }
}
