/**
 * Spans as OTLP protobuf (`http/protobuf`): an `ExportTraceServiceRequest` encoded by hand from
 * the field numbers of opentelemetry-proto's `trace/v1/trace.proto` and `common/v1/common.proto`.
 * The messages are few and fixed, so a small writer replaces a protobuf runtime.
 *
 * One growing buffer: a nested message is written after room for the longest length prefix it
 * can need, and moved back once its length is known, so nothing is copied per field.
 */

import type { SpanSource } from './otel.js';
import type { Attribute, Span } from './spans.js';

const VARINT = 0;
const FIXED64 = 1;
const LENGTH_DELIMITED = 2;
// A length prefix of up to 2^35 bytes: more than any request.
const MAX_PREFIX = 5;
// ASCII texts up to this long are copied byte by byte rather than through the encoder.
const SHORT_TEXT = 96;
// The value of each hex digit, by character code; -1 for any other character.
const HEX_DIGITS = Int8Array.from({ length: 128 }, (_, code) => '0123456789abcdef'.indexOf(String.fromCharCode(code).toLowerCase()));

/** The bytes of an `ExportTraceServiceRequest` with one resource and scope. */
export function otlpProto(source: SpanSource, spans: readonly Span[]): Uint8Array<ArrayBuffer> {
  // Room for a typical span each up front: growing copies the buffer.
  const w = new ProtoWriter(1024 + spans.length * 1024);
  const resourceSpans = w.fork(1);
  const resource = w.fork(1);
  for (const attribute of source.resource) keyValue(w, 1, attribute);
  w.join(resource);
  const scopeSpans = w.fork(2);
  const scope = w.fork(1);
  w.string(1, source.scope.name);
  w.string(2, source.scope.version);
  w.join(scope);
  for (const span of spans) spanMessage(w, span);
  w.join(scopeSpans);
  w.join(resourceSpans);
  return w.finish();
}

function spanMessage(w: ProtoWriter, span: Span): void {
  const start = w.fork(2);
  w.hex(1, span.traceId);
  w.hex(2, span.spanId);
  if (span.parentSpanId !== null) w.hex(4, span.parentSpanId);
  w.string(5, span.name);
  w.uint(6, span.kind);
  w.fixed64(7, span.startTimeUnixNano);
  w.fixed64(8, span.endTimeUnixNano);
  for (const attribute of span.attributes) keyValue(w, 9, attribute);
  for (const event of span.events) {
    const at = w.fork(11);
    w.fixed64(1, event.timeUnixNano);
    w.string(2, event.name);
    for (const attribute of event.attributes) keyValue(w, 3, attribute);
    w.join(at);
  }
  if (span.droppedEventsCount > 0) w.uint(12, span.droppedEventsCount);
  if (span.status !== null) {
    const status = w.fork(15);
    w.string(2, span.status.message);
    w.uint(3, span.status.code);
    w.join(status);
  }
  w.join(start);
}

// Attribute keys come from a short list: each is encoded once, as its whole `key` field.
const KEY_FIELDS = new Map<string, Buffer>();
const MAX_KEY_FIELDS = 1024;

function keyField(key: string): Buffer {
  let bytes = KEY_FIELDS.get(key);
  if (bytes === undefined) {
    const w = new ProtoWriter(key.length * 3 + 8);
    w.string(1, key);
    bytes = Buffer.from(w.finish());
    if (KEY_FIELDS.size < MAX_KEY_FIELDS) KEY_FIELDS.set(key, bytes);
  }
  return bytes;
}

function keyValue(w: ProtoWriter, field: number, attribute: Attribute): void {
  const key = keyField(attribute.key);
  const v = attribute.value;
  if (typeof v === 'string') {
    // Most values are strings: their sizes are known up front, so no room is left and moved back.
    const length = Buffer.byteLength(v, 'utf8');
    const anyValue = 1 + varintSize(length) + length;
    w.lengthPrefix(field, key.length + 1 + varintSize(anyValue) + anyValue);
    w.raw(key);
    w.lengthPrefix(2, anyValue);
    w.stringOfLength(1, v, length);
    return;
  }
  const at = w.fork(field);
  w.raw(key);
  const value = w.fork(2);
  if (typeof v === 'boolean') w.uint(2, v ? 1 : 0);
  else if (typeof v === 'bigint') w.int64(3, v);
  else w.double(4, v);
  w.join(value);
  w.join(at);
}

/** The bytes a varint of `value` takes. */
function varintSize(value: number): number {
  let size = 1;
  for (let rest = value; rest > 0x7f; rest = Math.floor(rest / 128)) size++;
  return size;
}

