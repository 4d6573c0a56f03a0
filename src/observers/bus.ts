/**
 * The observer bus (DESIGN §1, reference §13.1): observers see each recorded event after it is
 * appended, in trail order, one after the other, and may record follow-up events through the
 * session's own path (policy, redaction, hash), as a host would.
 *
 * - Isolation: an observer that throws is recorded as `observer.error` `{observer_id, preset,
 *   error, event_id, kind}`; the session and the other observers go on (Aura swallowed these
 *   silently: §21.22).
 * - Order: events an observer records while handling one are queued and handed out after every
 *   observer has seen the current one, so each observer sees the trail in its order.
 * - Recursion: an observer is never handed what it recorded itself, and an event recorded in
 *   answer to an answer more than {@link MAX_DEPTH} levels deep is recorded but not handed out,
 *   so two observers answering each other cannot loop for ever.
 * - Cost: a session with no observer has no bus (one null check per event, pino's
 *   `hasSubscribers`); with observers, an event no observer listens to costs one set lookup, and
 *   its payload is parsed once for all observers that do.
 */

import { InvalidOptionError } from '../errors.js';
import { parseCanonicalText } from '../spine/fast-record.js';
import type { JsonValue } from '../spine/json-reader.js';
import type { JsonObject, RecordedEvent } from '../spine/record.js';

/** An event as observers are given it: the recorded payload (redacted), its place and hash. */
export interface ObservedEvent extends RecordedEvent {
  readonly step_id: string | null;
  /** The session clock's reading for this event, in epoch microseconds. */
  readonly micros: number;
  /** The payload as recorded (secrets redacted), read back losslessly. */
  readonly payload: JsonObject;
}

/** What a hard alert asks of the session. */
export interface StopRequest {
  readonly observer_id: string;
  readonly pattern: string;
  /** The `observer.alert` event that stops the session. */
  readonly alert_event_id: string;
}

/** What an observer may do in answer to an event. */
export interface ObserverContext {
  /** Records an event through the session's path; this observer is not handed it back. */
  emit(kind: string, payload: Readonly<Record<string, unknown>>): RecordedEvent;
  /**
   * Stops the session: the next guarded tool call is refused with `LoopBrokenError` until the
   * returned request id is approved. Stopping a stopped session returns the pending request.
   */
  stop(request: StopRequest): string;
  /** The session clock, in epoch microseconds. */
  now(): number;
}

/** An observer: anything with an id that wants to see events. */
export interface Observer {
  readonly id: string;
  /** The preset it comes from, or `custom`. */
  readonly preset?: string;
  /** The kinds it is handed; every kind when absent. */
  readonly kinds?: readonly string[];
  onEvent(event: ObservedEvent, context: ObserverContext): void;
  /** Called before `session.close` is recorded, so its last words are inside the session. */
  onClose?(context: ObserverContext): void;
  /**
   * What it knows, as JSON, for a later process of a shared session to take up without handing
   * it every event again (its settings inside, so a changed profile is not taken up).
   */
  saveState?(): JsonValue;
  /**
   * Takes up what {@link saveState} gave, in an observer fresh from the same preset.
   * @returns false (and the observer is to be dropped) when the state is not one it saved with these settings
   */
  restoreState?(state: unknown): boolean;
}

/** What the session gives the bus. */
export interface ObserverSink {
  emit(kind: string, payload: Readonly<Record<string, unknown>>): RecordedEvent;
  stop(request: StopRequest): string;
  now(): number;
}

/** Deepest answer to an answer that is still handed out (host events are depth 0). */
export const MAX_DEPTH = 4;

interface Queued {
  readonly event: RecordedEvent;
  readonly payloadText: string;
  readonly micros: number;
  readonly stepId: string | null;
  /** Index of the observer that recorded it, or -1 for the host and the session. */
  readonly emitter: number;
  readonly depth: number;
}

/** The observers of one session. */
export class ObserverBus {
  private readonly wants: readonly (ReadonlySet<string> | null)[];
  /** Kinds some observer wants, or null when one wants every kind. */
  private readonly listened: ReadonlySet<string> | null;
  private readonly contexts: readonly ObserverContext[];
  private readonly queue: Queued[] = [];
  private draining = false;
  private emitter = -1;
  private depth = 0;

  constructor(
    private readonly observers: readonly Observer[],
    private readonly sink: ObserverSink,
  ) {
    const ids = new Set<string>();
    for (const observer of observers) {
      // Host-made observers come from code we do not control: refuse one we could not call or name.
      if (observer === null || typeof observer !== 'object' || typeof observer.onEvent !== 'function') throw new InvalidOptionError('observers', observer, 'objects with an id and an onEvent(event, context) method');
      if (typeof observer.id !== 'string' || observer.id === '') throw new InvalidOptionError('observer id', observer.id, 'a non-empty string');
      if (ids.has(observer.id)) throw new InvalidOptionError('observer id', observer.id, 'an id no other observer of the session has');
      ids.add(observer.id);
    }
    this.wants = observers.map((o) => (o.kinds === undefined ? null : new Set(o.kinds)));
    this.listened = this.wants.includes(null) ? null : new Set(this.wants.flatMap((set) => [...(set ?? [])]));
    this.contexts = observers.map((_, index) => ({
      emit: (kind, payload) => this.as(index, () => this.sink.emit(kind, payload)),
      stop: (request) => this.sink.stop(request),
      now: () => this.sink.now(),
    }));
  }

  /** The observers attached, as `membrane.ingress` records them. */
  get attached(): { id: string; preset: string }[] {
    return this.observers.map((o) => ({ id: o.id, preset: o.preset ?? 'custom' }));
  }

