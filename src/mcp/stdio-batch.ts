/**
 * Newline-delimited JSON-RPC written in batches: the messages written within one turn of the event
 * loop leave the process in one write (one system call, one wake-up of the reader) once the turn
 * has handled all the input that was ready, instead of one write each. With many calls in flight
 * through the proxy, each write woke the process at the other end, which on a busy machine took
 * the proxy's CPU before it had answered the rest; a lone message still leaves in the same turn.
 */

import type { Writable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { serializeMessage, STDIO_DEFAULT_MAX_BUFFER_SIZE } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { LineReader, readJsonRpcMessage } from './json-rpc-lines.js';

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

/**
 * The SDK's stdio server transport (`aura mcp`, and the client's side of `aura proxy`), writing
 * in batches, and reading as json-rpc-lines.ts reads: as the SDK does (a line that is not JSON or
 * not JSON-RPC goes to `onerror`, a message over the limit closes the transport), but without its
 * `JSON.parse`.
 */
export class BatchedStdioServerTransport extends StdioServerTransport {
  constructor(
    private readonly output: Writable = process.stdout,
    maxMessageBytes: number = STDIO_DEFAULT_MAX_BUFFER_SIZE,
  ) {
    super(process.stdin, output);
    const lines = new LineReader();
    // Replaced before start(), which is when the SDK listens with it (and close() stops listening).
    this._ondata = (chunk: Buffer) => {
      for (const line of lines.take(chunk, maxMessageBytes)) {
        if (line.text === null) {
          this.onerror?.(new Error(`a message of ${line.bytes} bytes from the client is over the limit of ${maxMessageBytes} bytes: the connection is closed`));
          this.close().catch(() => undefined);
          return;
        }
        try {
          this.onmessage?.(readJsonRpcMessage(line.text));
        } catch (error) {
          this.onerror?.(error as Error);
        }
      }
    };
  }

  override send(message: JSONRPCMessage): Promise<void> {
    return writeMessage(this.output, message);
  }
}
