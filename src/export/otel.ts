/**
 * `{id}.otel.jsonl`: one OTLP/JSON span per event, each line a complete `TracesData` object (the
 * form the OpenTelemetry Collector's `otlpjsonfile` receiver reads). Unlike Aura's span-shaped
 * JSON (reference §21.39), ids are valid (32-hex trace, 16-hex span), times are unix nanoseconds,
 * and failures carry an error status.
 *
 * The first event's span is the session's root and lasts from open to the last event; every other
 * event is a child of it. Payloads are not copied onto spans: the trail is the record, and spans
 * travel to systems with other readers (privacy by default).
 */

import { objectOf, stringOf } from '../spine/json-shape.js';
import { sha256 } from '../spine/hash.js';
import type { AuraEvent } from '../spine/record.js';
import { PACKAGE_NAME, VERSION } from '../version.js';

/** An OTLP/JSON attribute. */
interface KeyValue {
  readonly key: string;
  readonly value: { readonly stringValue: string } | { readonly boolValue: boolean } | { readonly intValue: string };
}

/** An OTLP/JSON span. */
export interface OtlpSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly name: string;
  readonly kind: 1;
  readonly startTimeUnixNano: string;
  readonly endTimeUnixNano: string;
  readonly attributes: readonly KeyValue[];
  readonly status?: { readonly code: 2; readonly message: string };
}

const HEX32 = /^[0-9a-f]{32}$/;
const HEX16 = /^[0-9a-f]{16}$/;
const ZERO_ID = /^0+$/;
const SPAN_KIND_INTERNAL = 1;
const STATUS_ERROR = 2;

/** The OTLP/JSON lines of a session's spans. */
export function otelLines(events: readonly AuraEvent[]): string {
  const first = events[0];
  if (first === undefined) return '';
  const resource = {
    attributes: [
      stringAttribute('service.name', 'aura'),
      stringAttribute('aura.session_id', first.session_id),
      stringAttribute('aura.aura_id', first.aura_id),
    ],
  };
  const scope = { name: PACKAGE_NAME, version: VERSION };
  return events
    .map((event) => `${JSON.stringify({ resourceSpans: [{ resource, scopeSpans: [{ scope, spans: [spanOf(event, events)] }] }] })}\n`)
    .join('');
}

/** The span of one event of a session. */
export function spanOf(event: AuraEvent, events: readonly AuraEvent[]): OtlpSpan {
  const root = events[0] as AuraEvent;
  const isRoot = event === root;
  const start = unixNanos(event.timestamp);
  const latency = event.telemetry['latency_ms'];
  const end = isRoot
    ? unixNanos((events[events.length - 1] as AuraEvent).timestamp)
    : typeof latency === 'number' && Number.isFinite(latency) && latency > 0
      ? start + BigInt(Math.round(latency * 1e6))
      : start;
  const failure = failureOf(event);
  return {
    traceId: traceIdOf(event),
    spanId: spanIdOf(event),
    ...(isRoot ? {} : { parentSpanId: spanIdOf(root) }),
    name: event.kind,
    kind: SPAN_KIND_INTERNAL,
    startTimeUnixNano: start.toString(),
    endTimeUnixNano: (end < start ? start : end).toString(),
    attributes: attributesOf(event),
    ...(failure === null ? {} : { status: { code: STATUS_ERROR, message: failure } }),
  };
}

function traceIdOf(event: AuraEvent): string {
  return HEX32.test(event.trace_id) && !ZERO_ID.test(event.trace_id) ? event.trace_id : sha256(event.session_id).slice(0, 32);
}

/** A span id that is a prefix of the event id, so the two can be matched by eye. */
export function spanIdOf(event: AuraEvent): string {
  if (event.span_id !== null && HEX16.test(event.span_id) && !ZERO_ID.test(event.span_id)) return event.span_id;
  const prefix = event.event_id.slice(0, 16);
  return HEX16.test(prefix) && !ZERO_ID.test(prefix) ? prefix : sha256(event.event_id).slice(0, 16);
}

const TIMESTAMP = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/;

/** Nanoseconds since the epoch of an ISO 8601 timestamp with up to nanosecond digits; 0 if unreadable. */
export function unixNanos(timestamp: string): bigint {
  const match = TIMESTAMP.exec(timestamp);
  if (match === null) return 0n;
  const seconds = Date.parse(`${match[1] as string}${match[3] as string}`);
  if (Number.isNaN(seconds)) return 0n;
  return BigInt(seconds) * 1_000_000n + BigInt((match[2] ?? '').padEnd(9, '0'));
}

function failureOf(event: AuraEvent): string | null {
  if (event.kind === 'constraint.violated') return stringOf(event.payload['message']) ?? 'policy violation';
  if (event.kind.endsWith('.error')) return stringOf(event.payload['error']) ?? event.kind;
  return null;
}

/** The promoted attributes (reference §18.5), taking the agent ref from the trailer too (§21.39). */
function attributesOf(event: AuraEvent): KeyValue[] {
  const payload = event.payload;
  const context = objectOf(payload['context']);
  const ids = event.agent_ids;
  const operator = objectOf(objectOf(ids['ids'])['operator']);
  const attributes: KeyValue[] = [
    stringAttribute('aura.event_id', event.event_id),
    stringAttribute('aura.kind', event.kind),
    stringAttribute('aura.content_hash', event.content_hash),
  ];
  const optional: [string, unknown][] = [
    ['aura.agent_ref', stringOf(payload['agent_ref']) ?? stringOf(context['agent_ref']) ?? stringOf(ids['agent_ref'])],
    ['aura.policy_version', stringOf(payload['policy_version']) ?? stringOf(ids['policy_version']) ?? stringOf(context['policy_version'])],
    ['aura.step_id', event.step_id ?? stringOf(payload['step_id'])],
    ['aura.tool', stringOf(payload['tool'])],
    ['aura.principal', stringOf(payload['principal'])],
    ['aura.skill_id', stringOf(payload['skill_id'])],
    ['aura.manifest_snapshot_hash', stringOf(payload['manifest_snapshot_hash'])],
    ['aura.operator.method', stringOf(operator['method'])],
    ['aura.operator.subject_hash', stringOf(operator['subject_hash'])],
  ];
  for (const [key, value] of optional) if (typeof value === 'string') attributes.push(stringAttribute(key, value));
  if (typeof operator['verified'] === 'boolean') attributes.push({ key: 'aura.operator.verified', value: { boolValue: operator['verified'] } });
  const attempt = event.telemetry['attempt'];
  if (typeof attempt === 'number' && Number.isInteger(attempt)) attributes.push({ key: 'aura.attempt', value: { intValue: String(attempt) } });
  return attributes;
}

function stringAttribute(key: string, value: string): KeyValue {
  return { key, value: { stringValue: value } };
}