  /** Hands a just-appended event to the observers that listen to its kind. */
  publish(event: RecordedEvent, payloadText: string, micros: number, stepId: string | null): void {
    if (this.listened !== null && !this.listened.has(event.kind)) return;
    this.queue.push({ event, payloadText, micros, stepId, emitter: this.emitter, depth: this.emitter < 0 ? this.depth : this.depth + 1 });
    if (this.draining) return;
    this.draining = true;
    try {
      for (let next = this.queue.shift(); next !== undefined; next = this.queue.shift()) this.dispatch(next);
    } finally {
      // A failed write (the only thing that escapes) leaves nothing half-handed-out behind.
      this.queue.length = 0;
      this.draining = false;
    }
  }

  /**
   * Rebuilds the observers' state in a later process of a shared session: hands each event of the
   * trail out again, in order, recording nothing. What an observer records while handling an event
   * is the next event of that kind in the trail (it was recorded then), and it is not handed back
   * to that observer, as the first time. Its stops go to `stop`; what it throws is dropped (it was
   * recorded the first time). `before` sees each event just before the observers do.
   */
  replay<E extends ObservedEvent>(history: readonly E[], stop: (request: StopRequest) => string, before: (event: E) => void): void {
    const emitter = new Map<number, number>();
    let at = 0;
    const contexts: ObserverContext[] = this.observers.map((_, index) => ({
      emit: (kind) => {
        for (let later = at + 1; later < history.length; later++) {
          if (history[later]?.kind === kind && !emitter.has(later)) {
            emitter.set(later, index);
            return history[later] as ObservedEvent;
          }
        }
        return history[at] as ObservedEvent;
      },
      stop,
      now: () => history[at]?.micros ?? 0,
    }));
    for (; at < history.length; at++) {
      const event = history[at] as E;
      before(event);
      if (this.listened !== null && !this.listened.has(event.kind)) continue;
      for (let index = 0; index < this.observers.length; index++) {
        const wanted = this.wants[index];
        if (emitter.get(at) === index || (wanted !== null && wanted !== undefined && !wanted.has(event.kind))) continue;
        try {
          (this.observers[index] as Observer).onEvent(event, contexts[index] as ObserverContext);
        } catch {
          // Recorded as observer.error when it first happened.
        }
      }
    }
  }

  /** Every observer's saved state, in order, or null when one of them cannot save its state. */
  saveStates(): JsonValue[] | null {
    const states: JsonValue[] = [];
    for (const observer of this.observers) {
      if (observer.saveState === undefined) return null;
      states.push({ id: observer.id, state: observer.saveState() });
    }
    return states;
  }

  /**
   * Gives each observer its saved state back (from {@link saveStates}, of the same observers).
   * @returns false when one did not take it: the observers are then in no state to go on with
   */
  restoreStates(states: readonly unknown[]): boolean {
    if (states.length !== this.observers.length) return false;
    return this.observers.every((observer, index) => {
      const saved = states[index] as { id?: unknown; state?: unknown } | null;
      return typeof saved === 'object' && saved !== null && saved.id === observer.id && observer.restoreState?.(saved.state) === true;
    });
  }

  /** Lets each observer record its last events; called before `session.close`. */
  close(): void {
    for (let index = 0; index < this.observers.length; index++) {
      const observer = this.observers[index] as Observer;
      if (observer.onClose === undefined) continue;
      try {
        this.as(index, () => observer.onClose?.(this.contexts[index] as ObserverContext));
      } catch (error) {
        this.recordError(index, null, error);
      }
    }
  }

  // Plain loops and no closures per event: this runs for every event an observer listens to.
  private dispatch(item: Queued): void {
    if (item.depth > MAX_DEPTH) return;
    let observed: ObservedEvent | null = null;
    const previousDepth = this.depth;
    const previousEmitter = this.emitter;
    this.depth = item.depth;
    try {
      for (let index = 0; index < this.observers.length; index++) {
        const wanted = this.wants[index];
        if (index === item.emitter || (wanted !== null && wanted !== undefined && !wanted.has(item.event.kind))) continue;
        const { event } = item;
        observed ??= {
          event_id: event.event_id,
          kind: event.kind,
          timestamp: event.timestamp,
          prev_hash: event.prev_hash,
          content_hash: event.content_hash,
          sequence: event.sequence,
          step_id: item.stepId,
          micros: item.micros,
          payload: parseCanonicalText(item.payloadText) as JsonObject,
        };
        this.emitter = index;
        try {
          (this.observers[index] as Observer).onEvent(observed, this.contexts[index] as ObserverContext);
        } catch (error) {
          this.recordError(index, event, error);
        } finally {
          this.emitter = previousEmitter;
        }
      }
    } finally {
      this.depth = previousDepth;
    }
  }

  /** Records what an observer threw as `observer.error`, as if recorded by it (so it is not handed it). */
  private recordError(index: number, event: RecordedEvent | null, error: unknown): void {
    const observer = this.observers[index] as Observer;
    const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    this.as(index, () => this.sink.emit('observer.error', { observer_id: observer.id, preset: observer.preset ?? 'custom', error: text, event_id: event?.event_id ?? null, kind: event?.kind ?? null }));
  }

  /** Runs `fn` with events recorded inside it counted as recorded by observer `index`. */
  private as<T>(index: number, fn: () => T): T {
    const previous = this.emitter;
    this.emitter = index;
    try {
      return fn();
    } finally {
      this.emitter = previous;
    }
  }
}
