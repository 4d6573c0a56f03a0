/**
 * Spans as OTLP/JSON: each `{id}.otel.jsonl` line is a complete `ExportTraceServiceRequest`
 * (`{"resourceSpans": [...]}`) holding one span, the form the Collector's `otlpjsonfile` receiver
 * reads, and the body `aura export-otel` posts with `http/json`. Unlike Aura's span-shaped JSON
 * (reference §21.39), ids are valid (32-hex trace, 16-hex span), times are unix nanoseconds, and
 * failures carry an error status.
 */

import { redactCredentials } from '../middleware/credential-text.js';
import { REDACTED } from '../spine/redactor.js';
import { isSecretLikeKey } from '../middleware/secret-names.js';
import type { AuraEvent } from '../spine/record.js';
import { PACKAGE_NAME, VERSION } from '../version.js';
import { AURA, GENERAL } from './semconv.js';
import { buildSpans, type Attribute, type AttributeValue, type Span, type SpanOptions } from './spans.js';

/** Who produced the spans: the OTLP resource and instrumentation scope. */
export interface SpanSource {
  readonly resource: readonly Attribute[];
  readonly scope: { readonly name: string; readonly version: string };
}

/**
 * The resource of a session's spans: the app's `OTEL_RESOURCE_ATTRIBUTES` and `OTEL_SERVICE_NAME`
 * (which wins over a `service.name` among the attributes, as the SDK environment spec says), else
 * service `aura`; the session's own keys always.
 */
export function spanSourceOf(sessionId: string, auraId: string, env: Readonly<Record<string, string | undefined>> = process.env): SpanSource {
  const resource = new Map<string, string>([[GENERAL.serviceName, 'aura']]);
  for (const [key, value] of resourceAttributes(env['OTEL_RESOURCE_ATTRIBUTES'])) resource.set(key, value);
  const serviceName = env['OTEL_SERVICE_NAME']?.trim() ?? '';
  if (serviceName !== '') resource.set(GENERAL.serviceName, serviceName);
  // aura's version names aura's own service; an app's service has its own (the scope names aura's).
  if (resource.get(GENERAL.serviceName) === 'aura') resource.set(GENERAL.serviceVersion, VERSION);
  resource.set(AURA.sessionId, sessionId);
  resource.set(AURA.auraId, auraId);
  // The app's variables may carry a credential (`api_key=…`, a URL with its password): a span never does.
  const attributes = [...resource].map(([key, value]) => ({ key, value: isSecretLikeKey(key) ? REDACTED : redactCredentials(value) }));
  return { resource: attributes, scope: { name: PACKAGE_NAME, version: VERSION } };
}

/**
 * `OTEL_RESOURCE_ATTRIBUTES`: `key=value` pairs, comma-separated, values percent-encoded. A value
 * that does not decode discards the whole variable, as the spec asks (a partial resource would
 * misattribute spans more quietly than none).
 */
function resourceAttributes(text: string | undefined): [string, string][] {
  if (text === undefined || text.trim() === '') return [];
  const pairs: [string, string][] = [];
  for (const entry of text.split(',')) {
    if (entry.trim() === '') continue;
    const at = entry.indexOf('=');
    const key = at === -1 ? '' : entry.slice(0, at).trim();
    if (key === '') return [];
    try {
      pairs.push([key, decodeURIComponent(entry.slice(at + 1).trim())]);
    } catch {
      return [];
    }
  }
  return pairs;
}

/** The `{id}.otel.jsonl` text of a session's events: one request line per span. */
export function otelLines(events: readonly AuraEvent[], options: SpanOptions = {}): string {
  return spanLines(events, buildSpans(events, options));
}

/** The `{id}.otel.jsonl` text of spans already built from `events`. */
export function spanLines(events: readonly AuraEvent[], spans: readonly Span[]): string {
  const first = events[0];
  if (first === undefined) return '';
  const line = spanLineOf(spanSourceOf(first.session_id, first.aura_id));
  return spans.map(line).join('');
}

// What follows the spans of a one-resource, one-scope request: `]` closes `spans`, then each level.
const REQUEST_TAIL = ']}]}]}';

/**
 * The `{id}.otel.jsonl` line (newline included) of one span of `source`: the text of
 * {@link otlpJson}, with the resource and scope, the same on every line, written once.
 */
export function spanLineOf(source: SpanSource): (span: Span) => string {
  const head = requestHead(source);
  return (span) => `${head}${spanText(span)}${REQUEST_TAIL}\n`;
}

/** An `ExportTraceServiceRequest` as OTLP/JSON text. */
export function otlpJson(source: SpanSource, spans: readonly Span[]): string {
  return `${requestHead(source)}${spans.map(spanText).join(',')}${REQUEST_TAIL}`;
}

/** The request's text up to its first span. */
function requestHead(source: SpanSource): string {
  return `{"resourceSpans":[{"resource":{"attributes":${attributesText(source.resource)}},"scopeSpans":[{"scope":${JSON.stringify(source.scope)},"spans":[`;
}

/**
 * A span's OTLP/JSON text, written out directly: the same text as `JSON.stringify` of the span as
 * an object, without building the object (a third of a long session's close went into the spans'
 * objects and their stringifying). Every string goes through `JSON.stringify`.
 */
function spanText(span: Span): string {
  let text = `{"traceId":${JSON.stringify(span.traceId)},"spanId":${JSON.stringify(span.spanId)}`;
  if (span.parentSpanId !== null) text += `,"parentSpanId":${JSON.stringify(span.parentSpanId)}`;
  text += `,"name":${JSON.stringify(span.name)},"kind":${JSON.stringify(span.kind)},"startTimeUnixNano":"${span.startTimeUnixNano}","endTimeUnixNano":"${span.endTimeUnixNano}","attributes":${attributesText(span.attributes)}`;
  if (span.events.length > 0) {
    text += ',"events":[';
    for (let i = 0; i < span.events.length; i++) {
      const event = span.events[i] as Span['events'][number];
      text += `${i === 0 ? '' : ','}{"timeUnixNano":"${event.timeUnixNano}","name":${JSON.stringify(event.name)},"attributes":${attributesText(event.attributes)}}`;
    }
    text += ']';
  }
  if (span.droppedEventsCount !== 0) text += `,"droppedEventsCount":${JSON.stringify(span.droppedEventsCount)}`;
  if (span.status !== null) text += `,"status":${JSON.stringify(span.status)}`;
  return `${text}}`;
}

function attributesText(attributes: readonly Attribute[]): string {
  let text = '[';
  for (let i = 0; i < attributes.length; i++) {
    const { key, value } = attributes[i] as Attribute;
    text += `${i === 0 ? '' : ','}{"key":${JSON.stringify(key)},"value":${anyValueText(value)}}`;
  }
  return `${text}]`;
}

function anyValueText(value: AttributeValue): string {
  if (typeof value === 'string') return `{"stringValue":${JSON.stringify(value)}}`;
  if (typeof value === 'boolean') return `{"boolValue":${value}}`;
  // OTLP/JSON writes 64-bit ints as strings.
  if (typeof value === 'bigint') return `{"intValue":"${value}"}`;
  return `{"doubleValue":${JSON.stringify(value)}}`;
}
