/**
 * The publish stage: a recorded event handed to whoever follows the session as it runs, in order:
 * the live span export, the observers (which may record follow-up events through the session, as a
 * host would), and the escalation rules.
 */

import type { LiveExport } from '../export/live-export.js';
import type { ObserverBus } from '../observers/bus.js';
import type { EscalationEngine } from '../policy/escalations.js';
import { parseJsonLossless } from '../spine/json-reader.js';
import type { AppendedEvent } from './recorder.js';

export class Publisher {
  constructor(
    /** Pushes spans to a collector as they end (config `otel.endpoint`), or null. */
    readonly live: LiveExport | null,
    readonly observers: ObserverBus | null,
    private readonly escalations: () => EscalationEngine,
  ) {}

  publish({ event, givenKind, payloadText, line, micros, stepId }: AppendedEvent): void {
    this.live?.add(line);
    if (this.observers !== null) this.observers.publish(event, payloadText, micros, stepId);
    const escalations = this.escalations();
    if (escalations.listensTo(givenKind)) escalations.onEvent(givenKind, event.event_id, parseJsonLossless(payloadText) as Record<string, unknown>);
  }
}
