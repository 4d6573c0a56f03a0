/**
 * Reads a trail file line by line in fixed-size chunks, so a trail larger than the biggest string
 * V8 can hold (about 512 MiB) still verifies, and memory stays flat.
 */

import { constants, isUtf8 } from 'node:buffer';
import * as fs from 'node:fs';
import { ReadError } from '../errors.js';
import { openRegularFile } from './regular-file.js';

/** One line of a trail. */
export interface TrailLine {
  /** The line's text without its newline. */
  readonly text: string;
  /** 1-based line number. */
  readonly number: number;
  /** False only for a last line with no newline after it (a write cut short, or a hand edit). */
  readonly terminated: boolean;
  /**
   * Set when the line is longer than a line may be ({@link MAX_LINE_BYTES}): its text is then
   * empty, and the line is skipped to its newline rather than held.
   */
  readonly overlong?: true;
  /**
   * Set when the line's bytes are not UTF-8: its text then holds U+FFFD where they were, and
   * another byte sequence would read the same (on a last line without its newline, maybe a write
   * cut inside a character).
   */
  readonly invalidUtf8?: true;
}

/**
 * The longest line read: the longest string V8 can make from it (about 512 MiB). A longer one
 * cannot be a record any reader can check; it is reported, not held.
 */
export const MAX_LINE_BYTES = constants.MAX_STRING_LENGTH;

// 4 MiB chunks: larger ones were no faster in bench/verify-chain.bench.ts.
const CHUNK_BYTES = 4 * 1024 * 1024;
const NEWLINE = 0x0a;
const DECODE_BYTES = 64 * 1024;

/**
 * Opens a trail for reading, with typed errors for a missing or unreadable file, and for anything
 * that is not a regular file (a FIFO, a device, a folder), refused without blocking.
 */
export function openTrail(path: string): number {
  return openRegularFile(path, 'trail');
}

/**
 * The lines of the trail at `path`, in order.
 * @param maxLineBytes the longest line held (a smaller limit only in tests, which cannot spare 512 MiB)
 */
export function* trailLines(path: string, maxLineBytes = MAX_LINE_BYTES): Generator<TrailLine> {
  const fd = openTrail(path);
  try {
    yield* linesOf(fd, path, maxLineBytes);
  } finally {
    fs.closeSync(fd);
  }
}

function* linesOf(fd: number, path: string, maxLineBytes: number): Generator<TrailLine> {
  let buffer = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, maxLineBytes));
  let carried = 0;
  let number = 0;
  // Inside a line longer than the limit: its bytes are dropped up to its newline.
  let skipping = false;
  for (;;) {
    if (carried === buffer.length) {
      if (buffer.length >= maxLineBytes) {
        // One line longer than any reader can hold: report it, and skip the rest of it.
        number++;
        yield { text: '', number, terminated: true, overlong: true };
        skipping = true;
        carried = 0;
      } else {
        // One line longer than the buffer: grow it rather than split the line.
        const larger = Buffer.allocUnsafe(Math.min(buffer.length * 2, maxLineBytes));
        buffer.copy(larger, 0, 0, carried);
        buffer = larger;
      }
    }
    let read: number;
    try {
      read = fs.readSync(fd, buffer, carried, buffer.length - carried, null);
    } catch (error) {
      throw new ReadError(path, error);
    }
    let filled = carried + read;
    if (skipping && read > 0) {
      const end = buffer.indexOf(NEWLINE, carried);
      if (end < 0 || end >= filled) {
        carried = 0;
        continue;
      }
      skipping = false;
      buffer.copy(buffer, 0, end + 1, filled);
      filled -= end + 1;
      carried = 0;
    }
    if (read === 0) {
      if (filled > 0 && !skipping) yield lineOf(buffer.subarray(0, filled), number + 1, false);
      return;
    }
    const lastNewline = filled === 0 ? -1 : buffer.lastIndexOf(NEWLINE, filled - 1);
    if (lastNewline < 0) {
      carried = filled;
      continue;
    }
    for (const line of decodedLines(buffer, lastNewline, number)) {
      number = line.number;
      yield line;
    }
    carried = filled - lastNewline - 1;
    buffer.copy(buffer, 0, lastNewline + 1, filled);
  }
}

