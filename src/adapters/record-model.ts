/**
 * Model calls as adapters record them: `model.call` before (policy sees it: a deny stops the
 * call), `model.result` after with the token usage under the keys the `limit` observer and the
 * token rules read (`prompt_tokens`, `completion_tokens`, `total_tokens`: counters, which
 * redaction keeps), or `model.error`. A session an observer stopped refuses the model call
 * itself with `LoopBrokenError`, so a framework's run ends there.
 */

import { LoopBrokenError } from '../errors.js';
import type { Session } from '../session/session.js';
import type { EmitOptions } from '../session/types.js';

/** What a finished model call reports. */
export interface ModelOutcome {
  readonly finish_reason?: string | null;
  readonly prompt_tokens?: number | null;
  readonly completion_tokens?: number | null;
  /** The tool calls the model asked for. */
  readonly tool_calls?: readonly { readonly tool: string; readonly tool_call_id: string | null }[];
}

/** One model call in the trail. */
export interface ModelCall {
  /** Records the call's outcome (`model.result`), with its latency. */
  done(outcome: ModelOutcome): void;
  /** Records what the model call threw (`model.error`). */
  failed(error: unknown): void;
}

/**
 * Records `model.call`; throws `LoopBrokenError` (after recording the refused call) when an
 * observer has stopped the session.
 * @param facts the model and whatever the framework says of the request (message count, tools)
 */
export function startModelCall(session: Session, facts: Readonly<Record<string, unknown>>): ModelCall {
  const stop = session.stoppedBy;
  const call = session.emit('model.call', stop === null ? facts : { ...facts, refused: { code: 'LOOP_BROKEN', request_id: stop.request_id } });
  if (stop !== null) {
    const model = typeof facts['model'] === 'string' ? facts['model'] : 'model';
    throw new LoopBrokenError({ tool: model, pattern: stop.pattern, observer_id: stop.observer_id, alert_event_id: stop.alert_event_id, event_id: call.event_id, request_id: stop.request_id });
  }
  return new RecordedModelCall(session, facts['model'] ?? null, call.event_id);
}

/**
 * A started model call. One object with methods rather than a closure for each outcome: an agent
 * makes a model call a step, and what aura adds to a step is counted in microseconds.
 */
class RecordedModelCall implements ModelCall {
  private readonly started = performance.now();

  constructor(
    private readonly session: Session,
    private readonly model: unknown,
    private readonly callEventId: string,
  ) {}

  done(outcome: ModelOutcome): void {
    const prompt = outcome.prompt_tokens ?? null;
    const completion = outcome.completion_tokens ?? null;
    const total = prompt === null && completion === null ? null : (prompt ?? 0) + (completion ?? 0);
    this.session.emit('model.result', { model: this.model, ...outcome, total_tokens: total }, this.after());
  }

  failed(error: unknown): void {
    const failure = error instanceof Error ? { name: error.name, message: error.message } : { name: 'Error', message: String(error) };
    this.session.emit('model.error', { model: this.model, error: failure }, this.after());
  }

  /** The outcome's place in the trail (under its call) and the call's latency. */
  private after(): EmitOptions {
    return { parentId: this.callEventId, telemetry: { latency_ms: Math.round((performance.now() - this.started) * 1000) / 1000 } };
  }
}

/** A token count from a framework's usage field: a number, or `{total}` (AI SDK 6 and 7). */
export function tokenCount(value: unknown): number | null {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (value !== null && typeof value === 'object') return tokenCount((value as { total?: unknown }).total);
  return null;
}
