/**
 * The hold stage: an observer's hard alert stops the session at its loop, and every guarded call is
 * refused (`constraint.violated`, rule `observer_break`) until the stop's request is approved.
 */

import { randomBytes } from 'node:crypto';
import { LoopBrokenError } from '../errors.js';
import type { StopRequest } from '../observers/bus.js';
import type { ApprovalBook } from '../policy/approvals.js';
import type { RecordedEvent } from './types.js';

/** An observer's stop, with the approval request that releases it. */
export type LoopStop = StopRequest & { readonly request_id: string };

export class LoopHold {
  private stop: LoopStop | null = null;

  constructor(
    private readonly approvals: ApprovalBook,
    private readonly record: (kind: string, payload: Readonly<Record<string, unknown>>) => RecordedEvent,
  ) {}

  /** The stop in force, or null. */
  get current(): LoopStop | null {
    return this.stop;
  }

  /** Stops the session at an observer's hard alert (one stop at a time: a second alert keeps the first request). */
  stopAt(request: StopRequest, knownRequestId?: string): string {
    if (this.stop !== null) return this.stop.request_id;
    const requestId = knownRequestId ?? `loop_${randomBytes(5).toString('hex')}`;
    this.approvals.request(`loop:${requestId}`, '*', requestId);
    this.stop = { ...request, request_id: requestId };
    return requestId;
  }

  /**
   * A tool call while an observer has stopped the session: released once the stop's request is
   * approved, else recorded as `constraint.violated` (rule `observer_break`) and refused.
   * @throws LoopBrokenError
   */
  hold(kind: string, payload: Readonly<Record<string, unknown>>, tool: string): void {
    const stop = this.stop;
    if (stop === null) return;
    const approval = this.approvals.open(`loop:${stop.request_id}`);
    if (approval?.state === 'approved') {
      this.approvals.use(approval);
      this.stop = null;
      return;
    }
    const rule = { type: 'observer_break', pattern: stop.pattern, observer_id: stop.observer_id, alert_event_id: stop.alert_event_id, request_id: stop.request_id };
    const message = `Session stopped by observer ${stop.observer_id} at ${stop.pattern}: approve ${stop.request_id} to resume`;
    const violation = this.record('constraint.violated', { message, rule, event: { kind, payload }, audit_only: false });
    throw new LoopBrokenError({ tool, pattern: stop.pattern, observer_id: stop.observer_id, alert_event_id: stop.alert_event_id, event_id: violation.event_id, request_id: stop.request_id });
  }

  /** Takes up a stop saved by an earlier process of a shared session (its request is in the approvals already). */
  resume(stop: LoopStop | null): void {
    this.stop = stop;
  }

  /** A recorded call seen again while taking up a shared session: an approved stop is released by it. */
  releaseIfApproved(): void {
    const stopped = this.stop === null ? undefined : this.approvals.byId(this.stop.request_id);
    if (stopped?.state === 'approved') {
      this.approvals.use(stopped);
      this.stop = null;
    }
  }
}
