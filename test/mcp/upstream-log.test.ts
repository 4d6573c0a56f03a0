/**
 * A stdio upstream's stderr as the proxy passes it on (src/mcp/upstream-log.ts), fed chunk by
 * chunk: lines in order and scrubbed, a line that does not end passed on in pieces that keep a
 * secret whole, and nothing held while the proxy's stderr is not read.
 */

import { once } from 'node:events';
import { PassThrough, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { SessionRedactor } from '../../src/middleware/redact.js';
import { MAX_LOG_LINE, UpstreamLog } from '../../src/mcp/upstream-log.js';

const SECRET = 'Kx9-Tq2Lm7Vw4Rz8!Np';

/** A log following a stderr of its own into a stream that holds its writes while `holding`. */
function follow(redactor: SessionRedactor): { stderr: PassThrough; written: string[]; release: () => void; read: () => Promise<void>; ended: () => Promise<void> } {
  const written: string[] = [];
  const held: (() => void)[] = [];
  let holding = false;
  const out = new Writable({
    write(chunk: Buffer, _encoding, done) {
      written.push(chunk.toString('utf8'));
      if (holding) held.push(() => done());
      else done();
    },
  });
  const stderr = new PassThrough();
  new UpstreamLog(out, () => redactor).follow(stderr);
  return {
    stderr,
    written,
    release: () => {
      holding = !holding;
      for (const done of held.splice(0)) done();
    },
    read: async () => {
      while (stderr.writableLength > 0 || stderr.readableLength > 0) await new Promise((resolve) => setImmediate(resolve));
    },
    ended: async () => {
      stderr.end();
      await once(stderr, 'end');
    },
  };
}

describe("an upstream's stderr", () => {
  it('goes on a line at a time, in order, scrubbed, whatever the chunks; a last line without its end goes on at the end', async () => {
    const redactor = new SessionRedactor();
    redactor.addSecret(SECRET);
    const { stderr, written, ended } = follow(redactor);
    const text = `first\r\nPOST /charge with x-api-key ${SECRET}\nGET / with Authorization: Bearer ghp_${'x9'.repeat(18)}\nnaïve é\nlast without an end`;
    // Cut everywhere, through the secret and through a two-byte character.
    const bytes = Buffer.from(text);
    for (let i = 0; i < bytes.length; i += 7) stderr.write(bytes.subarray(i, i + 7));
    await ended();
    expect(written.join('')).toBe(`first\nPOST /charge with x-api-key [redacted]\nGET / with Authorization: Bearer [redacted]\nnaïve é\nlast without an end\n`);
  });

  it('passes a line that does not end on in pieces as it comes, each stopping short of what may begin a secret', async () => {
    const redactor = new SessionRedactor();
    redactor.addSecret(SECRET);
    const { stderr, written, read, ended } = follow(redactor);
    stderr.write(`${'x'.repeat(MAX_LOG_LINE - 4)}${SECRET}${'y'.repeat(2 * MAX_LOG_LINE)}`);
    await read();
    expect(written).toEqual([`${'x'.repeat(MAX_LOG_LINE - 4)}\n`, `[redacted]${'y'.repeat(MAX_LOG_LINE - SECRET.length)}\n`, `${'y'.repeat(MAX_LOG_LINE)}\n`]);
    await ended();
    expect(written.at(-1)).toBe(`${'y'.repeat(SECRET.length)}\n`);
    expect(written.join('')).not.toContain(SECRET.slice(0, 4));
  });

  it('leaves lines out while what it wrote waits to be read, then says how many', async () => {
    const { stderr, written, release, read, ended } = follow(new SessionRedactor());
    release();
    const line = `${'z'.repeat(1000)}\n`;
    for (let i = 0; i < 1200; i++) stderr.write(line);
    await read();
    release();
    stderr.write('after\n');
    await ended();
    const shown = written.join('').split('\n');
    const told = shown.find((text) => text.includes('left out'));
    const left = Number(/^aura proxy: (\d+) lines of the upstream's stderr left out/.exec(told ?? '')?.[1]);
    expect(left).toBeGreaterThan(0);
    expect(shown.filter((text) => text === 'z'.repeat(1000)).length + left).toBe(1200);
    expect(shown.slice(-3)).toEqual([told, 'after', '']);
  });
});
