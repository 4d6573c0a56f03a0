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

/**
 * Hashes and lays out one event. Strings are quoted through {@link canonicalJson}, so a lone
 * surrogate in a kind or step id is refused like one in a payload.
 */
export function encodeEvent(fields: EventFields): EncodedEvent {
  const q = (value: string | null, name: string): string => (value === null ? 'null' : canonicalJson(value, name));
  const eventId = q(fields.event_id, 'event_id');
  const parentId = q(fields.parent_id, 'parent_id');
  const traceId = q(fields.trace_id, 'trace_id');
  const spanId = q(fields.span_id, 'span_id');
  const stepId = q(fields.step_id, 'step_id');
  const taskId = q(fields.task_id, 'task_id');
  const sessionId = q(fields.session_id, 'session_id');
  const auraId = q(fields.aura_id, 'aura_id');
  const kind = q(fields.kind, 'kind');
  const timestamp = q(fields.timestamp, 'timestamp');
  const body =
    `{"agent_ids": ${fields.agent_ids}, "aura_id": ${auraId}, "event_id": ${eventId}, "kind": ${kind}, ` +
    `"parent_id": ${parentId}, "payload": ${fields.payload}, "session_id": ${sessionId}, "span_id": ${spanId}, ` +
    `"step_id": ${stepId}, "task_id": ${taskId}, "telemetry": ${fields.telemetry}, "timestamp": ${timestamp}, ` +
    `"trace_id": ${traceId}}`;
  const hash = contentHash(fields.prev_hash, body);
  const line =
    `{"event_id": ${eventId}, "parent_id": ${parentId}, "trace_id": ${traceId}, "span_id": ${spanId}, ` +
    `"step_id": ${stepId}, "task_id": ${taskId}, "session_id": ${sessionId}, "aura_id": ${auraId}, ` +
    `"agent_ids": ${fields.agent_ids}, "kind": ${kind}, "timestamp": ${timestamp}, "payload": ${fields.payload}, ` +
    `"telemetry": ${fields.telemetry}, "prev_hash": ${q(fields.prev_hash, 'prev_hash')}, "content_hash": "${hash}"}\n`;
  return { line, content_hash: hash };
}
