/**
 * The proxy's upstream over Streamable HTTP: the MCP SDK's client transport, with what the upstream
 * answers read here, as a stdio upstream's lines are (upstream.ts). The SDK parses answers with
 * `JSON.parse`, which can misread a key written with an escape on Node 24
 * (src/spine/native-json.ts): the proxy would record and pass on another key than the server
 * wrote. Nor does it bound an answer's size, and it drops an answer that is not valid JSON-RPC,
 * leaving its call waiting.
 *
 * - An answer in JSON reaches the SDK already parsed by `parseJson`.
 * - In an event stream, each message reaches the SDK as a stand-in: its JSON-RPC frame (id,
 *   method, error code and message, which the SDK reads) around a reference to the message as
 *   `parseJson` read it, and the message itself is what the transport hands on. The reference's
 *   key is new for each transport, so an upstream cannot name a message of its own.
 * - A message over `--max-message-bytes` (a JSON answer, an event's data) is not held: it is read
 *   only for the request it answers, which gets an error instead; an answer that is not valid
 *   JSON-RPC gets one too (refused-answer.ts).
 */

import { randomUUID } from 'node:crypto';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { mediaTypeEssence } from '@modelcontextprotocol/sdk/shared/mediaType.js';
import type { FetchLike, Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, MessageExtraInfo } from '@modelcontextprotocol/sdk/types.js';
import { objectOf } from '../spine/json-shape.js';
import { parseJson } from '../spine/native-json.js';
import { EventStreamReader, type StreamEvent } from './event-stream.js';
import { BoundedMessage, droppedOverLimit, overLimitMessage, tooLargeAnswer, upstreamMessageOf } from './refused-answer.js';

