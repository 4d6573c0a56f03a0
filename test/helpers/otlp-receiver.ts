/**
 * A real OTLP/HTTP traces receiver on loopback: accepts `POST /v1/traces` in JSON or protobuf,
 * decodes what it gets (protobuf with protobufjs and the OTLP message definitions below, a decoder
 * independent of aura's encoder), and answers as the test says: 200, a status, or not at all.
 * Like any aura server it answers nothing without its token.
 */

import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import protobuf from 'protobufjs';
import { expect } from 'vitest';

/** A span as received, in one shape whatever the encoding. */
export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
  readonly name: string;
  readonly kind: number;
  readonly start: bigint;
  readonly end: bigint;
  readonly attributes: Record<string, unknown>;
  readonly events: readonly { readonly name: string; readonly time: bigint; readonly attributes: Record<string, unknown> }[];
  readonly status: { readonly code: number; readonly message: string } | null;
}

/** One request the receiver got. */
export interface ReceivedRequest {
  readonly contentType: string;
  /** The `content-encoding` header (`gzip`), or ''. */
  readonly contentEncoding: string;
  readonly body: Buffer;
  readonly spans: readonly ReceivedSpan[];
  readonly resource: Record<string, unknown>;
  /** When it arrived (performance.now()). */
  readonly at: number;
}

/** How to answer the n-th request (0-based): a status and headers, or `hang` (never answer). */
export type Answer = { readonly status: number; readonly headers?: Record<string, string> } | 'hang';

/** The receiver's token: requests must carry `authorization: Bearer <token>`. */
export const RECEIVER_TOKEN = 'otlp-receiver-token-5be1d7c2';

// From opentelemetry-proto (collector/trace/v1, trace/v1, common/v1, resource/v1): the fields aura sends.
const OTLP_PROTO = `
syntax = "proto3";
package otlp;
message AnyValue { oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4; } }
message KeyValue { string key = 1; AnyValue value = 2; }
message Resource { repeated KeyValue attributes = 1; uint32 dropped_attributes_count = 2; }
message InstrumentationScope { string name = 1; string version = 2; }
message Status { string message = 2; int32 code = 3; }
message Event { fixed64 time_unix_nano = 1; string name = 2; repeated KeyValue attributes = 3; }
message Span {
  bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; bytes parent_span_id = 4; string name = 5; int32 kind = 6;
  fixed64 start_time_unix_nano = 7; fixed64 end_time_unix_nano = 8; repeated KeyValue attributes = 9;
  repeated Event events = 11; uint32 dropped_events_count = 12; Status status = 15; fixed32 flags = 16;
}
message ScopeSpans { InstrumentationScope scope = 1; repeated Span spans = 2; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; }
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
`;
const REQUEST_TYPE = protobuf.parse(OTLP_PROTO, { keepCase: true }).root.lookupType('otlp.ExportTraceServiceRequest');

/** A running receiver. */
export class OtlpReceiver {
  readonly requests: ReceivedRequest[] = [];
  /** Requests refused or answered with an error, too. */
  attempts = 0;
  /** When each authenticated request arrived (performance.now()). */
  readonly attemptTimes: number[] = [];
  private readonly hanging: http.ServerResponse[] = [];

  private constructor(
    private readonly server: http.Server,
    private readonly answer: (index: number) => Answer,
  ) {}

