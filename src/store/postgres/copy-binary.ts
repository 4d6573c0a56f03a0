/**
 * PostgreSQL's binary COPY format (the `COPY … FROM STDIN WITH (FORMAT binary)` wire format): a
 * line's bytes go in as they are, where the text format would spell each byte of a `bytea` as two
 * hex digits and the server would decode them again. Only the column types the store uses.
 */

/** A value of a row: text, int4, bytea, or NULL. */
export type CopyValue = string | number | Buffer | null;

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');

/**
 * Rows in the binary COPY format, header and trailer included. One buffer, sized first and then
 * written in place: a million rows of eight fields would otherwise be sixteen million small buffers.
 */
export function binaryCopy(rows: readonly (readonly CopyValue[])[]): Buffer {
  let size = SIGNATURE.length + 8 + 2;
  for (const row of rows) {
    size += 2;
    for (const value of row) size += 4 + byteLength(value);
  }
  const out = Buffer.allocUnsafe(size);
  let at = SIGNATURE.copy(out, 0);
  out.fill(0, at, at + 8);
  at += 8;
  for (const row of rows) {
    at = out.writeInt16BE(row.length, at);
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
        at += value.copy(out, at);
      }
    }
  }
  out.writeInt16BE(-1, at);
  return out;
}

function byteLength(value: CopyValue): number {
  if (value === null) return 0;
  if (typeof value === 'string') return Buffer.byteLength(value, 'utf8');
  if (typeof value === 'number') return 4;
  return value.length;
}