/**
 * The lines of `buffer` up to its newline at `lastNewline`, numbered after `number`.
 *
 * Decoding many complete lines at once is about twice as fast as line by line; in pieces of
 * about DECODE_BYTES, so the text is young garbage and not a chunk-sized large object that
 * only a full collection frees (a long trail's close then grew memory by 70%).
 */
function* decodedLines(buffer: Buffer, lastNewline: number, number: number): Generator<TrailLine> {
  for (let from = 0; from <= lastNewline; ) {
    let to = from + DECODE_BYTES >= lastNewline ? lastNewline : buffer.lastIndexOf(NEWLINE, from + DECODE_BYTES);
    // One line longer than a piece: the piece runs to its end.
    if (to < from) to = buffer.indexOf(NEWLINE, from + DECODE_BYTES);
    // Checked before decoding: the decoder turns any invalid sequence into U+FFFD without a word.
    if (!isUtf8(buffer.subarray(from, to))) {
      for (let start = from; start <= to; ) {
        const end = buffer.indexOf(NEWLINE, start);
        const stop = end < 0 || end > to ? to : end;
        yield lineOf(buffer.subarray(start, stop), ++number, true);
        start = stop + 1;
      }
      from = to + 1;
      continue;
    }
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
}

/**
 * Reads a trail that is still being written, a chunk at a time: each {@link TrailFollower.read}
 * returns the whole lines written since the last, and keeps a line cut by the end of what is
 * written for the next. One writer appends whole lines, so the reader never guesses where one ends.
 */
export class TrailFollower {
  private buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  private carried = 0;
  private number = 0;
  private position = 0;

  constructor(
    private readonly fd: number,
    private readonly path: string,
  ) {}

  /** Bytes read from the file so far. */
  get offset(): number {
    return this.position;
  }

  /**
   * The whole lines of the next chunk, or null when nothing more is written yet. With `end` (the
   * writer is done), a last line without its newline comes too, as the file reader gives it.
   * @throws ReadError (unreadable, or one line longer than {@link MAX_LINE_BYTES})
   */
  read(end: boolean): TrailLine[] | null {
    if (this.carried === this.buffer.length) {
      if (this.buffer.length >= MAX_LINE_BYTES) throw new ReadError(this.path, new Error(`line ${this.number + 1} is longer than ${MAX_LINE_BYTES} bytes`));
      const larger = Buffer.allocUnsafe(Math.min(this.buffer.length * 2, MAX_LINE_BYTES));
      this.buffer.copy(larger, 0, 0, this.carried);
      this.buffer = larger;
    }
    let read: number;
    try {
      read = fs.readSync(this.fd, this.buffer, this.carried, this.buffer.length - this.carried, this.position);
    } catch (error) {
      throw new ReadError(this.path, error);
    }
    this.position += read;
    const filled = this.carried + read;
    if (read === 0) {
      if (!end || filled === 0) return null;
      this.carried = 0;
      return [lineOf(this.buffer.subarray(0, filled), ++this.number, false)];
    }
    const lastNewline = this.buffer.lastIndexOf(NEWLINE, filled - 1);
    if (lastNewline < 0) {
      this.carried = filled;
      return [];
    }
    const lines = [...decodedLines(this.buffer, lastNewline, this.number)];
    this.number += lines.length;
    this.carried = filled - lastNewline - 1;
    this.buffer.copy(this.buffer, 0, lastNewline + 1, filled);
    return lines;
  }
}

/** Lines from their bytes (each with its newline when it had one), numbered from 1, as the file reader gives them. */
export function* linesOfBytes(lines: readonly Buffer[]): Generator<TrailLine> {
  for (let i = 0; i < lines.length; i++) {
    const bytes = lines[i] as Buffer;
    const terminated = bytes.length > 0 && bytes[bytes.length - 1] === NEWLINE;
    yield lineOf(terminated ? bytes.subarray(0, bytes.length - 1) : bytes, i + 1, terminated);
  }
}

/** A line from its bytes (without the newline), marked when they are not UTF-8. */
function lineOf(bytes: Buffer, number: number, terminated: boolean): TrailLine {
  const text = bytes.toString('utf8');
  return isUtf8(bytes) ? { text, number, terminated } : { text, number, terminated, invalidUtf8: true };
}
