import { Writable } from 'node:stream';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { writeMessage } from '../../src/mcp/stdio-batch.js';

/** A stream that records each write it is handed: one entry per system call it would make. */
function recordingStream(): { stream: Writable; writes: string[] } {
  const writes: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      writes.push(chunk.toString());
      callback();
    },
    writev(chunks, callback) {
      writes.push(chunks.map(({ chunk }) => String(chunk)).join(''));
      callback();
    },
  });
  return { stream, writes };
}

/** Resolves after the writes batched in this turn of the event loop have left. */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

const ping = (id: number): JSONRPCMessage => ({ jsonrpc: '2.0', id, method: 'ping' });

describe('writeMessage', () => {
  it('hands the messages of one turn of the event loop to the stream as one write, in order, one line each', async () => {
    const { stream, writes } = recordingStream();
    await Promise.all([writeMessage(stream, ping(1)), writeMessage(stream, ping(2)), writeMessage(stream, ping(3))]);
    expect(writes).toEqual([]);
    await nextTurn();
    expect(writes).toHaveLength(1);
    expect((writes[0] as string).split('\n').slice(0, -1).map((line) => (JSON.parse(line) as { id: number }).id)).toEqual([1, 2, 3]);
  });

  it('writes a message of a later turn apart, and leaves the stream uncorked', async () => {
    const { stream, writes } = recordingStream();
    await writeMessage(stream, ping(1));
    await nextTurn();
    await writeMessage(stream, ping(2));
    await nextTurn();
    expect(writes).toEqual([`${JSON.stringify(ping(1))}\n`, `${JSON.stringify(ping(2))}\n`]);
    expect(stream.writableCorked).toBe(0);
  });

  it('waits for drain when the stream is full, then resolves', async () => {
    let release: () => void = () => undefined;
    const stream = new Writable({
      highWaterMark: 8,
      write(_chunk, _encoding, callback) {
        release = callback;
      },
    });
    let settled = false;
    const written = writeMessage(stream, ping(1)).then(() => {
      settled = true;
    });
    await nextTurn();
    expect(settled).toBe(false);
    release();
    await written;
    expect(settled).toBe(true);
  });
});
