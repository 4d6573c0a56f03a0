/**
 * What a later process of a shared session needs from the trail earlier processes wrote, when
 * nothing saved beside it can be trusted (./resume-state.ts): the chain head (the last event's
 * hash, id and time, the count) and every event, so the session's state (approvals, an observer's
 * stop, the observers' own windows) is rebuilt by handing the events out again, in order, as they
 * were first.
 *
 * The file is untrusted input: a line that is not a well-formed record stops the resume with a
 * ReadError naming it (the session's own writer cut any torn tail before).
 */

import { ReadError, SessionClosedError } from '../errors.js';
import { parseLineText } from '../spine/fast-record.js';
import { objectOf, stringOf } from '../spine/json-shape.js';
import type { JsonObject, RecordedEvent } from '../spine/record.js';
import { trailLines } from '../spine/trail-lines.js';
import { unixNanos } from '../export/spans.js';
import type { TraceParent } from './trace-context.js';

/** One event of the history, with what observers are handed. */
export interface PastEvent extends RecordedEvent {
  readonly step_id: string | null;
  readonly micros: number;
  readonly payload: JsonObject;
  readonly agent_ids: JsonObject;
  readonly trace_id: string;
  readonly aura_id: string;
}

/** A shared session's trail, as a later process takes it up. */
export interface SessionHistory {
  readonly events: readonly PastEvent[];
  readonly last: PastEvent;
  readonly traceParent: TraceParent | null;
}

/**
 * Reads a shared session's trail.
 * @throws ReadError (a line that is not a record of this session), SessionClosedError (it has ended)
 */
export function readHistory(trail: string, sessionId: string): SessionHistory {
  const events: PastEvent[] = [];
  let traceParent: TraceParent | null = null;
  for (const line of trailLines(trail)) {
    const event = pastEventOf(line.text, line.number, events.length + 1, trail, sessionId);
    if (event.kind === 'session.open') traceParent = traceParentOf(event.payload['trace_parent']);
    events.push(event);
  }
  const last = events.at(-1);
  if (last === undefined) throw new ReadError(trail, new Error('the trail has no event'));
  return { events, last, traceParent };
}

/**
 * One line of a shared session's trail as an event of its history.
 * @param sequence its place in the trail (1-based)
 * @throws ReadError (not a record of this session), SessionClosedError (it is the session's close)
 */
export function pastEventOf(text: string, lineNumber: number, sequence: number, trail: string, sessionId: string): PastEvent {
  let record: JsonObject;
  try {
    record = objectOf(parseLineText(text));
  } catch (error) {
    throw new ReadError(trail, new Error(`line ${lineNumber} is not JSON`, { cause: error }));
  }
  const eventId = stringOf(record['event_id']);
  const kind = stringOf(record['kind']);
  const timestamp = stringOf(record['timestamp']);
  const hash = stringOf(record['content_hash']);
  if (eventId === null || kind === null || timestamp === null || hash === null || record['session_id'] !== sessionId) {
    throw new ReadError(trail, new Error(`line ${lineNumber} is not a record of session ${sessionId}`));
  }
  if (kind === 'session.close') throw new SessionClosedError(sessionId, 'append to it: it has ended');
  return {
    event_id: eventId,
    kind,
    timestamp,
    prev_hash: stringOf(record['prev_hash']),
    content_hash: hash,
    sequence,
    step_id: stringOf(record['step_id']),
    micros: Number(unixNanos(timestamp) / 1000n),
    payload: objectOf(record['payload']),
    agent_ids: objectOf(record['agent_ids']),
    trace_id: stringOf(record['trace_id']) ?? '',
    aura_id: stringOf(record['aura_id']) ?? '',
  };
}

/** A trace parent (`{trace_id, span_id}`, as `session.open` records the span it was opened under), or null when the value is not one. */
export function traceParentOf(value: unknown): TraceParent | null {
  const parent = objectOf(value);
  const traceId = stringOf(parent['trace_id']);
  const spanId = stringOf(parent['span_id']);
  return traceId !== null && spanId !== null ? { trace_id: traceId, span_id: spanId } : null;
}
