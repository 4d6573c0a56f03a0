import { describe, expect, it } from 'vitest';
import { LoopBrokenError } from '../../src/errors.js';
import { BreakObserver, type BreakSettings } from '../../src/observers/break.js';
import type { ObservedEvent, ObserverContext } from '../../src/observers/bus.js';
import type { Session } from '../../src/session/session.js';
import type { AuraEvent, JsonObject } from '../../src/spine/record.js';
import { verifyTrail } from '../../src/spine/verify.js';
import { expectAuraError, expectAuraRejection } from '../helpers/errors.js';
import { byId, observed, ofKind, trail } from '../helpers/observers.js';
import { pythonVerify } from '../helpers/python.js';

type Json = Record<string, unknown>;

/** A scripted agent step: one guarded call, and whether its tool ran. */
async function call(session: Session, tool: string, args: Json, result: unknown, ran: string[]): Promise<unknown> {
  return session.tool(tool, args, () => {
    ran.push(tool);
    return result;
  });
}

/** The `tool.intent` events, the steps the break preset names in its hashes. */
function intents(events: readonly AuraEvent[]): AuraEvent[] {
  return ofKind(events, 'tool.intent');
}

function alerts(events: readonly AuraEvent[]): Json[] {
  return ofKind(events, 'observer.alert').map((e) => e.payload as Json);
}

/** Checks the refusal after a hard alert: typed error, `constraint.violated`, the tool not run. */
async function expectRefused(session: Session, hardAlert: AuraEvent, pattern: string): Promise<LoopBrokenError> {
  const ran: string[] = [];
  const error = await expectAuraRejection(() => call(session, 'anything.else', { fresh: true }, 'never', ran), LoopBrokenError, 'LOOP_BROKEN');
  expect(ran).toEqual([]);
  expect(error.data).toMatchObject({ tool: 'anything.else', pattern, observer_id: 'break', alert_event_id: hardAlert.event_id });
  const events = trail(session);
  const refusal = byId(events, error.data?.event_id);
  expect(refusal.kind).toBe('constraint.violated');
  expect(refusal.payload).toMatchObject({ rule: { type: 'observer_break', pattern, observer_id: 'break', alert_event_id: hardAlert.event_id, request_id: error.data?.request_id }, audit_only: false, event: { kind: 'tool.call' } });
  expect(events.at(-1)?.event_id).toBe(refusal.event_id);
  return error;
}

