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

/** Canonical text of a string field, or `null`. */
export function quoteField(value: string | null, name: string): string {
  return value === null ? 'null' : canonicalJson(value, name);
}

/**
 * Hashes and lays out one event. Strings are quoted through {@link canonicalJson}, so a lone
 * surrogate in a kind or step id is refused like one in a payload.
 */
export function encodeEvent(fields: EventFields): EncodedEvent {
  const f: CanonicalFields = {
    event_id: quoteField(fields.event_id, 'event_id'),
    parent_id: quoteField(fields.parent_id, 'parent_id'),
    trace_id: quoteField(fields.trace_id, 'trace_id'),
    span_id: quoteField(fields.span_id, 'span_id'),
    step_id: quoteField(fields.step_id, 'step_id'),
    task_id: quoteField(fields.task_id, 'task_id'),
    session_id: quoteField(fields.session_id, 'session_id'),
    aura_id: quoteField(fields.aura_id, 'aura_id'),
    agent_ids: fields.agent_ids,
    kind: quoteField(fields.kind, 'kind'),
    timestamp: quoteField(fields.timestamp, 'timestamp'),
    payload: fields.payload,
    telemetry: fields.telemetry,
  };
  const hash = contentHash(fields.prev_hash, hashedBody(f));
  const line =
    `{"event_id": ${f.event_id}, "parent_id": ${f.parent_id}, "trace_id": ${f.trace_id}, "span_id": ${f.span_id}, ` +
    `"step_id": ${f.step_id}, "task_id": ${f.task_id}, "session_id": ${f.session_id}, "aura_id": ${f.aura_id}, ` +
    `"agent_ids": ${f.agent_ids}, "kind": ${f.kind}, "timestamp": ${f.timestamp}, "payload": ${f.payload}, ` +
    `"telemetry": ${f.telemetry}, "prev_hash": ${quoteField(fields.prev_hash, 'prev_hash')}, "content_hash": "${hash}"}\n`;
  return { line, content_hash: hash };
}
