/**
 * Spans as OTLP/JSON: each `{id}.otel.jsonl` line is a complete `ExportTraceServiceRequest`
 * (`{"resourceSpans": [...]}`) holding one span, the form the Collector's `otlpjsonfile` receiver
 * reads, and the body `aura export-otel` posts with `http/json`. Unlike Aura's span-shaped JSON
 * (reference §21.39), ids are valid (32-hex trace, 16-hex span), times are unix nanoseconds, and
 * failures carry an error status.
 */

import type { AuraEvent } from '../spine/record.js';
import { PACKAGE_NAME, VERSION } from '../version.js';
import { AURA, GENERAL } from './semconv.js';
import { buildSpans, type Attribute, type AttributeValue, type Span, type SpanOptions } from './spans.js';

/** Who produced the spans: the OTLP resource and instrumentation scope. */
export interface SpanSource {
  readonly resource: readonly Attribute[];
  readonly scope: { readonly name: string; readonly version: string };
}

/** The resource of a session's spans. */
export function spanSourceOf(sessionId: string, auraId: string): SpanSource {
  return {
    resource: [
      { key: GENERAL.serviceName, value: 'aura' },
      { key: GENERAL.serviceVersion, value: VERSION },
      { key: AURA.sessionId, value: sessionId },
      { key: AURA.auraId, value: auraId },
    ],
    scope: { name: PACKAGE_NAME, version: VERSION },
  };
}

/** The `{id}.otel.jsonl` text of a session's events: one request line per span. */
export function otelLines(events: readonly AuraEvent[], options: SpanOptions = {}): string {
  return spanLines(events, buildSpans(events, options));
}

/** The `{id}.otel.jsonl` text of spans already built from `events`. */
export function spanLines(events: readonly AuraEvent[], spans: readonly Span[]): string {
  const first = events[0];
  if (first === undefined) return '';
  const source = spanSourceOf(first.session_id, first.aura_id);
  return spans.map((span) => `${otlpJson(source, [span])}\n`).join('');
}

/** An `ExportTraceServiceRequest` as OTLP/JSON text. */
export function otlpJson(source: SpanSource, spans: readonly Span[]): string {
  return JSON.stringify({
    resourceSpans: [{ resource: { attributes: source.resource.map(keyValue) }, scopeSpans: [{ scope: source.scope, spans: spans.map(spanJson) }] }],
  });
}

function spanJson(span: Span): Record<string, unknown> {
  return {
    traceId: span.traceId,
    spanId: span.spanId,
    ...(span.parentSpanId === null ? {} : { parentSpanId: span.parentSpanId }),
    name: span.name,
    kind: span.kind,
    startTimeUnixNano: span.startTimeUnixNano.toString(),
    endTimeUnixNano: span.endTimeUnixNano.toString(),
    attributes: span.attributes.map(keyValue),
    ...(span.events.length === 0 ? {} : { events: span.events.map((e) => ({ timeUnixNano: e.timeUnixNano.toString(), name: e.name, attributes: e.attributes.map(keyValue) })) }),
    ...(span.droppedEventsCount === 0 ? {} : { droppedEventsCount: span.droppedEventsCount }),
    ...(span.status === null ? {} : { status: span.status }),
  };
}

function keyValue(attribute: Attribute): { key: string; value: Record<string, unknown> } {
  return { key: attribute.key, value: anyValue(attribute.value) };
}

function anyValue(value: AttributeValue): Record<string, unknown> {
  if (typeof value === 'string') return { stringValue: value };
  if (typeof value === 'boolean') return { boolValue: value };
  // OTLP/JSON writes 64-bit ints as strings.
  if (typeof value === 'bigint') return { intValue: value.toString() };
  return { doubleValue: value };
}