describe('the break preset', () => {
  describe('ACTION_FIXATION', () => {
    it('nudges at the third identical call, stops at the fifth, and refuses the next guarded call without running it', async () => {
      const session = observed([{ preset: 'break' }]);
      const ran: string[] = [];
      for (let i = 0; i < 5; i++) await call(session, 'inventory.check', { sku: 'A-1' }, { in_stock: 0 }, ran);
      expect(ran).toHaveLength(5);
      const events = trail(session);
      const [soft, hard] = ofKind(events, 'observer.alert') as [AuraEvent, AuraEvent];
      const steps = intents(events);
      expect(soft.payload).toMatchObject({
        type: 'loop_detected',
        pattern: 'ACTION_FIXATION',
        level: 'soft',
        observer_id: 'break',
        occurrences: 3,
        threshold: 3,
        cycle_entry_hash: steps[0]?.content_hash,
        cycle_entry_event_id: steps[0]?.event_id,
        cycle_recurrence_hash: steps[2]?.content_hash,
        cycle_recurrence_event_id: steps[2]?.event_id,
        remedial_directive: { action: 'change_strategy' },
      });
      expect(String(soft.payload['message'])).toMatch(/^ACTION_FIXATION: inventory\.check was called 3 times/);
      const directive = soft.payload['remedial_directive'] as Json;
      expect(directive['avoid']).toEqual([{ tool: 'inventory.check', fingerprint: expect.stringMatching(/^[0-9a-f]{16}$/) }]);
      expect(typeof directive['reason']).toBe('string');
      expect(typeof directive['suggestion']).toBe('string');
      // The soft alert comes with a nudge naming it.
      const nudge = ofKind(events, 'membrane.nudge')[0];
      expect(nudge?.payload).toMatchObject({ source: 'observer', observer_id: 'break', pattern: 'ACTION_FIXATION', alert_event_id: soft.event_id, message: directive['suggestion'] });
      expect(hard.payload).toMatchObject({ pattern: 'ACTION_FIXATION', level: 'hard', occurrences: 5, threshold: 5, cycle_entry_hash: steps[0]?.content_hash, cycle_recurrence_hash: steps[4]?.content_hash, remedial_directive: { action: 'stop' } });
      expect(ofKind(events, 'membrane.nudge')).toHaveLength(1);

      await expectRefused(session, hard, 'ACTION_FIXATION');
      const result = await session.close();
      expect(verifyTrail(result.log_path, result.summary.chain)).toMatchObject({ hash_chain_valid: true, complete: true });
      // Alerts, nudges and the refusal are ordinary events: CPython's hashing agrees with the chain.
      expect(pythonVerify(result.log_path)).toMatchObject({ valid: true, events: result.chain.events });
      expect(result.audit_report.scorecard.observers).toEqual({ alerts: 2, loop_cycles: 2 });
      expect(result.audit_report.findings.filter((f) => f.kind === 'COGNITIVE_CYCLE_DETECTED').map((f) => [f.severity, f.event_ids])).toEqual([
        ['warn', [soft.event_id]],
        ['warn', [hard.event_id]],
      ]);
      expect(result.audit_report.scorecard.tools.denied).toBe(1);
    });

    it('refuses a policy-checked emit of tool.call too, when the host records its calls itself', async () => {
      const session = observed([{ preset: 'break', config: { soft: 2, hard: 3 } }]);
      for (let i = 0; i < 3; i++) {
        session.emit('tool.call', { tool: 'poll', args: { job: 7 } });
        session.emit('tool.result', { tool: 'poll', result: { state: 'running' } });
      }
      const events = trail(session);
      const hard = ofKind(events, 'observer.alert').find((e) => e.payload['level'] === 'hard') as AuraEvent;
      expect(hard.payload['cycle_entry_hash']).toBe(ofKind(events, 'tool.call')[0]?.content_hash);
      const error = expectAuraError(() => session.emit('tool.call', { tool: 'poll', args: { job: 7 } }), LoopBrokenError, 'LOOP_BROKEN');
      expect(error.data?.alert_event_id).toBe(hard.event_id);
      expect(ofKind(trail(session), 'tool.call')).toHaveLength(3);
      // Events other than tool calls are still recorded: the host can say what it does next.
      session.emit('turn.end', { output: 'stopped' });
      await session.close();
    });

    it('lets the session go on once the stop request is approved, and starts counting afresh', async () => {
      const session = observed([{ preset: 'break' }]);
      const ran: string[] = [];
      for (let i = 0; i < 5; i++) await call(session, 'search', { q: 'same' }, [], ran);
      const hard = ofKind(trail(session), 'observer.alert')[1] as AuraEvent;
      const error = await expectRefused(session, hard, 'ACTION_FIXATION');
      session.approve(error.data?.request_id ?? '', { principal: 'ops@acme.test' });
      await call(session, 'search', { q: 'same' }, [], ran);
      await call(session, 'search', { q: 'same' }, [], ran);
      expect(ran).toHaveLength(7);
      const events = trail(session);
      expect(ofKind(events, 'constraint.approved')[0]?.payload).toMatchObject({ request_id: error.data?.request_id, principal: 'ops@acme.test' });
      expect(alerts(events)).toHaveLength(2);
      await session.close();
    });
  });

  // A cycle of calls repeated with the same results: [pattern, what, the calls of one round, rounds
  // at the soft and the hard threshold].
  const cycles: [string, string, [string, Json, unknown][], number, number][] = [
    ['OSCILLATION_CYCLE', 'two calls alternate', [['fs.read', { path: 'a.ts' }, 'A'], ['fs.read', { path: 'b.ts' }, 'B']], 3, 4],
    ['CHOREOGRAPHY_CYCLE', 'a sequence of three calls recurs', [['plan.draft', { goal: 'trip' }, 'draft'], ['plan.review', { draft: 'draft' }, 'needs work'], ['plan.revise', { notes: 'needs work' }, 'draft']], 2, 3],
  ];
  for (const [pattern, what, round, softAt, hardAt] of cycles) {
    describe(pattern, () => {
      it(`alerts when ${what} with the same results: soft at ${softAt} rounds, hard at ${hardAt}`, async () => {
        const session = observed([{ preset: 'break' }]);
        const ran: string[] = [];
        for (let i = 0; i < hardAt; i++) for (const [tool, args, result] of round) await call(session, tool, args, result, ran);
        const events = trail(session);
        const steps = intents(events);
        const period = round.length;
        const [soft, hard] = ofKind(events, 'observer.alert') as [AuraEvent, AuraEvent];
        expect(soft.payload).toMatchObject({ pattern, level: 'soft', occurrences: softAt, cycle_entry_hash: steps[0]?.content_hash, cycle_recurrence_hash: steps[(softAt - 1) * period]?.content_hash });
        expect((soft.payload['cycle'] as Json[]).map((s) => s['tool'])).toEqual(round.map(([tool]) => tool));
        expect(String(soft.payload['message'])).toContain(round.map(([tool]) => tool).join(period === 2 ? ' and ' : ' → '));
        expect((soft.payload['remedial_directive'] as { avoid: unknown[] }).avoid).toHaveLength(period);
        expect(hard.payload).toMatchObject({ pattern, level: 'hard', occurrences: hardAt, cycle_entry_hash: steps[0]?.content_hash, cycle_recurrence_hash: steps[(hardAt - 1) * period]?.content_hash });
        await expectRefused(session, hard, pattern);
        await session.close();
      });
    });
  }

  describe('ERROR_STATUS_CHURN', () => {
    it('alerts when consecutive failures keep flipping status, even with changing arguments', async () => {
      const session = observed([{ preset: 'break' }]);
      const ran: string[] = [];
      const statuses = [503, 429, 503, 429, 503, 429];
      for (const [attempt, status] of statuses.entries()) await call(session, 'api.fetch', { url: '/orders', attempt }, { status, body: null }, ran);
      const events = trail(session);
      const steps = intents(events);
      const [soft, hard] = ofKind(events, 'observer.alert') as [AuraEvent, AuraEvent];
      expect(soft.payload).toMatchObject({ pattern: 'ERROR_STATUS_CHURN', level: 'soft', occurrences: 3, cycle_entry_hash: steps[0]?.content_hash, cycle_recurrence_hash: steps[3]?.content_hash, remedial_directive: { action: 'back_off' } });
      expect(String(soft.payload['message'])).toContain('503, 429');
      expect(hard.payload).toMatchObject({ pattern: 'ERROR_STATUS_CHURN', level: 'hard', occurrences: 5, cycle_recurrence_hash: steps[5]?.content_hash });
      await expectRefused(session, hard, 'ERROR_STATUS_CHURN');
      await session.close();
    });

    it('reads thrown tool errors as failures too', async () => {
      const session = observed([{ preset: 'break', config: { patterns: { ERROR_STATUS_CHURN: { soft: 2, hard: 0 } } } }]);
      const messages = ['timeout', 'connection reset', 'timeout'];
      for (const [attempt, message] of messages.entries()) {
        await expect(session.tool('db.query', { sql: 'select 1', attempt }, () => { throw new Error(message); })).rejects.toThrow(message);
      }
      expect(alerts(trail(session))).toMatchObject([{ pattern: 'ERROR_STATUS_CHURN', level: 'soft', occurrences: 2 }]);
      await session.close();
    });
  });

  describe('REASONING_INERTIA', () => {
    it('nudges when the reasoning repeats with no new action, and never stops the session by default', async () => {
      const session = observed([{ preset: 'break' }]);
      const ran: string[] = [];
      await call(session, 'inventory.check', { sku: 'A-1' }, { in_stock: 0 }, ran);
      const texts = ['I should check the inventory again before I answer.', 'I should check the inventory again before I answer!', 'i should CHECK the inventory again, before I answer', 'I should check the inventory again before I answer.'];
      for (const text of texts) session.emit('model.reasoning', { text });
      const events = trail(session);
      const thoughts = ofKind(events, 'model.reasoning');
      const found = alerts(events);
      expect(found).toEqual([expect.objectContaining({ pattern: 'REASONING_INERTIA', level: 'soft', occurrences: 3, cycle_entry_hash: thoughts[0]?.content_hash, cycle_recurrence_hash: thoughts[2]?.content_hash, remedial_directive: expect.objectContaining({ action: 'act' }) })]);
      await call(session, 'inventory.restock', { sku: 'A-1' }, 'ok', ran);
      expect(ran).toEqual(['inventory.check', 'inventory.restock']);
      const result = await session.close();
      const finding = result.audit_report.findings.find((f) => f.kind === 'REASONING_INERTIA');
      expect(finding?.severity).toBe('info');
      expect(result.audit_report.scorecard.observers).toEqual({ alerts: 1, loop_cycles: 0 });
    });

    it('starts afresh after a new action', async () => {
      const session = observed([{ preset: 'break' }]);
      const ran: string[] = [];
      session.emit('model.reasoning', { text: 'Look up the order first.' });
      session.emit('model.reasoning', { text: 'Look up the order first.' });
      await call(session, 'orders.get', { id: 7 }, { id: 7 }, ran);
      session.emit('model.reasoning', { text: 'Look up the order first.' });
      session.emit('model.reasoning', { text: 'Look up the order first.' });
      expect(alerts(trail(session))).toEqual([]);
      await session.close();
    });
  });

  describe('when the agent is not looping', () => {
    const cases: [string, (session: Session, ran: string[]) => Promise<void>][] = [
      [
        'a retry that then succeeds',
        async (session, ran) => {
          for (const status of [503, 503]) await call(session, 'api.fetch', { url: '/orders' }, { status }, ran);
          await call(session, 'api.fetch', { url: '/orders' }, { status: 200, orders: [1, 2] }, ran);
        },
      ],
      [
        'polling whose result makes progress',
        async (session, ran) => {
          for (let pct = 0; pct <= 100; pct += 10) await call(session, 'job.status', { job: 42 }, { progress: pct }, ran);
        },
      ],
      [
        'paging through results with a changing cursor',
        async (session, ran) => {
          for (let page = 0; page < 12; page++) await call(session, 'search.page', { q: 'aura', cursor: page }, { hits: [] }, ran);
        },
      ],
      [
        'two argument sets alternating while their results change',
        async (session, ran) => {
          for (let i = 0; i < 8; i++) {
            await call(session, 'price.get', { sku: 'A' }, { price: 100 + i }, ran);
            await call(session, 'price.get', { sku: 'B' }, { price: 200 + i }, ran);
          }
        },
      ],
      [
        'the same three-step routine on different inputs',
        async (session, ran) => {
          for (const city of ['Lisbon', 'Porto', 'Faro', 'Braga']) {
            await call(session, 'weather.get', { city }, 'sunny', ran);
            await call(session, 'calendar.find', { city }, '09:00', ran);
            await call(session, 'mail.send', { city }, 'sent', ran);
          }
        },
      ],
      [
        'different reasoning between actions',
        async (session) => {
          for (const text of ['Find the cheapest flight.', 'Compare hotel prices near the station.', 'Check the museum opening hours.', 'Summarise the plan for the traveller.']) {
            session.emit('model.reasoning', { text });
          }
        },
      ],
    ];
    for (const [what, script] of cases) {
      it(`does not alert on ${what}`, async () => {
        const session = observed([{ preset: 'break' }]);
        const ran: string[] = [];
        await script(session, ran);
        const events = trail(session);
        expect(alerts(events)).toEqual([]);
        expect(ofKind(events, 'membrane.nudge')).toEqual([]);
        await session.tool('one.more', {}, () => 'runs');
        const result = await session.close();
        expect(result.chain).toMatchObject({ hash_chain_valid: true, complete: true });
        expect(result.audit_report.scorecard.observers).toEqual({ alerts: 0, loop_cycles: 0 });
      });
    }
  });

  describe('with an escalation playbook', () => {
    it('triggers the observer.alert rules, in trail order after the alert', async () => {
      const session = observed([{ preset: 'break' }], { escalations: [{ id: 'loops', on: 'observer.alert', actions: ['email:ops@acme.test'] }] });
      const ran: string[] = [];
      for (let i = 0; i < 3; i++) await call(session, 'same', {}, 'x', ran);
      const events = trail(session);
      const alert = ofKind(events, 'observer.alert')[0] as AuraEvent;
      const fired = ofKind(events, 'escalation.fired');
      expect(fired.map((e) => e.payload)).toMatchObject([{ trigger_kind: 'observer.alert', trigger_event_id: alert.event_id, rule_id: 'loops' }]);
      expect(events.indexOf(fired[0] as AuraEvent)).toBeGreaterThan(events.indexOf(alert));
      await session.close();
    });
  });

  describe('config', () => {
    it('takes soft and hard per pattern, and turns a pattern off', async () => {
      const session = observed([{ preset: 'break', config: { patterns: { ACTION_FIXATION: false, OSCILLATION_CYCLE: { soft: 2, hard: 0 } } } }]);
      const ran: string[] = [];
      for (let i = 0; i < 6; i++) await call(session, 'same', { i: 0 }, 'x', ran);
      for (let i = 0; i < 3; i++) {
        await call(session, 'ping', {}, 'pong', ran);
        await call(session, 'pong', {}, 'ping', ran);
      }
      expect(alerts(trail(session)).map((a) => [a['pattern'], a['level'], a['occurrences']])).toEqual([['OSCILLATION_CYCLE', 'soft', 2]]);
      await call(session, 'still.allowed', {}, 'yes', ran);
      await session.close();
    });

    it('counts within its window only', async () => {
      const session = observed([{ preset: 'break', config: { window: 4, max_cycle: 2, patterns: { ACTION_FIXATION: { soft: 4, hard: 5 } } } }]);
      const ran: string[] = [];
      for (let i = 0; i < 8; i++) await call(session, 'same', {}, 'x', ran);
      // Four steps fit the window: the fifth occurrence is never seen, so the session is not stopped.
      expect(alerts(trail(session)).map((a) => [a['level'], a['occurrences']])).toEqual([['soft', 4]]);
      await session.close();
    });
  });

  describe('saveState and restoreState', () => {
    const settings: BreakSettings = {
      window: 8,
      maxCycle: 3,
      thresholds: { ACTION_FIXATION: { soft: 2, hard: 3 }, OSCILLATION_CYCLE: { soft: 2, hard: 3 }, CHOREOGRAPHY_CYCLE: { soft: 2, hard: 3 }, ERROR_STATUS_CHURN: { soft: 2, hard: 4 }, REASONING_INERTIA: { soft: 2, hard: 0 } },
      reasoningKinds: ['model.reasoning'],
      similarity: 0.85,
    };

    /** A long, repeatable mix of steps: loops, churn, denials, holds, reasoning and approvals of stops. */
    function script(length: number): ObservedEvent[] {
      let seed = 7;
      const next = (n: number): number => {
        seed = (seed * 1103515245 + 12345) % 2147483648;
        // The high bits: a power-of-two modulus leaves the low ones short cycles.
        return Math.floor(seed / 65536) % n;
      };
      const events: ObservedEvent[] = [];
      const add = (kind: string, payload: JsonObject): void => {
        const n = events.length;
        events.push({ event_id: `e${n}`, kind, timestamp: '', prev_hash: null, content_hash: `h${n}`, sequence: n + 1, step_id: null, micros: n, payload });
      };
      const steps: (() => void)[] = [];
      for (let i = 0; i < 5; i++) {
        const tool = ['search', 'fetch', 'pay'][next(3)] as string;
        const args = { q: next(2) };
        const outcome = next(6);
        steps.push(() => {
          add('tool.intent', { tool, args });
          add('tool.call', { tool, args });
          if (outcome < 3) add('tool.result', { tool, result: { status: outcome === 0 ? 503 : 200 } });
          else if (outcome === 3) add('tool.error', { tool, error: { code: ['E1', 'E2'][next(2)] as string } });
          else if (outcome === 4) add('constraint.violated', { rule: { type: 'deny_tools' }, message: 'no' });
          else add('constraint.approval_required', { request_id: 'r' });
        });
      }
      // Runs of one step, of two alternating and of three in turn, between steps at random.
      while (events.length < length) {
        const period = 1 + next(3);
        const first = next(5);
        for (let i = 0, rounds = 1 + next(6); i < rounds * period; i++) (steps[(first + (i % period)) % 5] as () => void)();
        if (next(2) === 0) add('constraint.approved', { request_id: next(3) === 0 ? 'another' : 'stop' });
        if (next(6) === 0) {
          // A call never made before: a new action, which ends a run of repeated reasoning.
          add('tool.intent', { tool: 'search', args: { q: events.length } });
          add('tool.result', { tool: 'search', result: {} });
        }
        for (let i = next(4); i > 0; i--) add('model.reasoning', { text: next(2) === 0 ? 'I will check the same thing again' : 'I will check the same thing again now' });
      }
      return events;
    }

    /** Hands events to an observer, recording what it does (ids follow the event it answers). */
    function feed(observer: BreakObserver, events: readonly ObservedEvent[], from: number, done: unknown[]): void {
      for (let at = from; at < events.length; at++) {
        const event = events[at] as ObservedEvent;
        const context: ObserverContext = {
          emit: (kind, payload) => {
            done.push({ at, kind, payload });
            return { event_id: `alert${at}`, kind, timestamp: '', prev_hash: null, content_hash: `a${at}`, sequence: 0 };
          },
          stop: (request) => {
            done.push({ at, stop: request });
            return 'stop';
          },
          now: () => at,
        };
        observer.onEvent(event, context);
      }
    }

    it('takes up where it was saved: a restored observer answers every later event as one that saw them all', () => {
      const events = script(400);
      const whole: unknown[] = [];
      feed(new BreakObserver('break', settings), events, 0, whole);
      // Every pattern alerted, soft and hard, and the session was stopped and let go again.
      expect(new Set(whole.map((done) => ((done as { payload?: JsonObject }).payload?.['pattern'] as string | undefined) ?? 'stop'))).toEqual(new Set(['ACTION_FIXATION', 'OSCILLATION_CYCLE', 'CHOREOGRAPHY_CYCLE', 'ERROR_STATUS_CHURN', 'REASONING_INERTIA', 'stop']));
      for (let split = 1; split < events.length; split++) {
        const first = new BreakObserver('break', settings);
        const before: unknown[] = [];
        feed(first, events.slice(0, split), 0, before);
        const second = new BreakObserver('break', settings);
        expect(second.restoreState(JSON.parse(JSON.stringify(first.saveState())))).toBe(true);
        const after: unknown[] = [];
        feed(second, events, split, after);
        expect([...before, ...after]).toEqual(whole);
      }
    });

    it('refuses a state saved with other settings, or not saved by it, and is unchanged by the refusal', () => {
      const first = new BreakObserver('break', settings);
      feed(first, script(60), 0, []);
      const saved = first.saveState();
      const other = new BreakObserver('break', { ...settings, window: 10 });
      expect(other.restoreState(JSON.parse(JSON.stringify(saved)))).toBe(false);
      const fresh = new BreakObserver('break', settings);
      const untouched = JSON.stringify(fresh.saveState());
      for (const bad of [null, 'state', { ...(saved as JsonObject), ring: [] }, { ...(saved as JsonObject), count: -1 }, { ...(saved as JsonObject), open: { tool: 1 } }]) {
        expect(fresh.restoreState(bad)).toBe(false);
        expect(JSON.stringify(fresh.saveState())).toBe(untouched);
      }
    });
  });
});
