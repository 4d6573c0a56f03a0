/**
 * The event record (DESIGN §2.1): one JSON object per trail line with exactly 15 keys, 13 of
 * them hashed. Lines are written with the keys in Aura's order and nested values in canonical
 * form, so the hashed text is assembled from the same pieces as the line, without a second walk.
 */

import { canonicalJson } from './canonical.js';
import { contentHash } from './hash.js';
import type { JsonValue } from './json-reader.js';

/** A JSON object as the reader gives it. */
export type JsonObject = { [key: string]: JsonValue };

/** One event of a trail, as recorded. */
export interface AuraEvent {
  readonly event_id: string;
  readonly parent_id: string | null;
  readonly trace_id: string;
  readonly span_id: string | null;
  readonly step_id: string | null;
  readonly task_id: string | null;
  readonly session_id: string;
  readonly aura_id: string;
  readonly agent_ids: JsonObject;
  readonly kind: string;
  readonly timestamp: string;
  readonly payload: JsonObject;
  readonly telemetry: JsonObject;
  readonly prev_hash: string | null;
  readonly content_hash: string;
}

/** The keys of a record, in the order Aura writes them. */
/** What `emit` recorded. */
export interface RecordedEvent {
  readonly event_id: string;
  readonly kind: string;
  readonly timestamp: string;
  readonly prev_hash: string | null;
  readonly content_hash: string;
  /** 1-based position in the trail. */
  readonly sequence: number;
}

export const RECORD_KEYS = [
  'event_id',
  'parent_id',
  'trace_id',
  'span_id',
  'step_id',
  'task_id',
  'session_id',
  'aura_id',
  'agent_ids',
  'kind',
  'timestamp',
  'payload',
  'telemetry',
  'prev_hash',
  'content_hash',
] as const satisfies readonly (keyof AuraEvent)[];

/** The keys of a record in code-point order, as the canonical reader returns them. */
export const SORTED_RECORD_KEYS: readonly string[] = [...RECORD_KEYS].sort();

/** The two keys that are not hashed. */
export const UNHASHED_KEYS: ReadonlySet<string> = new Set(['prev_hash', 'content_hash']);

/** What a writer supplies for one event: `agent_ids`, `payload` and `telemetry` as canonical text. */
export type EventFields = Omit<AuraEvent, 'agent_ids' | 'payload' | 'telemetry' | 'content_hash'> & {
  readonly agent_ids: string;
  readonly payload: string;
  readonly telemetry: string;
};

/** An encoded event: the line to append (with its newline) and its hash. */
export interface EncodedEvent {
  readonly line: string;
  readonly content_hash: string;
}

/** The 13 hashed fields, each as canonical text. */
export type CanonicalFields = Readonly<Record<Exclude<(typeof RECORD_KEYS)[number], 'prev_hash' | 'content_hash'>, string>>;

/** The canonical text of the hashed body: its keys in code-point order, as Python sorts them. */
export function hashedBody(f: CanonicalFields): string {
  return (
    `{"agent_ids": ${f.agent_ids}, "aura_id": ${f.aura_id}, "event_id": ${f.event_id}, "kind": ${f.kind}, ` +
    `"parent_id": ${f.parent_id}, "payload": ${f.payload}, "session_id": ${f.session_id}, "span_id": ${f.span_id}, ` +
    `"step_id": ${f.step_id}, "task_id": ${f.task_id}, "telemetry": ${f.telemetry}, "timestamp": ${f.timestamp}, ` +
    `"trace_id": ${f.trace_id}}`
  );
}

// Printable ASCII without `"` or `\`: its canonical text is the value in quotes (ids, hashes, times).
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** Canonical text of a string field, or `null`. */
export function quoteField(value: string | null, name: string): string {
  if (value === null) return 'null';
  return typeof value === 'string' && PLAIN.test(value) ? `"${value}"` : canonicalJson(value, name);
}

/**
 * Hashes and lays out one event. Strings are quoted through {@link canonicalJson}, so a lone
 * surrogate in a kind or step id is refused like one in a payload.
 */
export function encodeEvent(fields: EventFields): EncodedEvent {
  return new EventEncoder().encode(fields);
}

/** Quotes a field, remembering the last value: most fields repeat from one event to the next. */
class QuotedField {
  private value: string | null | undefined = undefined;
  private text = '';

