/**
 * Trace context: the span a session or a call runs under, so aura's spans join the app's own
 * trace as its children. It comes as a W3C `traceparent` (an option, a client's
 * `_meta.traceparent`), or from the active span of `@opentelemetry/api` when the app has it.
 *
 * `@opentelemetry/api` stays optional: it is looked up once, synchronously (a session opens
 * synchronously), from where aura is installed. Its CommonJS build serves: the API keeps its
 * context manager and tracer provider on a process-wide global, so an app that loaded the ESM
 * build sees the same active span.
 */

import { createRequire } from 'node:module';
import { InvalidOptionError } from '../errors.js';

/** The parent a span is recorded under (`trace_parent` in `session.open` and `tool.intent`). */
export interface TraceParent {
  readonly trace_id: string;
  readonly span_id: string;
}

// version-traceid-parentid-flags (W3C Trace Context §3.2); version ff is invalid, ids are never all zero.
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}(?:-.*)?$/;
const ZERO = /^0+$/;

/**
 * Reads a `traceparent` header value.
 * @throws InvalidOptionError naming `source` when it is not one
 */
export function parseTraceparent(value: unknown, source: string): TraceParent {
  const match = typeof value === 'string' ? TRACEPARENT.exec(value.trim()) : null;
  const [, version = 'ff', traceId = '', spanId = ''] = match ?? [];
  // A future version may append fields; version 00 may not.
  const valid = match !== null && version !== 'ff' && !(version === '00' && (value as string).trim().length !== 55) && !ZERO.test(traceId) && !ZERO.test(spanId);
  if (!valid) throw new InvalidOptionError(source, value, "a W3C traceparent such as '00-<32 hex trace id>-<16 hex span id>-01'");
  return { trace_id: traceId, span_id: spanId };
}

/** A `traceparent` from outside (a client's request), or null when it is absent or not one. */
export function traceparentOrNull(value: unknown): TraceParent | null {
  if (value === undefined || value === null) return null;
  try {
    return parseTraceparent(value, 'traceparent');
  } catch {
    return null;
  }
}

interface OtelApi {
  readonly trace: { getActiveSpan(): { spanContext(): { traceId: string; spanId: string } } | undefined; isSpanContextValid(context: unknown): boolean };
}

let api: OtelApi | null | undefined;

/** The active span of `@opentelemetry/api`, or null (no API installed, no span active). */
export function activeTraceParent(): TraceParent | null {
  if (api === undefined) {
    try {
      api = createRequire(import.meta.url)('@opentelemetry/api') as OtelApi;
    } catch {
      api = null;
    }
  }
  const context = api?.trace.getActiveSpan()?.spanContext();
  if (context === undefined || api?.trace.isSpanContextValid(context) !== true) return null;
  return { trace_id: context.traceId, span_id: context.spanId };
}

/** A session's parent: the option when given (null for none), else the active span. */
export function sessionTraceParent(option: string | null | undefined): TraceParent | null {
  if (option === null) return null;
  return option === undefined ? activeTraceParent() : parseTraceparent(option, 'traceParent');
}
