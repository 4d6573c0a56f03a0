/**
 * The client side of a proxy connection, held until the client's `initialize` arrives. The proxy
 * cannot answer `initialize` before it knows both ends: the upstream's capabilities are what it
 * mirrors to the client, and the client's (sampling, elicitation, roots) are what it declares to
 * the upstream. So messages wait here while the upstream is connected, then are replayed, in
 * order, to the server built for them.
 */

import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import { isInitializeRequest, type InitializeRequest, type JSONRPCMessage, type JSONRPCRequest, type MessageExtraInfo } from '@modelcontextprotocol/sdk/types.js';
import { replyToMalformed } from './json-rpc-lines.js';

/** A client transport whose messages are held until {@link ClientGate.open}. */
export class ClientGate implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;

  private held: { message: JSONRPCMessage; extra: MessageExtraInfo | undefined }[] = [];
  private opened = false;
  private initializing = false;

  /**
   * @param inner the client's transport, started by the caller after this gate is made
   * @param answerMalformed answer unreadable lines (stdio; Streamable HTTP answers them itself with a 400)
   * @param onInitialize called once, with the client's `initialize` request
   */
  constructor(
    readonly inner: Transport,
    answerMalformed: boolean,
    onInitialize: (request: JSONRPCRequest & InitializeRequest) => void,
  ) {
    inner.onmessage = (message, extra) => {
      if (this.opened) return this.onmessage?.(message, extra);
      this.held.push({ message, extra });
      if (!this.initializing && isInitializeRequest(message)) {
        this.initializing = true;
        onInitialize(message as JSONRPCRequest & InitializeRequest);
      }
    };
    inner.onclose = () => this.onclose?.();
    inner.onerror = (error) => {
      if (answerMalformed) replyToMalformed(inner, error);
      this.onerror?.(error);
    };
  }

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  /** The inner transport is started by its owner; the server connecting to the gate starts nothing. */
  async start(): Promise<void> {}

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    return this.inner.send(message, options);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
  }

  /** Replays the held messages to the connected server, then passes messages straight through. */
  open(): void {
    this.opened = true;
    for (const { message, extra } of this.held.splice(0)) this.onmessage?.(message, extra);
  }
}
