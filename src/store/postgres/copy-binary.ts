/**
 * PostgreSQL's binary COPY format (the `COPY … FROM STDIN WITH (FORMAT binary)` wire format): a
 * line's bytes go in as they are, where the text format would spell each byte of a `bytea` as two
 * hex digits and the server would decode them again. Only the column types the store uses.
 *
 * A COPY stream is {@link COPY_HEADER}, rows, then {@link COPY_TRAILER}: rows are encoded apart
 * (a session's in the worker that checked it) and streamed between the two.
 */

/** A value of a row: text, int4, bytea, or NULL. */
export type CopyValue = string | number | Uint8Array | null;

/** The signature, no flags, no header extension. */
export const COPY_HEADER = Buffer.concat([Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'), Buffer.alloc(8)]);

/** A field count of -1: no more rows. */
export const COPY_TRAILER = Buffer.from([0xff, 0xff]);

/**
 * Rows written one after the other into one growing buffer: a million rows of eight fields would
 * otherwise be sixteen million small buffers.
 */
export class CopyRows {
  private out: Buffer;
  private at = 0;

  /** @param capacity bytes to start with (it grows when a row does not fit) */
  constructor(capacity = 64 * 1024) {
    // Never from the shared pool: the worker hands the bytes over by transferring their memory.
    this.out = Buffer.allocUnsafeSlow(Math.max(capacity, 64));
  }

  /** Appends one row. */
  add(row: readonly CopyValue[]): void {
    this.room(2 + row.length * 4 + row.reduce<number>((n, value) => n + maxLength(value), 0));
    const out = this.out;
    let at = out.writeInt16BE(row.length, this.at);
    for (const value of row) {
      if (value === null) {
        at = out.writeInt32BE(-1, at);
      } else if (typeof value === 'string') {
        const length = out.write(value, at + 4, 'utf8');
        out.writeInt32BE(length, at);
        at += 4 + length;
      } else if (typeof value === 'number') {
        at = out.writeInt32BE(4, at);
        at = out.writeInt32BE(value, at);
      } else {
        at = out.writeInt32BE(value.length, at);
        out.set(value, at);
        at += value.length;
      }
    }
    this.at = at;
  }

  /** The rows so far (a view of the buffer, not a copy). */
  bytes(): Buffer {
    return this.out.subarray(0, this.at);
  }

  private room(bytes: number): void {
    if (this.at + bytes <= this.out.length) return;
    const grown = Buffer.allocUnsafeSlow(Math.max(this.out.length * 2, this.at + bytes));
    this.out.copy(grown, 0, 0, this.at);
    this.out = grown;
  }
}

/** The most bytes a value takes (UTF-8 takes at most three bytes a UTF-16 unit). */
function maxLength(value: CopyValue): number {
  if (value === null) return 0;
  if (typeof value === 'string') return value.length * 3;
  if (typeof value === 'number') return 4;
  return value.length;
}
