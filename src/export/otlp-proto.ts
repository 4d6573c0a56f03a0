/**
 * Spans as OTLP protobuf (`http/protobuf`): an `ExportTraceServiceRequest` encoded by hand from
 * the field numbers of opentelemetry-proto's `trace/v1/trace.proto` and `common/v1/common.proto`.
 * The messages are few and fixed, so a dozen lines of wire format replace a protobuf runtime.
 */

import type { SpanSource } from './otel.js';
import type { Attribute, AttributeValue, Span, SpanEvent } from './spans.js';

const VARINT = 0;
const FIXED64 = 1;
const LENGTH_DELIMITED = 2;

/** The bytes of an `ExportTraceServiceRequest` with one resource and scope. */
export function otlpProto(source: SpanSource, spans: readonly Span[]): Uint8Array {
  const resource = message(source.resource.map((a) => bytesField(1, keyValue(a))));
  const scope = message([stringField(1, source.scope.name), stringField(2, source.scope.version)]);
  const scopeSpans = message([bytesField(1, scope), ...spans.map((span) => bytesField(2, spanMessage(span)))]);
  const resourceSpans = message([bytesField(1, resource), bytesField(2, scopeSpans)]);
  return message([bytesField(1, resourceSpans)]);
}

function spanMessage(span: Span): Uint8Array {
  const fields: Uint8Array[] = [bytesField(1, Buffer.from(span.traceId, 'hex')), bytesField(2, Buffer.from(span.spanId, 'hex'))];
  if (span.parentSpanId !== null) fields.push(bytesField(4, Buffer.from(span.parentSpanId, 'hex')));
  fields.push(stringField(5, span.name), varintField(6, BigInt(span.kind)), fixed64Field(7, span.startTimeUnixNano), fixed64Field(8, span.endTimeUnixNano));
  for (const attribute of span.attributes) fields.push(bytesField(9, keyValue(attribute)));
  for (const event of span.events) fields.push(bytesField(11, eventMessage(event)));
  if (span.droppedEventsCount > 0) fields.push(varintField(12, BigInt(span.droppedEventsCount)));
  if (span.status !== null) fields.push(bytesField(15, message([stringField(2, span.status.message), varintField(3, BigInt(span.status.code))])));
  return message(fields);
}

function eventMessage(event: SpanEvent): Uint8Array {
  return message([fixed64Field(1, event.timeUnixNano), stringField(2, event.name), ...event.attributes.map((a) => bytesField(3, keyValue(a)))]);
}

function keyValue(attribute: Attribute): Uint8Array {
  return message([stringField(1, attribute.key), bytesField(2, anyValue(attribute.value))]);
}

function anyValue(value: AttributeValue): Uint8Array {
  if (typeof value === 'string') return stringField(1, value);
  if (typeof value === 'boolean') return varintField(2, value ? 1n : 0n);
  if (typeof value === 'bigint') return varintField(3, BigInt.asUintN(64, value));
  const double = Buffer.alloc(8);
  double.writeDoubleLE(value);
  return Buffer.concat([tag(4, FIXED64), double]);
}

function message(fields: readonly Uint8Array[]): Uint8Array {
  return Buffer.concat(fields);
}

function tag(field: number, wireType: number): Uint8Array {
  return varint(BigInt((field << 3) | wireType));
}

function varint(value: bigint): Uint8Array {
  const bytes: number[] = [];
  let rest = value;
  while (rest > 0x7fn) {
    bytes.push(Number(rest & 0x7fn) | 0x80);
    rest >>= 7n;
  }
  bytes.push(Number(rest));
  return Uint8Array.from(bytes);
}

function varintField(field: number, value: bigint): Uint8Array {
  return Buffer.concat([tag(field, VARINT), varint(value)]);
}

function fixed64Field(field: number, value: bigint): Uint8Array {
  const bytes = Buffer.alloc(8);
  bytes.writeBigUInt64LE(BigInt.asUintN(64, value));
  return Buffer.concat([tag(field, FIXED64), bytes]);
}

function bytesField(field: number, bytes: Uint8Array): Uint8Array {
  return Buffer.concat([tag(field, LENGTH_DELIMITED), varint(BigInt(bytes.length)), bytes]);
}

function stringField(field: number, text: string): Uint8Array {
  return bytesField(field, Buffer.from(text, 'utf8'));
}
