import { describe, expect, it } from 'vitest';
import { EventStreamReader, type StreamEvent } from '../../src/mcp/event-stream.js';

/** The events and retries read from `stream` with `limit`, fed `step` characters at a time. */
function read(stream: string, limit: number, step: number): (StreamEvent | { retry: number })[] {
  const seen: (StreamEvent | { retry: number })[] = [];
  const reader = new EventStreamReader(limit, (event) => seen.push(event), (ms) => seen.push({ retry: ms }));
  for (let i = 0; i < stream.length; i += step) reader.feed(stream.slice(i, i + step));
  return seen;
}

describe('EventStreamReader', () => {
  it('reads events whose lines end in LF, CRLF or CR, wherever the stream is cut, as the standard does', () => {
    const stream = 'id: 1\r\nevent: message\r\ndata: {"a":1}\r\n\r\n: a comment\rdata: x\rdata:y\r\rretry: 50\n\nid: 2\n\n';
    const expected = [
      { id: '1', event: 'message', data: '{"a":1}', bytes: 7, responseId: null, requestId: null },
      { id: undefined, event: undefined, data: 'x\ny', bytes: 3, responseId: null, requestId: null },
      { retry: 50 },
    ];
    for (let step = 1; step <= stream.length; step++) expect(read(stream, 100, step)).toEqual(expected);
  });

  it('holds no event past the limit, counted in bytes: one over it is its size and the request it answers or is, and the stream goes on', () => {
    const answer = `{"result":{"text":"${'é'.repeat(100)}"},"id":"q"}`;
    const bytes = Buffer.byteLength(answer);
    const request = `{"params":{"pad":"${'x'.repeat(100)}"},"method":"ping","id":8}`;
    for (const step of [1, 7, 1000]) {
      expect(read(`data: ${answer}\n\ndata: {"jsonrpc":"2.0",\ndata: "id":5,"result":{}}\n\ndata: ${request}\n\n`, 40, step)).toEqual([
        { id: undefined, event: undefined, data: null, bytes, responseId: 'q', requestId: null },
        { id: undefined, event: undefined, data: '{"jsonrpc":"2.0",\n"id":5,"result":{}}', bytes: 37, responseId: null, requestId: null },
        { id: undefined, event: undefined, data: null, bytes: request.length, responseId: null, requestId: 8 },
      ]);
    }
    expect(read(`data: ${answer}\n\n`, bytes, 3)[0]).toMatchObject({ data: answer, bytes });
    expect(read(`data: ${answer}\n\n`, bytes - 1, 3)[0]).toMatchObject({ data: null, bytes, responseId: 'q' });
  });
});
