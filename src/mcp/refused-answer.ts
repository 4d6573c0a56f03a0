/**
 * An answer from the proxy's upstream that the proxy does not pass on: over the message limit, or
 * JSON that is not a valid JSON-RPC answer (a string `result`). It is replaced by a JSON-RPC error
 * for the request it answers, so that the call fails, recorded as `tool.error`, instead of waiting
 * for ever; the SDK drops such a message unanswered. The request is the answer's `id`, wherever it
 * stands among the answer's keys: a message over the limit is read for it as it streams past
 * ({@link MessageOutline}), never held. A request of the upstream's over the limit (a sampling
 * request, say) is answered with an error in the same way, so the upstream does not wait for ever.
 */

import { TextDecoder } from 'node:util';
import { CallToolResultSchema, ErrorCode, JSONRPCErrorResponseSchema, JSONRPCMessageSchema, JSONRPCResultResponseSchema, type CallToolResult, type JSONRPCMessage, type RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { ZodError } from 'zod';
import { objectOf } from '../spine/json-shape.js';
import { parseJson } from '../spine/native-json.js';

/** What the JSON-RPC error that stands for an answer over the limit carries in `data`. */
export const TOO_LARGE = 'aura/too_large';
/** What the JSON-RPC error that stands for an answer that is not one (or not a tool result) carries in `data`. */
export const MALFORMED = 'aura/malformed_answer';

/** Why a message of `bytes` is not passed on. */
function overLimit(bytes: number, limit: number): string {
  return `the MCP server's message of ${bytes} bytes is over the proxy's limit of ${limit} bytes (--max-message-bytes)`;
}

/** What is reported of a message of `bytes` over `limit` that answers no request the proxy knows: it is dropped. */
export function droppedOverLimit(bytes: number, limit: number): Error {
  return new Error(`${overLimit(bytes, limit)}: dropped`);
}

/**
 * The error that stands for a message of `bytes` over `limit` with `id`: for the proxy's client,
 * the answer to its request `id`; for the upstream, the answer to its own request `id`, which the
 * proxy did not pass on.
 */
export function tooLargeAnswer(id: RequestId, bytes: number, limit: number): JSONRPCMessage {
  return { jsonrpc: '2.0', id, error: { code: ErrorCode.InternalError, message: overLimit(bytes, limit), data: { [TOO_LARGE]: { bytes, limit } } } };
}

/** What the proxy does with a message of its upstream's over the limit, each transport alike. */
export interface OverLimit {
  /** For an answer: the error that stands for it, passed on in its place (its request fails). */
  readonly standIn: JSONRPCMessage | null;
  /** For a request of the upstream's: the error sent back to the upstream as its answer. */
  readonly reply: JSONRPCMessage | null;
  /** What is reported on the proxy's stderr: the request answered so, or a message dropped. */
  readonly report: Error | null;
}

/**
 * What becomes of a message of `bytes` over `limit` that answers request `responseId`, or is
 * request `requestId`, or neither (a notification, or not a message at all): dropped.
 */
export function overLimitMessage(ids: { readonly responseId: RequestId | null; readonly requestId: RequestId | null }, bytes: number, limit: number): OverLimit {
  if (ids.responseId !== null) return { standIn: tooLargeAnswer(ids.responseId, bytes, limit), reply: null, report: null };
  if (ids.requestId !== null) return { standIn: null, reply: tooLargeAnswer(ids.requestId, bytes, limit), report: new Error(`${overLimit(bytes, limit)}: a request, answered with an error`) };
  return { standIn: null, reply: null, report: droppedOverLimit(bytes, limit) };
}

/**
 * A message from the upstream, from its JSON: the message, or, for an answer that is not a valid
 * JSON-RPC answer, the error that stands for it.
 * @throws the schema's error (with `issues`) for JSON that is neither a message nor an answer to a request
 */
export function upstreamMessageOf(value: unknown): JSONRPCMessage {
  const checked = JSONRPCMessageSchema.safeParse(value);
  if (checked.success) return checked.data;
  const id = answeredId(value);
  if (id === null) throw checked.error;
  const answer = objectOf(value);
  // Checked against the kind of answer it is, the issue names what is wrong with it.
  const kind = 'result' in answer ? JSONRPCResultResponseSchema : JSONRPCErrorResponseSchema;
  const issue = kind.safeParse(value).error ?? checked.error;
  return { jsonrpc: '2.0', id, error: malformed(`the MCP server's answer is not a valid JSON-RPC response (${issueOf(issue)})`) };
}

/**
 * The upstream's answer to `tools/call`, checked. One that is not a tool result (`content` not a
 * list) fails the call, recorded as its `tool.error`: passed on, the SDK would refuse the client
 * the result that the trail holds as a success.
 * @throws an error with the code and data of a malformed answer
 */
export function toolResultOf(result: unknown): CallToolResult {
  const checked = CallToolResultSchema.safeParse(result);
  if (checked.success) return result as CallToolResult;
  const { code, message, data } = malformed(`the MCP server's answer is not a valid tool result (${issueOf(checked.error)})`);
  throw Object.assign(new Error(message), { code, data });
}

function malformed(message: string): { code: number; message: string; data: Record<string, unknown> } {
  return { code: ErrorCode.InternalError, message, data: { [MALFORMED]: true } };
}

/**
 * The first thing wrong, by where it is and the schema's words for it (a type expected and a type
 * received, never a value of the answer's).
 */
function issueOf(error: ZodError): string {
  const issue = error.issues[0];
  if (issue === undefined) return 'not JSON-RPC';
  const at = issue.path.map(String).join('.');
  return at === '' ? issue.message : `${at}: ${issue.message}`;
}

/** The id of the request that a JSON value answers (a result or an error, no method), else null. */
function answeredId(value: unknown): RequestId | null {
  const answer = objectOf(value);
  const id = answer['id'];
  if (typeof id !== 'string' && typeof id !== 'number') return null;
  return ('result' in answer || 'error' in answer) && !('method' in answer) ? id : null;
}

/** A message's bytes as they arrive, held up to a limit; past it, read only for the request it answers. */
export class BoundedMessage {
  /** The bytes seen so far. */
  bytes = 0;
  private pieces: Uint8Array[] = [];
  private over: { outline: MessageOutline; decoder: TextDecoder } | null = null;

  constructor(private readonly limit: number) {}

  add(piece: Uint8Array): void {
    this.bytes += piece.length;
    if (this.over !== null) {
      this.over.outline.feed(this.over.decoder.decode(piece, { stream: true }));
      return;
    }
    this.pieces.push(piece);
    if (this.bytes <= this.limit) return;
    const over = { outline: new MessageOutline(), decoder: new TextDecoder() };
    for (const held of this.pieces.splice(0)) over.outline.feed(over.decoder.decode(held, { stream: true }));
    this.over = over;
  }

  /** The message, or null once it is over the limit. */
  held(): Buffer | null {
    return this.over === null ? Buffer.concat(this.pieces) : null;
  }

  /** Over the limit, the id of the request the message answers; else null. */
  responseId(): RequestId | null {
    return this.over === null ? null : this.over.outline.responseId();
  }

  /** Over the limit, the id of the message when it is a request; else null. */
  requestId(): RequestId | null {
    return this.over === null ? null : this.over.outline.requestId();
  }
}

// An id is a number or a short string; what the outline keeps of a value is bounded by this.
const MAX_ID_CHARS = 256;

/**
 * The top level of a JSON object read as its text streams past, keeping only its keys and its
 * `id`: what a message over the limit answers, or which request it is, never holding the message. The keys may come in
 * any order (the SDK writes `{"result":…,"jsonrpc":"2.0","id":3}`) and the last of a repeated key
 * counts, as it does for `JSON.parse`. Only JSON's structure is read: `"`, `\`, `{`, `}`, `[`, `]`,
 * `:` and `,` outside strings, which UTF-8 and UTF-16 never hold inside another character.
 */
export class MessageOutline {
  private depth = 0;
  private object: boolean | null = null;
  private inString = false;
  private escaped = false;
  /** At depth 1: whether the next string is a key. */
  private atKey = false;
  /** The text of the key or `id` value being read, while it is short enough to matter. */
  private captured: string | null = null;
  private capturing: 'key' | 'id' | null = null;
  private key: string | null = null;
  private readonly keys = new Set<string>();
  private id: unknown = undefined;
  /**
   * In the piece being read, where the next `"` and the next `\` are (its length when there is
   * none; -1 before they are looked for): each is looked for again only once it is passed, so a
   * string of escapes is scanned once, not once an escape.
   */
  private quoteAt = -1;
  private slashAt = -1;

  /** Reads the next piece of the text. */
  feed(text: string): void {
    this.quoteAt = -1;
    this.slashAt = -1;
    let i = 0;
    while (i < text.length) {
      if (this.inString) {
        i = this.readString(text, i);
        continue;
      }
      const c = text[i] as string;
      i++;
      if (this.object === null) {
        if (c.trim() === '') continue;
        this.object = c === '{';
      }
      if (!this.object) return;
      this.structure(c);
    }
  }

  /** The id of the request this message answers, or null when it is not recognisably an answer with an id. */
  responseId(): RequestId | null {
    if (!this.keys.has('result') && !this.keys.has('error')) return null;
    if (this.keys.has('method')) return null;
    return this.idValue();
  }

  /** The id of this message when it is a request (a method and an id), else null. */
  requestId(): RequestId | null {
    return this.keys.has('method') && !this.keys.has('result') && !this.keys.has('error') ? this.idValue() : null;
  }

  private idValue(): RequestId | null {
    return typeof this.id === 'string' || typeof this.id === 'number' ? this.id : null;
  }

  private readString(text: string, from: number): number {
    if (this.escaped) {
      this.escaped = false;
      this.take(text, from, from + 1);
      return from + 1;
    }
    if (this.quoteAt < from) this.quoteAt = indexOrEnd(text, '"', from);
    if (this.slashAt < from) this.slashAt = indexOrEnd(text, '\\', from);
    const end = Math.min(this.quoteAt, this.slashAt);
    if (end === text.length) {
      this.take(text, from, text.length);
      return text.length;
    }
    this.take(text, from, end + 1);
    if (text[end] === '\\') this.escaped = true;
    else this.stringEnded();
    return end + 1;
  }

  private structure(c: string): void {
    if (c === '"') {
      this.inString = true;
      if (this.depth === 1 && this.atKey) this.capture('key');
      this.take(c, 0, 1);
      return;
    }
    if (this.depth === 1 && (c === ',' || c === '}')) this.valueEnded();
    if (c === '{' || c === '[') this.depth++;
    else if (c === '}' || c === ']') this.depth--;
    if (this.depth === 1 && (c === '{' || c === ',')) this.atKey = true;
    else if (this.depth === 1 && c === ':') {
      this.atKey = false;
      if (this.key === 'id') this.capture('id');
      return;
    }
    this.take(c, 0, 1);
  }

  private stringEnded(): void {
    this.inString = false;
    if (this.capturing !== 'key') return;
    this.key = this.read<string>() ?? null;
    if (this.key !== null) this.keys.add(this.key);
  }

  private valueEnded(): void {
    if (this.capturing === 'id') this.id = this.read();
    this.key = null;
  }

  private capture(what: 'key' | 'id'): void {
    this.capturing = what;
    this.captured = '';
  }

  private take(text: string, from: number, to: number): void {
    if (this.captured === null) return;
    this.captured = this.captured.length + to - from > MAX_ID_CHARS ? null : this.captured + text.slice(from, to);
  }

  /** The JSON value captured, or undefined when it was too long or is not JSON. */
  private read<T>(): T | undefined {
    const captured = this.captured;
    this.capturing = null;
    this.captured = null;
    try {
      return captured === null ? undefined : (parseJson(captured) as T);
    } catch {
      return undefined;
    }
  }
}

/** Where `char` is first found in `text` from `from`, else the text's length. */
function indexOrEnd(text: string, char: string, from: number): number {
  const at = text.indexOf(char, from);
  return at < 0 ? text.length : at;
}
