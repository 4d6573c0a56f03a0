/**
 * The one scenario every framework adapter is tested on, with the real framework and a scripted
 * model: an allowed tool, a denied tool the agent recovers from, a tool that needs approval
 * (approved, then released for exactly that call), and a polling tool that `break` stops. The
 * trail checks are the same for every framework.
 */

import { expect } from 'vitest';
import { agent } from '../../src/session/agent.js';
import type { Session, SessionResult } from '../../src/session/session.js';
import { verifyTrail } from '../../src/spine/verify.js';
import { readTrail } from '../../src/spine/trail-reader.js';
import type { AuraEvent } from '../../src/spine/record.js';
import { spansOnDisk } from './otlp-receiver.js';
import { pythonVerify } from './python.js';
import { countingIds, steppingClock } from './sessions.js';
import { tempDir } from './temp.js';

/** The profile: `delete_account` denied, `pay` held for approval, `break` at 3 (soft) and 4 (hard). */
export const SCENARIO_PROFILE = {
  rules: [
    { type: 'deny_tools', tools: ['delete_account'] },
    { type: 'confirm_before', tools: ['pay'] },
  ],
  observers: [{ preset: 'break', config: { soft: 3, hard: 4 } }],
};

/** The principal the apps approve as. */
export const APPROVER = 'ops@acme.test';

/** A session of the scenario's agent in a new AURA home. */
export function scenarioSession(ref: string): Session {
  const ag = agent(ref, { home: tempDir(), ...SCENARIO_PROFILE });
  return ag.session({ ids: countingIds(), clock: steppingClock(), traceParent: null });
}

/** The events of a closed session's trail. */
export function trailEvents(result: SessionResult): readonly AuraEvent[] {
  return readTrail(result.log_path).events;
}

/**
 * The checks every adapter's trail must pass. `ids` are the framework's tool-call ids of the
 * allowed call, the denied call, the approved call and the second `pay` call (other arguments),
 * which must not be released by the first approval.
 */
export function expectScenarioTrail(result: SessionResult, ids: { readonly allowed: string; readonly denied: string; readonly approved: string; readonly otherPay: string }): void {
  const events = trailEvents(result);
  const ofCall = (id: string): readonly AuraEvent[] => events.filter((e) => e.payload['tool_call_id'] === id || (e.payload['event'] as { payload?: { tool_call_id?: unknown } } | undefined)?.payload?.tool_call_id === id);
  const kindsOf = (id: string): string[] => ofCall(id).map((e) => e.kind);

  // The framework's ids are recorded on the call's events.
  expect(kindsOf(ids.allowed)).toEqual(['tool.intent', 'tool.call', 'tool.result']);
  expect(kindsOf(ids.denied)).toEqual(['tool.intent', 'constraint.violated']);
  const denial = ofCall(ids.denied)[1] as AuraEvent;
  expect(denial.payload['rule']).toMatchObject({ type: 'deny_tools' });

  // Approval: requested, approved by the app's principal, and released for exactly that call.
  const approvedCall = ofCall(ids.approved);
  expect(approvedCall.map((e) => e.kind)).toEqual(['tool.intent', 'tool.intent', 'tool.call', 'tool.result']);
  const required = events.filter((e) => e.kind === 'constraint.approval_required');
  const first = required[0] as AuraEvent;
  const requestId = first.payload['request_id'];
  const approved = events.find((e) => e.kind === 'constraint.approved') as AuraEvent;
  expect(approved.payload).toMatchObject({ request_id: requestId, principal: APPROVER, tool: 'pay' });
  const released = approvedCall[2] as AuraEvent;
  expect(released.payload['approval']).toEqual({ request_id: requestId, principal: APPROVER });
  expect(events.filter((e) => e.kind === 'constraint.approved')).toHaveLength(1);
  // The other pay call (other arguments) did not run on that approval.
  expect(kindsOf(ids.otherPay)).not.toContain('tool.call');
  expect(events.some((e) => e.kind === 'tool.result' && e.payload['tool'] === 'pay' && e.payload['tool_call_id'] === ids.otherPay)).toBe(false);

  // break: the polling tool ran until the hard alert, and the session was stopped.
  const alerts = events.filter((e) => e.kind === 'observer.alert');
  expect(alerts.map((e) => e.payload['level'])).toEqual(['soft', 'hard']);
  expect(events.filter((e) => e.kind === 'tool.result' && e.payload['tool'] === 'job_status')).toHaveLength(4);

  // Model calls with their usage.
  const modelResults = events.filter((e) => e.kind === 'model.result');
  expect(modelResults.length).toBeGreaterThan(0);
  expect(modelResults.every((e) => typeof e.payload['total_tokens'] === 'number' && (e.payload['total_tokens'] as number) > 0)).toBe(true);

  // The trail verifies, with aura's rule and Python Aura's.
  expect(verifyTrail(result.log_path)).toMatchObject({ hash_chain_valid: true, complete: true });
  expect(pythonVerify(result.log_path)).toEqual({ valid: true, events: events.length });

  // The framework's id is the span's gen_ai.tool.call.id.
  const spans = spansOnDisk(result.exports.otel ?? '');
  const toolSpan = (id: string) => spans.find((s) => s.name.startsWith('execute_tool') && s.attributes['gen_ai.tool.call.id'] === id);
  expect(toolSpan(ids.allowed)?.status).toBeNull();
  expect(toolSpan(ids.denied)?.attributes['error.type']).toBe('policy_denied');
  expect(toolSpan(ids.approved)).toBeDefined();
}
