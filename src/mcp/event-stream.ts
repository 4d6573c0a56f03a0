/**
 * Server-sent events (HTML, "Parsing an event stream") as the proxy reads them from an upstream
 * over HTTP, holding no event's data past a limit: an event over it is skipped as it streams in,
 * read only for the request it answers or is (refused-answer.ts), as a stdio line over the limit is.
 * A parser that holds each event whole (eventsource-parser, the SDK's) would hold any size an
 * upstream sends, and its own bound ends the stream, every answer after it lost.
 */

import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import { MessageOutline } from './refused-answer.js';

/** One event: its data, or, over the limit, its size and the request it answers or is. */
export interface StreamEvent {
  readonly id: string | undefined;
  readonly event: string | undefined;
  /** The event's data, or null when it is over the limit. */
  readonly data: string | null;
  readonly bytes: number;
  /** Over the limit: the id of the request its data answers, else null. */
  readonly responseId: RequestId | null;
  /** Over the limit: its data's id when that is a request, else null. */
  readonly requestId: RequestId | null;
}

// A line may run this far past the limit and still be a `data: ` line whose value is within it.
const FIELD_BYTES = 'data: '.length;

/** Reads an event stream's text, piece by piece, into events. */
export class EventStreamReader {
  private line: string[] = [];
  private lineBytes = 0;
  /** The line being skipped, once it alone is over the limit: a data line's value goes to the event's outline. */
  private skipping: 'data' | 'other' | null = null;
  private afterCr = false;
  private id: string | undefined = undefined;
  private type: string | undefined = undefined;
  private data: string[] = [];
  private dataLines = 0;
  private bytes = 0;
  private outline: MessageOutline | null = null;

  constructor(
    private readonly limit: number,
    private readonly onEvent: (event: StreamEvent) => void,
    private readonly onRetry: (ms: number) => void,
  ) {}

  feed(text: string): void {
    // A line ends at CRLF, LF or CR; a CR that ended the last piece may have its LF in this one.
    let start = this.afterCr && text.startsWith('\n') ? 1 : 0;
    const breaks = /\r\n?|\n/g;
    breaks.lastIndex = start;
    for (let found = breaks.exec(text); found !== null; found = breaks.exec(text)) {
      this.add(text.slice(start, found.index));
      this.endLine();
      start = found.index + found[0].length;
    }
    this.add(text.slice(start));
    this.afterCr = text.endsWith('\r');
  }

  private add(piece: string): void {
    if (piece === '') return;
    if (this.skipping !== null) {
      if (this.skipping === 'data') this.takeData(piece);
      return;
    }
    this.line.push(piece);
    this.lineBytes += Buffer.byteLength(piece);
    if (this.lineBytes <= this.limit + FIELD_BYTES) return;
    const { field, value } = fieldOf(this.line.join(''));
    this.line = [];
    this.lineBytes = 0;
    this.skipping = field === 'data' ? 'data' : 'other';
    if (field === 'data') this.addData(value);
  }

  private endLine(): void {
    if (this.skipping !== null) {
      this.skipping = null;
      return;
    }
    const line = this.line.join('');
    this.line = [];
    this.lineBytes = 0;
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return;
    const { field, value } = fieldOf(line);
    if (field === 'data') this.addData(value);
    else if (field === 'event') this.type = value === '' ? undefined : value;
    else if (field === 'id' && !value.includes('\0')) this.id = value;
    else if (field === 'retry' && /^\d+$/.test(value)) this.onRetry(Number(value));
  }

  /** The value of a data line, or the start of one over the limit: the lines of an event's data are joined by LF. */
  private addData(value: string): void {
    this.takeData(this.dataLines > 0 ? `\n${value}` : value);
    this.dataLines++;
  }

  /** A piece of the event's data: held while the event is within the limit, else read by its outline. */
  private takeData(piece: string): void {
    this.bytes += Buffer.byteLength(piece);
    let read = piece;
    if (this.outline === null) {
      this.data.push(piece);
      if (this.bytes <= this.limit) return;
      // Over: what is held is read for the request it answers, and let go.
      this.outline = new MessageOutline();
      read = this.data.join('');
      this.data = [];
    }
    this.outline.feed(read);
  }

  private dispatch(): void {
    const outline = this.outline;
    if (this.dataLines > 0) {
      this.onEvent({ id: this.id, event: this.type, data: outline === null ? this.data.join('') : null, bytes: this.bytes, responseId: outline?.responseId() ?? null, requestId: outline?.requestId() ?? null });
    }
    this.id = undefined;
    this.type = undefined;
    this.data = [];
    this.dataLines = 0;
    this.bytes = 0;
    this.outline = null;
  }
}

/** A line's field and value: `field: value`, the space after the colon not part of the value. */
function fieldOf(line: string): { field: string; value: string } {
  const colon = line.indexOf(':');
  if (colon < 0) return { field: line, value: '' };
  const value = line.slice(colon + 1);
  return { field: line.slice(0, colon), value: value.startsWith(' ') ? value.slice(1) : value };
}
