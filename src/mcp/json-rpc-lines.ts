/**
 * Newline-delimited JSON-RPC as aura reads it from a peer over stdio (the client of `aura mcp` or
 * `aura proxy`, and the proxy's upstream): lines split from the byte stream, none held past a
 * limit, each read by `parseJson` and checked by the SDK's schema. The SDK's own reader parses
 * with `JSON.parse`, which can misread a key written with an escape on Node 24
 * (src/spine/native-json.ts): the arguments and results aura records and passes on are then what
 * the peer wrote.
 */

import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, JSONRPCMessageSchema, type JSONRPCMessage, type RequestId } from '@modelcontextprotocol/sdk/types.js';
import { parseJson } from '../spine/native-json.js';
import { BoundedMessage } from './refused-answer.js';

/**
 * One line's message.
 * @throws SyntaxError for text that is not JSON; the schema's error (with `issues`) for JSON that is not JSON-RPC
 */
export function readJsonRpcMessage(text: string): JSONRPCMessage {
  return JSONRPCMessageSchema.parse(parseJson(text));
}

/**
 * Sends a peer the reply it is owed for a line it sent that could not be read (JSON-RPC 2.0 §5.1):
 * -32700 for text that is not JSON (or nested past what can be read), -32600 for JSON that is not
 * a JSON-RPC message; nothing for any other error. The id cannot be known, so it is null. The
 * SDK's stdio transports report such a line to `onerror` and answer nothing.
 */
export function replyToMalformed(transport: Pick<Transport, 'send'>, error: Error): void {
  const parse = error instanceof SyntaxError || error instanceof RangeError;
  if (!parse && !Array.isArray((error as { issues?: unknown }).issues)) return;
  const reply = { jsonrpc: '2.0', id: null, error: { code: parse ? ErrorCode.ParseError : ErrorCode.InvalidRequest, message: parse ? 'Parse error: not JSON' : 'Invalid Request: not a JSON-RPC 2.0 message' } };
  // The SDK's types have no id-less error; its stdio transports write whatever they are given.
  transport.send(reply as unknown as JSONRPCMessage).catch(() => undefined);
}

/** One line of output: its text, or, over the limit, its size and the request it answers or is. */
export interface Line {
  readonly text: string | null;
  readonly bytes: number;
  /** Over the limit: the id of the request the line answers, read from the whole line; else null. */
  readonly responseId: RequestId | null;
  /** Over the limit: the line's id when it is a request; else null. */
  readonly requestId: RequestId | null;
}

/** Splits a byte stream into newline-delimited lines, holding at most `limit` bytes of any one. */
export class LineReader {
  private line: BoundedMessage | null = null;

  /** The lines that `chunk` completes. */
  take(chunk: Buffer, limit: number): Line[] {
    const lines: Line[] = [];
    let start = 0;
    for (;;) {
      const end = chunk.indexOf(0x0a, start);
      this.line ??= new BoundedMessage(limit);
      this.line.add(chunk.subarray(start, end < 0 ? chunk.length : end));
      if (end < 0) return lines;
      lines.push(this.finish(this.line));
      start = end + 1;
    }
  }

  private finish(line: BoundedMessage): Line {
    this.line = null;
    const held = line.held();
    return { text: held === null ? null : held.toString('utf8').replace(/\r$/, ''), bytes: line.bytes, responseId: line.responseId(), requestId: line.requestId() };
  }
}
