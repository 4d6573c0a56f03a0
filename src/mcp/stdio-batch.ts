/**
 * Newline-delimited JSON-RPC written in batches: the messages written within one turn of the event
 * loop leave the process in one write (one system call, one wake-up of the reader) once the turn
 * has handled all the input that was ready, instead of one write each. With many calls in flight
 * through the proxy, each write woke the process at the other end, which on a busy machine took
 * the proxy's CPU before it had answered the rest; a lone message still leaves in the same turn.
 */

import type { Writable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** Writes `message` to `stream` in this turn's batch; resolves once the stream can take more. */
export function writeMessage(stream: Writable, message: JSONRPCMessage): Promise<void> {
  if (stream.writableCorked === 0) {
    stream.cork();
    // The check phase comes right after this turn's input (poll) is handled, before any wait.
    setImmediate(() => stream.uncork());
  }
  return new Promise((resolve) => {
    if (stream.write(serializeMessage(message))) resolve();
    else stream.once('drain', resolve);
  });
}

/** The SDK's stdio server transport (the client's side of `aura proxy`), writing in batches. */
export class BatchedStdioServerTransport extends StdioServerTransport {
  constructor(private readonly output: Writable = process.stdout) {
    super(process.stdin, output);
  }

  override send(message: JSONRPCMessage): Promise<void> {
    return writeMessage(this.output, message);
  }
}
