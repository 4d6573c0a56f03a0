/**
 * A stdio upstream's stderr, as `aura proxy` passes it on to its own. An upstream that logs its
 * requests writes the secrets aura injected into them, and an MCP client keeps the proxy's stderr
 * in a log file: each line is scrubbed as a record is (the session's secrets, credentials by their
 * shape) before it is written. Lines keep their order. A line over {@link MAX_LOG_LINE} is passed
 * on in pieces as it comes, so one that never ends holds no more than that; a piece stops short of
 * what may begin a secret, so that every secret is whole in the piece scrubbed. Nothing waits on
 * the reader of the proxy's stderr: while it is backed up, lines are left out, then counted.
 */

import type { Readable, Writable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import type { RelayScrubber } from '../middleware/redact.js';

/** The most of an upstream's stderr line held, in UTF-16 code units: a longer one goes on in pieces. */
export const MAX_LOG_LINE = 16 * 1024;

// What may wait to be written to the proxy's stderr (a client that holds the pipe and reads
// nothing) before lines are left out: an upstream that logs a lot must not grow the proxy.
const MAX_BACKLOG = 1024 * 1024;

/** One upstream's stderr, passed on to `out` a line at a time. */
export class UpstreamLog {
  private pending = '';
  private leftOut = 0;

  /**
   * @param scrubber the redactor of the session, or one that knows no secret before it opens
   */
  constructor(
    private readonly out: Writable,
    private readonly scrubber: () => RelayScrubber,
  ) {}

  /** Passes `source` on until it ends; a last line without a line end is passed on then. */
  follow(source: Readable): void {
    const decoder = new StringDecoder('utf8');
    source.on('data', (chunk: Buffer) => this.take(decoder.write(chunk)));
    source.once('end', () => {
      this.take(decoder.end());
      if (this.pending !== '') this.write(this.scrubber().scrub(this.pending));
      this.pending = '';
    });
  }

  private take(text: string): void {
    for (let start = 0; ; ) {
      const end = text.indexOf('\n', start);
      this.pending += text.slice(start, end < 0 ? text.length : end);
      while (this.pending.length >= MAX_LOG_LINE) {
        const { scrubbed, rest } = this.scrubber().scrubStart(this.pending.slice(0, MAX_LOG_LINE));
        // Only a secret longer than a piece can hold a whole piece back; the line waits for its end.
        if (scrubbed === '') break;
        this.write(scrubbed);
        this.pending = rest + this.pending.slice(MAX_LOG_LINE);
      }
      if (end < 0) return;
      this.write(this.scrubber().scrub(this.pending.replace(/\r$/, '')));
      this.pending = '';
      start = end + 1;
    }
  }

  private write(line: string): void {
    if (this.out.writableLength > MAX_BACKLOG) {
      this.leftOut++;
      return;
    }
    if (this.leftOut > 0) this.out.write(`aura proxy: ${this.leftOut} lines of the upstream's stderr left out: the proxy's stderr was not being read\n`);
    this.leftOut = 0;
    this.out.write(`${line}\n`);
  }
}
