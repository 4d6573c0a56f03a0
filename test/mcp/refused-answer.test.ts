import { describe, expect, it } from 'vitest';
import { MessageOutline } from '../../src/mcp/refused-answer.js';

/** What the outline of `text` says (the id it answers, or with `request`, the request's id), read in two pieces cut at every place. */
function idsOf(text: string, request = false): Set<unknown> {
  const ids = new Set<unknown>();
  for (let cut = 0; cut <= text.length; cut++) {
    const outline = new MessageOutline();
    outline.feed(text.slice(0, cut));
    outline.feed(text.slice(cut));
    ids.add(request ? outline.requestId() : outline.responseId());
  }
  return ids;
}

describe('MessageOutline', () => {
  it('finds the id of an answer whatever the order of its keys, past ids nested in its result, wherever the text is cut', () => {
    expect(idsOf('{"result":{"a":[1,{"id":9}]},"id":3,"jsonrpc":"2.0"}')).toEqual(new Set([3]));
    expect(idsOf('{"result":{"content":[]},"id":3,"jsonrpc":"2.0"}')).toEqual(new Set([3]));
    expect(idsOf('{ "jsonrpc" : "2.0" ,\n "i\\u0064" : -7 , "error" : {"code":1,"message":"x \\" }"} }')).toEqual(new Set([-7]));
    expect(idsOf('{"result":"x\\\\","id":"a\\"b"}')).toEqual(new Set(['a"b']));
    // The last of a repeated key counts, as it does for JSON.parse.
    expect(idsOf('{"id":1,"result":{},"id":2}')).toEqual(new Set([2]));
  });

  it('finds none in a request, a notification, a batch, or an answer whose id is not a number or a string', () => {
    for (const text of ['{"method":"x","id":1,"params":{}}', '{"jsonrpc":"2.0","method":"notifications/progress","params":{"id":1,"result":2}}', '[{"id":1,"result":{}}]', '{"id":{"n":1},"result":{}}', `{"id":"${'x'.repeat(300)}","result":{}}`]) {
      expect(idsOf(text)).toEqual(new Set([null]));
    }
  });

  it("finds a request's id whatever the order of its keys, and none in an answer, a notification or a batch", () => {
    expect(idsOf('{"params":{"id":9,"messages":[]},"method":"sampling/createMessage","id":"s-1","jsonrpc":"2.0"}', true)).toEqual(new Set(['s-1']));
    expect(idsOf('{"jsonrpc":"2.0","id":4,"method":"roots/list"}', true)).toEqual(new Set([4]));
    for (const text of ['{"id":1,"result":{"method":"x"}}', '{"jsonrpc":"2.0","method":"notifications/progress","params":{"id":1}}', '[{"id":1,"method":"x"}]', '{"id":1,"method":"x","error":{}}']) {
      expect(idsOf(text, true)).toEqual(new Set([null]));
    }
  });
});

describe('MessageOutline over a long run of escapes', () => {
  /** The least time, of a few runs, the outline takes to read `text` whole; and the id it finds. */
  function timed(text: string): { ms: number; id: unknown } {
    let ms = Infinity;
    let id: unknown;
    for (let run = 0; run < 3; run++) {
      const outline = new MessageOutline();
      const start = performance.now();
      outline.feed(text);
      ms = Math.min(ms, performance.now() - start);
      id = outline.responseId();
    }
    return { ms, id };
  }

  it('reads a string of backslashes (JSON escaped twice, Windows paths) in time proportional to its size, and finds the id after it', () => {
    const size = 512 * 1024;
    // The same escapes, one long string against many short ones: each escape is the same work, and
    // only a scan that starts over after every escape costs more for the long string.
    const long = timed(`{"result":{"content":[{"type":"text","text":"${'\\'.repeat(size)}"}]},"id":7}`);
    const short = timed(`{"result":{"content":[${Array.from({ length: size / 4 }, () => `"${'\\'.repeat(4)}"`).join(',')}]},"id":7}`);
    expect([long.id, short.id]).toEqual([7, 7]);
    expect(long.ms).toBeLessThan(10 * short.ms + 20);
  });
});