  constructor(private readonly name: string) {}

  of(value: string | null): string {
    if (value !== this.value) {
      this.text = quoteField(value, this.name);
      this.value = value;
    }
    return this.text;
  }

  /** The text of `value` when it is the value last quoted, else null. */
  cached(value: string | null): string | null {
    return value === this.value ? this.text : null;
  }
}

/**
 * Encodes the events of one trail: {@link encodeEvent}'s text, with the quoted text of the fields
 * that stay the same within a session (ids, the identity trailer, the kind of a run of events)
 * and the segments between them made once rather than per event: with fewer strings built, an
 * emit in a fresh process spends less of its time collecting garbage.
 */
export class EventEncoder {
  private readonly q = {
    event_id: new QuotedField('event_id'),
    parent_id: new QuotedField('parent_id'),
    trace_id: new QuotedField('trace_id'),
    span_id: new QuotedField('span_id'),
    step_id: new QuotedField('step_id'),
    task_id: new QuotedField('task_id'),
    session_id: new QuotedField('session_id'),
    aura_id: new QuotedField('aura_id'),
    kind: new QuotedField('kind'),
    timestamp: new QuotedField('timestamp'),
    prev_hash: new QuotedField('prev_hash'),
  };
  /** The constant segments, and the quoted texts they were made from. */
  private made: readonly string[] = [];
  private segments = { body0: '', body1: '', body2: '', body3: '', line1: '', line2: '' };

  encode(fields: EventFields): EncodedEvent {
    const q = this.q;
    // An event's parent is most often the event before it, whose id is quoted already.
    const parentId = q.event_id.cached(fields.parent_id) ?? q.parent_id.of(fields.parent_id);
    const eventId = q.event_id.of(fields.event_id);
    const stepId = q.step_id.of(fields.step_id);
    const kind = q.kind.of(fields.kind);
    const timestamp = q.timestamp.of(fields.timestamp);
    const g = this.segmentsOf(q.trace_id.of(fields.trace_id), q.span_id.of(fields.span_id), q.task_id.of(fields.task_id), q.session_id.of(fields.session_id), q.aura_id.of(fields.aura_id), fields.agent_ids);
    // hashedBody's text, and encodeEvent's line, by constant segments.
    const body = `${g.body0}${eventId}, "kind": ${kind}, "parent_id": ${parentId}, "payload": ${fields.payload}${g.body1}${stepId}${g.body2}${fields.telemetry}, "timestamp": ${timestamp}${g.body3}`;
    const hash = contentHash(fields.prev_hash, body);
    const line =
      `{"event_id": ${eventId}, "parent_id": ${parentId}${g.line1}${stepId}${g.line2}${kind}, "timestamp": ${timestamp}, "payload": ${fields.payload}, ` +
      `"telemetry": ${fields.telemetry}, "prev_hash": ${q.prev_hash.of(fields.prev_hash)}, "content_hash": "${hash}"}\n`;
    return { line, content_hash: hash };
  }

  private segmentsOf(traceId: string, spanId: string, taskId: string, sessionId: string, auraId: string, agentIds: string): EncoderSegments {
    const made = this.made;
    if (made[0] !== traceId || made[1] !== spanId || made[2] !== taskId || made[3] !== sessionId || made[4] !== auraId || made[5] !== agentIds) {
      this.made = [traceId, spanId, taskId, sessionId, auraId, agentIds];
      this.segments = {
        body0: `{"agent_ids": ${agentIds}, "aura_id": ${auraId}, "event_id": `,
        body1: `, "session_id": ${sessionId}, "span_id": ${spanId}, "step_id": `,
        body2: `, "task_id": ${taskId}, "telemetry": `,
        body3: `, "trace_id": ${traceId}}`,
        line1: `, "trace_id": ${traceId}, "span_id": ${spanId}, "step_id": `,
        line2: `, "task_id": ${taskId}, "session_id": ${sessionId}, "aura_id": ${auraId}, "agent_ids": ${agentIds}, "kind": `,
      };
    }
    return this.segments;
  }
}

interface EncoderSegments {
  readonly body0: string;
  readonly body1: string;
  readonly body2: string;
  readonly body3: string;
  readonly line1: string;
  readonly line2: string;
}
