import { describe, expect, it } from 'vitest';
import { otlpJson, spanLineOf, type SpanSource } from '../../src/export/otel.js';
import type { Attribute, AttributeValue, Span } from '../../src/export/spans.js';

/** OTLP/JSON as objects, stringified: the shape the exporters' text must equal. */
function reference(source: SpanSource, spans: readonly Span[]): string {
  const value = (v: AttributeValue): Record<string, unknown> =>
    typeof v === 'string' ? { stringValue: v } : typeof v === 'boolean' ? { boolValue: v } : typeof v === 'bigint' ? { intValue: v.toString() } : { doubleValue: v };
  const attributes = (list: readonly Attribute[]): unknown[] => list.map((a) => ({ key: a.key, value: value(a.value) }));
  return JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: attributes(source.resource) },
        scopeSpans: [
          {
            scope: source.scope,
            spans: spans.map((s) => ({
              traceId: s.traceId,
              spanId: s.spanId,
              ...(s.parentSpanId === null ? {} : { parentSpanId: s.parentSpanId }),
              name: s.name,
              kind: s.kind,
              startTimeUnixNano: s.startTimeUnixNano.toString(),
              endTimeUnixNano: s.endTimeUnixNano.toString(),
              attributes: attributes(s.attributes),
              ...(s.events.length === 0 ? {} : { events: s.events.map((e) => ({ timeUnixNano: e.timeUnixNano.toString(), name: e.name, attributes: attributes(e.attributes) })) }),
              ...(s.droppedEventsCount === 0 ? {} : { droppedEventsCount: s.droppedEventsCount }),
              ...(s.status === null ? {} : { status: s.status }),
            })),
          },
        ],
      },
    ],
  });
}

const AWKWARD = ['', 'plain', 'quote " and \\ backslash', 'line\nbreak\ttab\u0000nul', 'é ü 漢字 😀', 'lone \ud800 surrogate', '\u2028\u2029', '</script>'];

const source: SpanSource = { resource: [{ key: 'service.name', value: 'svc "x"' }, { key: 'aura.session_id', value: 'aura_sess_0123456789ab' }], scope: { name: 'aura-harness', version: '1.2.3' } };

function span(n: number): Span {
  const text = AWKWARD[n % AWKWARD.length] as string;
  const values: AttributeValue[] = [text, n % 2 === 0, BigInt(n) * 1_000_000_007n, n / 3, -0, Number.NaN, Number.POSITIVE_INFINITY, 12];
  return {
    traceId: '0af7651916cd43dd8448eb211c80319c',
    spanId: `b7ad6b71692033${String(n % 100).padStart(2, '0')}`,
    parentSpanId: n % 3 === 0 ? null : '00f067aa0ba902b7',
    name: `execute_tool ${text}`,
    kind: (n % 3) as Span['kind'],
    startTimeUnixNano: 1_796_308_957_256_368_000n + BigInt(n),
    endTimeUnixNano: 1_796_308_957_256_369_000n + BigInt(n),
    attributes: values.slice(0, 1 + (n % values.length)).map((value, i) => ({ key: `${text}.k${i}`, value })),
    events: Array.from({ length: n % 3 }, (_, i) => ({ timeUnixNano: 1_796_308_957_256_368_000n + BigInt(i), name: `tool.call ${text}`, attributes: [{ key: 'aura.event_id', value: text }] })),
    droppedEventsCount: n % 4 === 0 ? n : 0,
    status: n % 5 === 0 ? { code: 2, message: `failed: ${text}` } : null,
  };
}

describe('OTLP/JSON text', () => {
  it('is the text of the request as objects, for awkward strings, every value type and optional field', () => {
    const spans = Array.from({ length: 40 }, (_, n) => span(n));
    expect(otlpJson(source, spans)).toBe(reference(source, spans));
    expect(otlpJson(source, [])).toBe(reference(source, []));
    const line = spanLineOf(source);
    for (const s of spans) expect(line(s)).toBe(`${reference(source, [s])}\n`);
  });
});
