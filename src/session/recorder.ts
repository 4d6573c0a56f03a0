/**
 * The record stage of a session: one event turned into its canonical line (the redaction of its
 * strings and the check that it is JSON, in one walk), hashed onto the chain and appended with one
 * write. What follows a recorded event (publishing it, checkpoints) is the next stage's, handed the
 * event through `after`.
 */

import { InvalidOptionError, NonJsonValueError } from '../errors.js';
import { withoutPrinted } from '../middleware/printed-secrets.js';
import type { SessionRedactor } from '../middleware/redact.js';
import { canonicalJson } from '../spine/canonical.js';
import { EventEncoder } from '../spine/record.js';
import type { TrailWriter } from '../spine/writer.js';
import { isoTimestamp, type Clock, type IdSource } from './ids.js';
import type { EmitOptions, RecordedEvent } from './types.js';

const EMPTY_OBJECT_TEXT = '{}';

/** A recorded event as the stages after the record see it. */
export interface AppendedEvent {
  readonly event: RecordedEvent;
  /** The kind as given (the recorded one is redacted). */
  readonly givenKind: string;
  /** The canonical text of the recorded payload. */
  readonly payloadText: string;
  readonly line: string;
  readonly micros: number;
  readonly stepId: string | null;
}

/** The fixed fields of every event of one session. */
export interface TrailIdentity {
  readonly sessionId: string;
  readonly traceId: string;
  readonly taskId: string | null;
}

/** The head of the chain: what the next event links to. */
export interface ChainHead {
  readonly lastEventId: string | null;
  readonly headHash: string | null;
  readonly lastMicros: number;
  readonly count: number;
}

/** Encodes and appends the events of one session, keeping the chain's head. */
export class Recorder {
  private readonly encoder = new EventEncoder();
  private lastEventId: string | null = null;
  private headHash: string | null = null;
  private lastMicros = 0;
  private count = 0;
  /** The last line this recorder appended (with its newline), or null before the first. */
  lastLine: string | null = null;
  /** The identity trailer's canonical text (it gains the operator once one is bound). */
  agentIdsText: string;
  /** The agent's id as the trail records it (a shared session keeps the one its first process recorded). */
  auraId: string;

  constructor(
    private readonly trail: TrailIdentity,
    private readonly writer: TrailWriter,
    private readonly redactor: SessionRedactor,
    private readonly ids: IdSource,
    private readonly clock: Clock,
    trailer: { readonly agentIdsText: string; readonly auraId: string },
    private readonly after: (appended: AppendedEvent) => void,
  ) {
    this.agentIdsText = trailer.agentIdsText;
    this.auraId = trailer.auraId;
  }

  /** Events recorded so far. */
  get eventCount(): number {
    return this.count;
  }

  get head(): ChainHead {
    return { lastEventId: this.lastEventId, headHash: this.headHash, lastMicros: this.lastMicros, count: this.count };
  }

  /** The time of the next event: never before the last one, even if the wall clock goes back. */
  now(): number {
    return Math.max(this.clock(), this.lastMicros);
  }

  /** Continues a chain that earlier processes wrote. */
  continueFrom(head: ChainHead): void {
    ({ lastEventId: this.lastEventId, headHash: this.headHash, lastMicros: this.lastMicros, count: this.count } = head);
  }

  /**
   * Appends one event: canonical text (redacted), hash, one write; then hands it on.
   * @throws InvalidOptionError, NonJsonValueError (nothing written), TrailWriteError (nothing recorded)
   */
  record(kind: string, payload: Readonly<Record<string, unknown>>, options: EmitOptions): RecordedEvent {
    if (typeof kind !== 'string' || kind === '') throw new InvalidOptionError('kind', kind, 'a non-empty string such as "tool.call"');
    if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) {
      throw new NonJsonValueError(`payload of ${kind} must be a plain object`, { path: 'payload', reason: 'not_plain' });
    }
    const givenStep = options.stepId ?? null;
    if (givenStep !== null && typeof givenStep !== 'string') throw new InvalidOptionError('stepId', givenStep, 'a string or null');
    // Every string the caller gives is recorded through the redactor, ids included.
    const redactor = this.redactor;
    const stepId = givenStep === null ? null : redactor.scrub(givenStep);
    const recordedKind = redactor.scrub(kind);
    // A command's answer that is a secret it printed (`printenv DB_PASSWORD`) goes without its text.
    const recordable = kind === 'tool.result' ? withoutPrinted(payload, (printed) => redactor.addPrinted(printed)) : payload;
    const payloadText = canonicalJson(recordable, 'payload', { redact: redactor });
    const telemetryText = options.telemetry === undefined ? EMPTY_OBJECT_TEXT : canonicalJson(options.telemetry, 'telemetry', { redact: redactor });
    const micros = this.now();
    const eventId = this.ids.eventId();
    const timestamp = isoTimestamp(micros);
    const { taskId } = this.trail;
    const encoded = this.encoder.encode({
      event_id: eventId,
      parent_id: options.parentId === undefined ? this.lastEventId : redactor.scrub(options.parentId),
      trace_id: this.trail.traceId,
      span_id: null,
      step_id: stepId,
      task_id: taskId === null ? null : redactor.scrub(taskId),
      session_id: this.trail.sessionId,
      aura_id: this.auraId,
      agent_ids: this.agentIdsText,
      kind: recordedKind,
      timestamp,
      payload: payloadText,
      telemetry: telemetryText,
      prev_hash: this.headHash,
    });
    this.writer.append(encoded.line);
    const prevHash = this.headHash;
    this.lastMicros = micros;
    this.lastEventId = eventId;
    this.headHash = encoded.content_hash;
    this.lastLine = encoded.line;
    this.count++;
    const event: RecordedEvent = { event_id: eventId, kind: recordedKind, timestamp, prev_hash: prevHash, content_hash: encoded.content_hash, sequence: this.count };
    this.after({ event, givenKind: kind, payloadText, line: encoded.line, micros, stepId });
    return event;
  }
}