  /** Starts a receiver on 127.0.0.1 (a free port). */
  static async start(answer: (index: number) => Answer = () => ({ status: 200 })): Promise<OtlpReceiver> {
    let receiver: OtlpReceiver | null = null;
    const server = http.createServer((request, response) => receiver?.handle(request, response));
    receiver = new OtlpReceiver(server, answer);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  /** The base endpoint (without `/v1/traces`). */
  get endpoint(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Every span received, in order. */
  get spans(): ReceivedSpan[] {
    return this.requests.flatMap((request) => request.spans);
  }

  /** Every byte received. */
  get bytes(): Buffer {
    return Buffer.concat(this.requests.map((request) => request.body));
  }

  /** Waits until `count` spans arrived (or fails after `ms`). */
  async waitForSpans(count: number, ms = 5000): Promise<void> {
    const until = performance.now() + ms;
    while (this.spans.length < count) {
      if (performance.now() > until) throw new Error(`received ${this.spans.length} spans, expected ${count}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  async stop(): Promise<void> {
    for (const response of this.hanging) response.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(request: http.IncomingMessage, response: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.headers['authorization'] !== `Bearer ${RECEIVER_TOKEN}`) {
        response.writeHead(401).end();
        return;
      }
      if (request.method !== 'POST' || request.url !== '/v1/traces') {
        response.writeHead(404).end();
        return;
      }
      this.attemptTimes.push(performance.now());
      const answer = this.answer(this.attempts++);
      if (answer === 'hang') {
        this.hanging.push(response);
        return;
      }
      const contentEncoding = request.headers['content-encoding'] ?? '';
      const body = contentEncoding === 'gzip' ? gunzipSync(Buffer.concat(chunks)) : Buffer.concat(chunks);
      const contentType = request.headers['content-type'] ?? '';
      if (answer.status === 200) this.requests.push({ contentType, contentEncoding, body, at: performance.now(), ...decode(contentType, body) });
      response.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers }).end('{}');
    });
  }
}

function decode(contentType: string, body: Buffer): { spans: ReceivedSpan[]; resource: Record<string, unknown> } {
  if (contentType === 'application/json') return fromJson(JSON.parse(body.toString('utf8')) as JsonRequest);
  if (contentType === 'application/x-protobuf') return fromProto(REQUEST_TYPE.toObject(REQUEST_TYPE.decode(body), { longs: String, defaults: false }) as ProtoRequest);
  throw new Error(`unexpected content type ${contentType}`);
}

type JsonKeyValue = { key: string; value: Record<string, unknown> };
type JsonRequest = {
  resourceSpans: {
    resource: { attributes: JsonKeyValue[] };
    scopeSpans: {
      spans: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind: number;
        startTimeUnixNano: string;
        endTimeUnixNano: string;
        attributes: JsonKeyValue[];
        events?: { name: string; timeUnixNano: string; attributes: JsonKeyValue[] }[];
        status?: { code: number; message: string };
      }[];
    }[];
  }[];
};

/** The spans of an OTLP/JSON request body (as in `{id}.otel.jsonl` lines). */
export function fromJson(request: JsonRequest): { spans: ReceivedSpan[]; resource: Record<string, unknown> } {
  const first = request.resourceSpans[0];
  return {
    resource: attributesOf(first?.resource.attributes ?? [], jsonValue),
    spans: request.resourceSpans.flatMap((rs) =>
      rs.scopeSpans.flatMap((ss) =>
        ss.spans.map((s) => ({
          traceId: s.traceId,
          spanId: s.spanId,
          parentSpanId: s.parentSpanId ?? '',
          name: s.name,
          kind: s.kind,
          start: BigInt(s.startTimeUnixNano),
          end: BigInt(s.endTimeUnixNano),
          attributes: attributesOf(s.attributes, jsonValue),
          events: (s.events ?? []).map((e) => ({ name: e.name, time: BigInt(e.timeUnixNano), attributes: attributesOf(e.attributes, jsonValue) })),
          status: s.status ?? null,
        })),
      ),
    ),
  };
}

type ProtoKeyValue = { key: string; value: Record<string, unknown> };
type ProtoRequest = {
  resource_spans: {
    resource: { attributes: ProtoKeyValue[] };
    scope_spans: {
      spans: {
        trace_id: Uint8Array;
        span_id: Uint8Array;
        parent_span_id?: Uint8Array;
        name: string;
        kind: number;
        start_time_unix_nano: string;
        end_time_unix_nano: string;
        attributes?: ProtoKeyValue[];
        events?: { name: string; time_unix_nano: string; attributes?: ProtoKeyValue[] }[];
        status?: { code?: number; message?: string };
      }[];
    }[];
  }[];
};

function fromProto(request: ProtoRequest): { spans: ReceivedSpan[]; resource: Record<string, unknown> } {
  const hex = (bytes: Uint8Array | undefined): string => Buffer.from(bytes ?? []).toString('hex');
  return {
    resource: attributesOf(request.resource_spans[0]?.resource.attributes ?? [], protoValue),
    spans: request.resource_spans.flatMap((rs) =>
      rs.scope_spans.flatMap((ss) =>
        ss.spans.map((s) => ({
          traceId: hex(s.trace_id),
          spanId: hex(s.span_id),
          parentSpanId: hex(s.parent_span_id),
          name: s.name,
          kind: s.kind,
          start: BigInt(s.start_time_unix_nano),
          end: BigInt(s.end_time_unix_nano),
          attributes: attributesOf(s.attributes ?? [], protoValue),
          events: (s.events ?? []).map((e) => ({ name: e.name, time: BigInt(e.time_unix_nano), attributes: attributesOf(e.attributes ?? [], protoValue) })),
          status: s.status === undefined ? null : { code: s.status.code ?? 0, message: s.status.message ?? '' },
        })),
      ),
    ),
  };
}

function attributesOf(list: readonly { key: string; value: Record<string, unknown> }[], value: (v: Record<string, unknown>) => unknown): Record<string, unknown> {
  return Object.fromEntries(list.map((kv) => [kv.key, value(kv.value)]));
}

/** Ints become bigints in both encodings, so the two compare equal. */
function jsonValue(v: Record<string, unknown>): unknown {
  if ('intValue' in v) return BigInt(v['intValue'] as string);
  return Object.values(v)[0];
}

function protoValue(v: Record<string, unknown>): unknown {
  if ('int_value' in v) return BigInt(v['int_value'] as string);
  return Object.values(v)[0];
}

/** Every span lies within its parent, and no span ends before it starts. */
export function expectNested(spans: readonly ReceivedSpan[]): void {
  const byId = new Map(spans.map((span) => [span.spanId, span]));
  for (const span of spans) {
    expect(span.end >= span.start, span.name).toBe(true);
    if (span.parentSpanId === '') continue;
    const parent = byId.get(span.parentSpanId);
    expect(parent, `parent of ${span.name}`).toBeDefined();
    expect(span.start >= (parent as ReceivedSpan).start && span.end <= (parent as ReceivedSpan).end, `${span.name} within ${parent?.name}`).toBe(true);
  }
}


/** The spans of a `{id}.otel.jsonl`, each line read as an OTLP/JSON request. */
export function spansOnDisk(file: string): ReceivedSpan[] {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .flatMap((line) => fromJson(JSON.parse(line) as JsonRequest).spans);
}