/** The protobuf wire format, written into one buffer. */
class ProtoWriter {
  // Over an ArrayBuffer of its own (never shared), which is what fetch takes as a body.
  private buf: Buffer<ArrayBuffer>;
  private view: DataView;
  private pos = 0;

  constructor(size = 64 * 1024) {
    this.buf = Buffer.allocUnsafe(size);
    this.view = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.length);
  }

  /** Starts a length-delimited field; returns where its room for the length begins. */
  fork(field: number): number {
    this.tag(field, LENGTH_DELIMITED);
    this.ensure(MAX_PREFIX);
    const start = this.pos;
    this.pos += MAX_PREFIX;
    return start;
  }

  /** Ends the field begun at `start`: writes its length and moves its bytes up against it. */
  join(start: number): void {
    const bodyStart = start + MAX_PREFIX;
    const length = this.pos - bodyStart;
    let at = start;
    let rest = length;
    while (rest > 0x7f) {
      this.buf[at++] = (rest & 0x7f) | 0x80;
      rest = Math.floor(rest / 128);
    }
    this.buf[at++] = rest;
    if (at < bodyStart) {
      this.buf.copyWithin(at, bodyStart, this.pos);
      this.pos -= bodyStart - at;
    }
  }

  string(field: number, text: string): void {
    this.stringOfLength(field, text, Buffer.byteLength(text, 'utf8'));
  }

  /** A string whose UTF-8 length the caller has measured. */
  stringOfLength(field: number, text: string, length: number): void {
    this.tag(field, LENGTH_DELIMITED);
    this.varint(length);
    this.ensure(length);
    if (length !== text.length || length > SHORT_TEXT) {
      this.pos += this.buf.write(text, this.pos, 'utf8');
      return;
    }
    // As many bytes as characters: ASCII, each byte its code. Short texts (ids, names, hashes)
    // are copied here, cheaper than a call into the encoder.
    const buf = this.buf;
    let pos = this.pos;
    for (let i = 0; i < length; i++) buf[pos++] = text.charCodeAt(i);
    this.pos = pos;
  }

  /** The tag and length of a length-delimited field whose body comes next. */
  lengthPrefix(field: number, length: number): void {
    this.tag(field, LENGTH_DELIMITED);
    this.varint(length);
  }

  /** Bytes given as hex (trace and span ids). */
  hex(field: number, text: string): void {
    const length = text.length / 2;
    this.tag(field, LENGTH_DELIMITED);
    this.varint(length);
    this.ensure(length);
    // As Buffer's hex decoding does: pair by pair, stopping at the first that is not hex.
    const buf = this.buf;
    for (let i = 0; i < length; i++) {
      const high = HEX_DIGITS[text.charCodeAt(2 * i)] ?? -1;
      const low = HEX_DIGITS[text.charCodeAt(2 * i + 1)] ?? -1;
      if (high < 0 || low < 0) break;
      buf[this.pos++] = high * 16 + low;
    }
  }

  /** Bytes already in wire format. */
  raw(bytes: Uint8Array): void {
    this.ensure(bytes.length);
    this.buf.set(bytes, this.pos);
    this.pos += bytes.length;
  }

  uint(field: number, value: number): void {
    this.tag(field, VARINT);
    this.varint(value);
  }

  int64(field: number, value: bigint): void {
    this.tag(field, VARINT);
    let rest = BigInt.asUintN(64, value);
    this.ensure(10);
    while (rest > 0x7fn) {
      this.buf[this.pos++] = Number(rest & 0x7fn) | 0x80;
      rest >>= 7n;
    }
    this.buf[this.pos++] = Number(rest);
  }

  fixed64(field: number, value: bigint): void {
    this.tag(field, FIXED64);
    this.ensure(8);
    this.view.setBigUint64(this.pos, BigInt.asUintN(64, value), true);
    this.pos += 8;
  }

  double(field: number, value: number): void {
    this.tag(field, FIXED64);
    this.ensure(8);
    this.buf.writeDoubleLE(value, this.pos);
    this.pos += 8;
  }

  finish(): Uint8Array<ArrayBuffer> {
    return this.buf.subarray(0, this.pos);
  }

  private tag(field: number, wireType: number): void {
    this.varint(field * 8 + wireType);
  }

  /** A non-negative integer below 2^53. */
  private varint(value: number): void {
    this.ensure(8);
    let rest = value;
    while (rest > 0x7f) {
      this.buf[this.pos++] = (rest & 0x7f) | 0x80;
      rest = Math.floor(rest / 128);
    }
    this.buf[this.pos++] = rest;
  }

  private ensure(bytes: number): void {
    if (this.pos + bytes <= this.buf.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + bytes));
    this.buf.copy(grown, 0, 0, this.pos);
    this.buf = grown;
    this.view = new DataView(grown.buffer, grown.byteOffset, grown.length);
  }
}
