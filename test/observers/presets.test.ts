import { describe, expect, it } from 'vitest';
import type { Clock } from '../../src/session/ids.js';
import { observed, ofKind, trail } from '../helpers/observers.js';

const MINUTE = 60_000_000;

/** A clock the test moves by hand, from 2026-01-01T08:00:00Z. */
function handClock(): Clock & { advance(micros: number): void } {
  let now = Date.UTC(2026, 0, 1, 8, 0) * 1000;
  const clock = (() => now) as Clock & { advance(micros: number): void };
  clock.advance = (micros) => {
    now += micros;
  };
  return clock;
}

describe('the monitor preset', () => {
  it('records counts and rates before the session closes', async () => {
    const clock = handClock();
    const session = observed([{ preset: 'monitor' }], {}, { clock });
    await session.tool('search', { q: 'a' }, () => 1);
    clock.advance(MINUTE);
    await session.tool('search', { q: 'b' }, () => 2);
    await session.tool('fetch', { url: '/' }, () => 3).catch(() => undefined);
    await expect(session.tool('fetch', { url: '/x' }, () => { throw new Error('404'); })).rejects.toThrow('404');
    clock.advance(MINUTE);
    await session.close();
    const events = trail(session);
    const summary = events.at(-2);
    expect(events.at(-1)?.kind).toBe('session.close');
    expect(summary?.kind).toBe('observer.note');
    expect(summary?.payload).toMatchObject({
      type: 'monitor_summary',
      observer_id: 'monitor',
      counts: { events: events.length - 2, tool_calls: 4, by_tool: { search: 2, fetch: 2 }, tool_errors: 1, by_kind: { 'tool.call': 4, 'tool.result': 3, 'tool.error': 1, 'membrane.ingress': 1 } },
      rates: { elapsed_seconds: 120, tool_calls_per_minute: 2 },
    });
  });

  it('notes a call repeated max_identical_intents times, and how long each sequencer step took', async () => {
    const clock = handClock();
    const session = observed([{ preset: 'monitor', config: { max_identical_intents: 2 } }], {}, { clock });
    for (let i = 0; i < 3; i++) session.emit('tool.call', { tool: 'poll', args: { job: 1 } });
    session.emit('sequencer.step.start', { type: 'skill' }, { stepId: 'fetch' });
    clock.advance(1_500_000);
    session.emit('sequencer.step.end', { status: 'ok' }, { stepId: 'fetch' });
    const notes = ofKind(trail(session), 'observer.note').map((e) => e.payload);
    expect(notes).toEqual([
      expect.objectContaining({ type: 'repeated_tool_intent', tool: 'poll', count: 2, threshold: 2, observer_id: 'monitor' }),
      expect.objectContaining({ type: 'step_timing', step_id: 'fetch', elapsed_ms: 1500, status: 'ok' }),
    ]);
    await session.close();
  });
});

describe('the limit preset', () => {
  it('warns near a cap and alerts once past it; the alert is an OBSERVER_ALERT finding', async () => {
    const session = observed([{ preset: 'limit', config: { max_tool_calls: 4, warn_ratio: 0.75 } }]);
    for (let i = 0; i < 6; i++) session.emit('tool.call', { tool: 'search', args: { i } });
    const events = trail(session);
    const calls = ofKind(events, 'tool.call');
    expect(events.filter((e) => e.kind.startsWith('observer.')).map((e) => [e.kind, e.payload['type'], e.payload['value'], e.prev_hash])).toEqual([
      ['observer.note', 'tool_call_cap_warning', 3, calls[2]?.content_hash],
      ['observer.alert', 'tool_call_cap_exceeded', 5, calls[4]?.content_hash],
    ]);
    const result = await session.close();
    expect(result.audit_report.findings.filter((f) => f.kind === 'OBSERVER_ALERT')).toMatchObject([{ severity: 'warn', type: 'tool_call_cap_exceeded', observer_id: 'limit', message: 'max_tool_calls: 5 tool calls > 4' }]);
    expect(result.audit_report.scorecard.observers).toEqual({ alerts: 1, loop_cycles: 0 });
  });

  it('caps the call rate per minute, and alerts again on a later burst', async () => {
    const clock = handClock();
    const session = observed([{ preset: 'limit', config: { max_tool_calls_per_minute: 2, warn_ratio: 1 } }], {}, { clock });
    const burst = (): void => {
      for (let i = 0; i < 3; i++) {
        session.emit('tool.call', { tool: 't', args: { i } });
        clock.advance(1_000_000);
      }
    };
    burst();
    clock.advance(2 * MINUTE);
    burst();
    const types = ofKind(trail(session), 'observer.alert').map((e) => [e.payload['type'], e.payload['value']]);
    expect(types).toEqual([
      ['rate_limit_exceeded', 3],
      ['rate_limit_exceeded', 3],
    ]);
    await session.close();
  });

  it('caps tokens per step and per session, and wall time', async () => {
    const clock = handClock();
    const session = observed([{ preset: 'limit', config: { max_tokens_per_step: 1000, max_tokens: 1500, max_wall_seconds: 30 } }], {}, { clock });
    session.emit('model.call', { prompt_tokens: 400, completion_tokens: 100 });
    session.emit('turn.end', { tokens: 1200 });
    clock.advance(31_000_000);
    session.emit('turn.end', { tokens: 10 });
    const alerts = ofKind(trail(session), 'observer.alert').map((e) => [e.payload['type'], e.payload['value']]);
    expect(alerts).toEqual([
      ['token_budget_exceeded', 1200],
      ['session_token_budget_exceeded', 1700],
      ['wall_time_exceeded', 31],
    ]);
    await session.close();
  });
});