/** A Streamable HTTP upstream at `url`, not yet started. */
export class HttpUpstream implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;

  private readonly inner: StreamableHTTPClientTransport;
  /** The messages that stand-ins refer to, until the SDK hands their stand-in on. */
  private readonly held = new Map<number, JSONRPCMessage>();
  private readonly refKey = `aura/stand-in/${randomUUID()}`;
  private next = 0;

  constructor(
    url: URL,
    private readonly maxMessageBytes: number,
  ) {
    this.inner = new StreamableHTTPClientTransport(url, { fetch: (input, init) => this.fetchParsed(input, init) });
    this.inner.onclose = () => this.onclose?.();
    this.inner.onerror = (error) => this.onerror?.(error);
    this.inner.onmessage = (message) => this.onmessage?.(this.standingFor(message));
  }

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  send(message: JSONRPCMessage, options?: Parameters<StreamableHTTPClientTransport['send']>[1]): Promise<void> {
    return this.inner.send(message, options);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion(version);
  }

  /** What the upstream answered, its JSON read by parseJson and its event stream's messages stood in for. */
  private async fetchParsed(input: Parameters<FetchLike>[0], init: Parameters<FetchLike>[1]): Promise<Response> {
    const response = await fetch(input, init);
    // Told apart as the SDK tells them apart: an answer it reads as JSON or as a stream is read here.
    const type = mediaTypeEssence(response.headers.get('content-type'));
    if (!response.ok || response.body === null) return response;
    if (type === 'application/json') {
      const answer = await this.jsonAnswer(response.body, init?.body);
      const parsed = new Response(null, response);
      Object.defineProperty(parsed, 'json', { value: () => Promise.resolve(answer) });
      return parsed;
    }
    if (type !== 'text/event-stream') return response;
    const stream = response.body.pipeThrough(new TextDecoderStream()).pipeThrough(this.standIns()).pipeThrough(new TextEncoderStream());
    return new Response(stream, response);
  }

  /**
   * A JSON answer as parseJson reads it, each message checked as a stdio line is. Over the limit,
   * the error that stands for it: to the request it names, else to the one this POST carried
   * (the answer to a POST answers its request).
   * @throws for an answer that is not JSON, or JSON that is not JSON-RPC, as the SDK's own reading throws
   */
  private async jsonAnswer(body: ReadableStream<Uint8Array>, posted: unknown): Promise<unknown> {
    const answer = new BoundedMessage(this.maxMessageBytes);
    const reader = body.getReader();
    for (let read = await reader.read(); !read.done; read = await reader.read()) answer.add(read.value);
    const held = answer.held();
    if (held !== null) {
      // As the SDK decodes it: malformed UTF-8 replaced, a byte order mark dropped.
      const value = parseJson(new TextDecoder().decode(held));
      return Array.isArray(value) ? value.map(upstreamMessageOf) : upstreamMessageOf(value);
    }
    const id = answer.responseId() ?? (typeof posted === 'string' ? objectOf(parseJson(posted))['id'] : undefined);
    if (typeof id !== 'string' && typeof id !== 'number') throw droppedOverLimit(answer.bytes, this.maxMessageBytes);
    return tooLargeAnswer(id, answer.bytes, this.maxMessageBytes);
  }

  /** An event stream as the upstream sent it, each message replaced by a stand-in. */
  private standIns(): TransformStream<string, string> {
    let reader: EventStreamReader | null = null;
    return new TransformStream({
      start: (out) => {
        reader = new EventStreamReader(
          this.maxMessageBytes,
          (event) => {
            const text = this.eventText(event);
            if (text !== null) out.enqueue(text);
          },
          (ms) => out.enqueue(`retry: ${ms}\n\n`),
        );
      },
      transform: (chunk) => reader?.feed(chunk),
    });
  }

  /** The event as the SDK is to read it, or null for one dropped. */
  private eventText(event: StreamEvent): string | null {
    const message = event.event === undefined || event.event === 'message';
    let data = event.data;
    if (data === null) {
      // Over the limit: an answer fails its request; a request is answered with an error; anything
      // else (an event of another type too) is reported and dropped.
      const { standIn, reply, report } = overLimitMessage(message ? event : { responseId: null, requestId: null }, event.bytes, this.maxMessageBytes);
      if (report !== null) this.onerror?.(report);
      if (reply !== null) this.send(reply).catch((error: Error) => this.onerror?.(error));
      if (standIn === null) return null;
      data = JSON.stringify(standIn);
    } else if (message) {
      const standIn = this.standIn(data);
      if (standIn !== null) data = JSON.stringify(standIn);
    }
    const fields = [...(event.id === undefined ? [] : [`id: ${event.id}`]), ...(event.event === undefined ? [] : [`event: ${event.event}`]), ...data.split('\n').map((line) => `data: ${line}`)];
    return `${fields.join('\n')}\n\n`;
  }

  /** The stand-in of the message in `data`, or null for data that is not a message (the SDK reports it). */
  private standIn(data: string): Record<string, unknown> | null {
    let message: JSONRPCMessage;
    try {
      message = upstreamMessageOf(parseJson(data));
    } catch {
      return null;
    }
    const n = this.next++;
    this.held.set(n, message);
    const ref = { [this.refKey]: n };
    const id = 'id' in message ? { id: message.id } : {};
    if ('method' in message) return { jsonrpc: '2.0', ...id, method: message.method, params: ref };
    if ('error' in message) return { jsonrpc: '2.0', ...id, error: { code: message.error.code, message: message.error.message, data: ref } };
    return { jsonrpc: '2.0', ...id, result: ref };
  }

  /** The message a stand-in refers to; any other message as it is. */
  private standingFor(message: JSONRPCMessage): JSONRPCMessage {
    const within = 'method' in message ? message.params : 'error' in message ? message.error.data : 'result' in message ? message.result : undefined;
    const n = typeof within === 'object' && within !== null ? (within as Record<string, unknown>)[this.refKey] : undefined;
    const held = typeof n === 'number' ? this.held.get(n) : undefined;
    if (held === undefined) return message;
    this.held.delete(n as number);
    // The SDK renumbers an answer replayed after a reconnection: the number it gave stands.
    return 'id' in message && 'id' in held ? ({ ...held, id: message.id } as JSONRPCMessage) : held;
  }
}
