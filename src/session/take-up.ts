/**
 * Taking up a shared session where earlier processes left it: the chain head from the trail's last
 * line, then the approvals, stops and observers' windows, from the state the last process saved
 * beside the trail where it can be trusted (./resume-state.ts), else rebuilt by handing the
 * recorded events out again, in order, as they were first.
 */

import type { ObserverBus, StopRequest } from '../observers/bus.js';
import type { ApprovalBook } from '../policy/approvals.js';
import { canonicalJson } from '../spine/canonical.js';
import type { Checkpointer } from './checkpoint.js';
import { TOOL_KINDS } from './enforce.js';
import type { LoopHold } from './hold.js';
import type { Recorder } from './recorder.js';
import { restoreApprovals, type ResumePoint } from './resume-state.js';
import type { PastEvent, SessionHistory } from './resume.js';

/** The stages whose state the recorded events rebuild. */
export interface TakeUpStages {
  readonly recorder: Recorder;
  readonly checkpointer: Checkpointer;
  readonly approvals: ApprovalBook;
  readonly loop: LoopHold;
  readonly observers: ObserverBus | null;
}

/**
 * Takes up a session from its saved state (the observers have taken theirs up already).
 * @returns whether the recorded events already reached the session's goal
 */
export function takeUpSaved({ saved, last }: ResumePoint, stages: TakeUpStages): { goalReached: boolean } {
  continueChain(last, saved.count, stages.recorder);
  stages.checkpointer.resume(saved.checkpointSince);
  restoreApprovals(stages.approvals, saved.approvals);
  stages.loop.resume(saved.stop);
  return { goalReached: saved.goalReached };
}

/** @returns whether the recorded events already reached the session's goal */
export function takeUp(history: SessionHistory, stages: TakeUpStages): { goalReached: boolean } {
  const { last, events } = history;
  const { recorder, approvals, loop, observers } = stages;
  continueChain(last, events.length, recorder);
  const checkpoint = events.findLastIndex((event) => event.kind === 'chain.checkpoint');
  stages.checkpointer.resume(events.length - 1 - checkpoint);
  // A stop whose request a refused call recorded keeps that request id.
  const stopRequests = new Map<string, string>();
  for (const event of events) {
    const rule = event.kind === 'constraint.violated' ? (event.payload['rule'] as Record<string, unknown> | undefined) : undefined;
    if (rule?.['type'] === 'observer_break' && typeof rule['alert_event_id'] === 'string' && typeof rule['request_id'] === 'string') stopRequests.set(rule['alert_event_id'], rule['request_id']);
  }
  let goalReached = false;
  /** What one recorded event tells of approvals: requests, approvals, a call that used one. */
  const replayDecision = (event: PastEvent): void => {
    const p = event.payload;
    const requestId = typeof p['request_id'] === 'string' ? p['request_id'] : null;
    if (event.kind === 'task.complete') goalReached = true;
    else if (event.kind === 'constraint.approval_required' && requestId !== null && typeof p['digest'] === 'string' && approvals.byId(requestId) === undefined) {
      const pending = (p['pending_event'] as { payload?: { tool?: unknown } } | undefined)?.payload?.tool;
      approvals.request(p['digest'], typeof pending === 'string' ? pending : '*', requestId);
    } else if (event.kind === 'constraint.approved' && requestId !== null && approvals.byId(requestId)?.state === 'pending') {
      approvals.approve(requestId, typeof p['principal'] === 'string' ? p['principal'] : null);
    } else if (TOOL_KINDS.has(event.kind)) {
      const used = (p['approval'] as { request_id?: unknown } | undefined)?.request_id;
      const request = typeof used === 'string' ? approvals.byId(used) : undefined;
      if (request !== undefined) approvals.use(request);
      loop.releaseIfApproved();
    }
  };
  const stop = (request: StopRequest): string => loop.stopAt(request, stopRequests.get(request.alert_event_id));
  if (observers === null) for (const event of events) replayDecision(event);
  else observers.replay(events, stop, replayDecision);
  return { goalReached };
}

/** The chain head, from the trail's last event. */
function continueChain(last: PastEvent, count: number, recorder: Recorder): void {
  recorder.continueFrom({ count, headHash: last.content_hash, lastEventId: last.event_id, lastMicros: last.micros });
  recorder.agentIdsText = canonicalJson(last.agent_ids, 'agent_ids');
  // Two first hooks of a new agent can register it with two ids: the trail's first one stands.
  recorder.auraId = last.aura_id;
}