describe('the goal_drift preset', () => {
  it('records conformance.drift for an action off the goal, once per distinct drift, and fails conformance', async () => {
    const session = observed([{ preset: 'goal_drift' }], { variables: { goal: 'invoice payments only' } });
    await session.tool('ledger.read', { query: 'open invoice list' }, () => []);
    await session.tool('crypto.buy', { coin: 'btc' }, () => 'bought');
    await session.tool('crypto.buy', { coin: 'btc' }, () => 'bought');
    const events = trail(session);
    const drifts = ofKind(events, 'conformance.drift');
    const buy = ofKind(events, 'tool.intent')[1];
    expect(drifts.map((e) => e.payload)).toEqual([
      { type: 'conformance.drift', reason: 'off-scope relative to goal (none of: invoice, payments)', signature: 'tool.intent:crypto.buy:off-scope relative to goal (none of: invoice, payments)', observer_id: 'goal-drift', kind: 'tool.intent', tool: 'crypto.buy', goal: 'invoice payments only', event_id: buy?.event_id },
    ]);
    const result = await session.close();
    expect(result.audit_report.findings.find((f) => f.kind === 'GOAL_DRIFT')).toMatchObject({ tool: 'crypto.buy', goal: 'invoice payments only', event_ids: [drifts[0]?.event_id] });
    expect(result.conformance.checks.find((c) => c.type === 'goal_slo')).toMatchObject({ passed: false, drift_count: 1, violations: [{ kind: 'conformance.drift', message: drifts[0]?.payload['reason'], event_id: drifts[0]?.event_id }] });
    expect(result.audit_report.verdict).toBe('fail');
  });

  it('searches values, not keys: a forbidden topic that is also a key name does not match every call', async () => {
    const session = observed([{ preset: 'goal_drift', config: { forbidden_topics: ['tool', 'crypto'] } }]);
    await session.tool('ledger.read', { month: '09' }, () => []);
    await session.tool('news.search', { q: 'crypto prices' }, () => []);
    expect(ofKind(trail(session), 'conformance.drift').map((e) => e.payload['reason'])).toEqual(["forbidden topic 'crypto' in tool payload"]);
    await session.close();
  });

  it('requires every declared keyword', async () => {
    const session = observed([{ preset: 'goal_drift', config: { required_keywords: ['invoice'] } }]);
    await session.tool('ledger.read', { kind: 'invoice' }, () => []);
    await session.tool('ledger.read', { kind: 'receipt' }, () => []);
    expect(ofKind(trail(session), 'conformance.drift').map((e) => e.payload['reason'])).toEqual(["missing required keyword 'invoice'"]);
    await session.close();
  });
});

describe('the schedule_slo preset', () => {
  const slo = [{ preset: 'schedule_slo', config: { required_tool: 'sql/append' } }];

  it('records slo.missed at the first event after the deadline, inside the session, once', async () => {
    const clock = handClock();
    const session = observed(slo, { variables: { schedule: '08:30', schedule_grace_minutes: 10 } }, { clock });
    session.emit('turn.start', {});
    clock.advance(41 * MINUTE);
    const late = session.emit('turn.start', {});
    session.emit('turn.end', {});
    const result = await session.close();
    const events = trail(session);
    const misses = ofKind(events, 'slo.missed');
    expect(misses.map((e) => e.payload)).toEqual([
      { type: 'slo.missed', reason: 'sql/append not completed by 08:30 UTC (+10 min grace)', observer_id: 'schedule-slo', required_tool: 'sql/append', deadline: '08:30', deadline_at: '2026-01-01T08:40:00.000Z', grace_minutes: 10, phase: 'deadline_missed' },
    ]);
    expect(misses[0]?.parent_id).toBe(late.event_id);
    expect(result.audit_report.findings.find((f) => f.kind === 'SCHEDULE_SLO_MISS')).toMatchObject({ required_tool: 'sql/append', deadline: '08:30' });
    expect(result.conformance.passed).toBe(false);
  });

  it('counts the required tool result before the deadline as done', async () => {
    const clock = handClock();
    const session = observed(slo, { variables: { schedule: '30 8 * * *' } }, { clock });
    await session.tool('append', { rows: 3 }, () => 'ok', { skillId: 'sql' });
    clock.advance(2 * 60 * MINUTE);
    session.emit('turn.end', {});
    const result = await session.close();
    expect(ofKind(trail(session), 'slo.missed')).toEqual([]);
    expect(result.conformance.passed).toBe(true);
  });

  it('does not call a session that closes before its deadline late', async () => {
    const clock = handClock();
    const session = observed(slo, { variables: { schedule: '09:00' } }, { clock });
    session.emit('turn.start', {});
    const result = await session.close();
    const events = trail(session);
    expect(ofKind(events, 'slo.missed')).toEqual([]);
    expect(events.at(-2)?.payload).toMatchObject({ type: 'slo_pending', observer_id: 'schedule-slo', deadline: '09:00' });
    expect(result.conformance.passed).toBe(true);
  });
});
