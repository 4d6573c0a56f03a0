/**
 * Reads a trail file line by line in fixed-size chunks, so a trail larger than the biggest string
 * V8 can hold (about 512 MiB) still verifies, and memory stays flat.
 */

import * as fs from 'node:fs';
import { NotFoundError, ReadError } from '../errors.js';

/** One line of a trail. */
export interface TrailLine {
  /** The line's text without its newline. */
  readonly text: string;
  /** 1-based line number. */
  readonly number: number;
  /** False only for a last line with no newline after it (a write cut short, or a hand edit). */
  readonly terminated: boolean;
}

// 4 MiB chunks: larger ones were no faster in bench/verify-chain.bench.ts.
const CHUNK_BYTES = 4 * 1024 * 1024;
const NEWLINE = 0x0a;
const DECODE_BYTES = 64 * 1024;

/** Opens a trail for reading, with typed errors for a missing or unreadable file. */
export function openTrail(path: string): number {
  try {
    return fs.openSync(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new NotFoundError('trail', path);
    throw new ReadError(path, error);
  }
}

/** The lines of the trail at `path`, in order. */
export function* trailLines(path: string): Generator<TrailLine> {
  const fd = openTrail(path);
  try {
    yield* linesOf(fd, path);
  } finally {
    fs.closeSync(fd);
  }
}

function* linesOf(fd: number, path: string): Generator<TrailLine> {
  let buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  let carried = 0;
  let number = 0;
  for (;;) {
    if (carried === buffer.length) {
      // One line longer than the buffer: grow it rather than split the line.
      const larger = Buffer.allocUnsafe(buffer.length * 2);
      buffer.copy(larger, 0, 0, carried);
      buffer = larger;
    }
    let read: number;
    try {
      read = fs.readSync(fd, buffer, carried, buffer.length - carried, null);
    } catch (error) {
      throw new ReadError(path, error);
    }
    const filled = carried + read;
    if (read === 0) {
      if (filled > 0) yield { text: buffer.toString('utf8', 0, filled), number: number + 1, terminated: false };
      return;
    }
    const lastNewline = buffer.lastIndexOf(NEWLINE, filled - 1);
    if (lastNewline < 0) {
      carried = filled;
      continue;
    }
    // Decoding many complete lines at once is about twice as fast as line by line; in pieces of
    // about DECODE_BYTES, so the text is young garbage and not a chunk-sized large object that
    // only a full collection frees (a long trail's close then grew memory by 70%).
    for (let from = 0; from <= lastNewline; ) {
      let to = from + DECODE_BYTES >= lastNewline ? lastNewline : buffer.lastIndexOf(NEWLINE, from + DECODE_BYTES);
      // One line longer than a piece: the piece runs to its end.
      if (to < from) to = buffer.indexOf(NEWLINE, from + DECODE_BYTES);
      const text = buffer.toString('utf8', from, to);
      let start = 0;
      for (;;) {
        const end = text.indexOf('\n', start);
        number++;
        if (end < 0) {
          yield { text: text.slice(start), number, terminated: true };
          break;
        }
        yield { text: text.slice(start, end), number, terminated: true };
        start = end + 1;
      }
      from = to + 1;
    }
    carried = filled - lastNewline - 1;
    buffer.copy(buffer, 0, lastNewline + 1, filled);
  }
}
