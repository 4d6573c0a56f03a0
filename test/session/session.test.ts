import * as fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { agent, parseAgentRef } from '../../src/session/agent.js';
import { isoTimestamp, randomIds } from '../../src/session/ids.js';
import { PythonNumber } from '../../src/spine/python-number.js';
import { verifyTrail } from '../../src/spine/verify.js';
import { InvalidAgentRefError, InvalidOptionError, InvalidSessionIdError, NonJsonValueError, SessionClosedError } from '../../src/errors.js';
import { expectAuraError, expectAuraRejection } from '../helpers/errors.js';
import { pythonVerify } from '../helpers/python.js';
import { countingIds, lines, openSession, steppingClock } from '../helpers/sessions.js';
import { tempDir } from '../helpers/temp.js';

function records(trail: string): Record<string, unknown>[] {
  return lines(trail).map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('Session', () => {
  describe('when opened', () => {
    it('writes membrane.ingress then session.open with the payloads Aura writes', async () => {
      const { session } = openSession({ agent: { purpose: 'Answer questions', name: 'tester', skills: ['search'] } });
      const [ingress, open] = records(session.files.trail);
      expect(ingress?.['kind']).toBe('membrane.ingress');
      expect(ingress?.['payload']).toMatchObject({
        membrane: 'ingress',
        mode: 'script',
        snapshot_hash: session.openSnapshotHash,
        context: { agent_ref: 'acme/tester', name: 'tester', purpose: 'Answer questions', policy_version: '1', ids: { tenant: 'acme' }, skills: ['search'] },
        skills: ['search'],
        observers: [],
        agent_ref: 'acme/tester',
        policy_version: '1',
      });
      expect(open?.['kind']).toBe('session.open');
      expect(open?.['payload']).toMatchObject({ mode: 'script', snapshot_hash: session.openSnapshotHash, purpose: 'Answer questions', agent_ref: 'acme/tester', declared_rules: [] });
      expect(open?.['prev_hash']).toBe(ingress?.['content_hash']);
      expect(open?.['parent_id']).toBe(ingress?.['event_id']);
      expect(ingress?.['agent_ids']).toEqual({ aura_id: session.agent.auraId, agent_ref: 'acme/tester', name: 'tester', ids: { tenant: 'acme' }, policy_version: '1' });
      await session.close();
    });

    it('fixes session_id and trace_id for every event', async () => {
      const { session } = openSession();
      session.emit('turn.start', { input: 'hi' });
      const result = await session.close();
      const all = records(result.log_path);
      expect(new Set(all.map((r) => r['session_id']))).toEqual(new Set([session.id]));
      expect(new Set(all.map((r) => r['trace_id']))).toEqual(new Set([session.traceId]));
      expect(result.trace_id).toBe(session.traceId);
    });

    it('records the snapshot hash Aura computes for the same profile', () => {
      // Reference §3.6 vector, with rules and purpose as there.
      const ag = agent('acme/bot', { home: tempDir(), auraId: '01J0000000000000000000000Z', name: 'bot', purpose: 'héllo', rules: [{ type: 'deny_tools', tools: ['x'] }] });
      expect(ag.snapshotHash()).toBe('a4ebdcdcfac5908f');
    });

    it('refuses an unknown mode instead of falling back', () => {
      const ag = agent('acme/tester', { home: tempDir() });
      const error = expectAuraError(() => ag.session({ mode: 'batch' as 'task' }), InvalidOptionError, 'INVALID_OPTION');
      expect(error.message).toContain("'script', 'task', 'continuous'");
      expect(fs.existsSync(ag.config.paths.sessions) ? fs.readdirSync(ag.config.paths.sessions) : []).toEqual([]);
    });

    it('accepts each of the three modes and records it', async () => {
      for (const mode of ['script', 'task', 'continuous'] as const) {
        const { session } = openSession({ session: { mode } });
        const result = await session.close();
        expect(result.summary.mode).toBe(mode);
      }
    });

    it('records the session key a client declares, in session.open and the summary: a label, never a path', async () => {
      for (const sessionKey of ['my-client-1', '../../etc/passwd', 'ünïcode ✓']) {
        const { session } = openSession({ session: { sessionKey } });
        expect(records(session.files.trail)[1]?.['payload']).toMatchObject({ session_key: sessionKey });
        expect((await session.close()).summary.session_key).toBe(sessionKey);
      }
      const { session } = openSession();
      expect(records(session.files.trail)[1]?.['payload']).not.toHaveProperty('session_key');
      expect((await session.close()).summary.session_key).toBeNull();
    });

    it('refuses a session key that is not a label, before anything is written', () => {
      const ag = agent('acme/tester', { home: tempDir() });
      for (const sessionKey of ['', 'a\nb', 'x'.repeat(257), 42]) {
        const error = expectAuraError(() => ag.session({ sessionKey: sessionKey as string }), InvalidOptionError, 'INVALID_OPTION');
        expect(error.message).toContain('a label of 1 to 256 characters');
      }
      expect(fs.existsSync(ag.config.paths.sessions) ? fs.readdirSync(ag.config.paths.sessions) : []).toEqual([]);
    });

    it('refuses an id source that gives a hostile session id', () => {
      const ag = agent('acme/tester', { home: tempDir() });
      const ids = { ...countingIds(), sessionId: () => '../../etc/passwd' };
      expectAuraError(() => ag.session({ ids }), InvalidSessionIdError, 'INVALID_SESSION_ID');
    });

    it('keeps the aura_id of a ref across processes through the registry', () => {
      const home = tempDir();
      const first = agent('acme/keeper', { home });
      const again = agent('acme/keeper', { home, purpose: 'changed in code' });
      expect(again.auraId).toBe(first.auraId);
      expect(again.profile.purpose).toBe('changed in code');
      expect(agent('acme/other', { home }).auraId).not.toBe(first.auraId);
      expect(first.auraId).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    });
  });

  describe('emit', () => {
    it('copies the payload at emit time', async () => {
      const { session } = openSession();
      const payload = { args: { q: 'before' } };
      session.emit('tool.call', payload);
      payload.args.q = 'after';
      const result = await session.close();
      expect(records(result.log_path)[2]?.['payload']).toEqual({ args: { q: 'before' } });
    });

    it('returns what it recorded, chained to the previous event', async () => {
      const { session } = openSession();
      const a = session.emit('a', {});
      const b = session.emit('b', { x: 1 }, { stepId: 'step-1', telemetry: { latency_ms: 12.5 } });
      expect(b.prev_hash).toBe(a.content_hash);
      expect(b.sequence).toBe(4);
      const last = records(session.files.trail)[3];
      expect(last).toMatchObject({ step_id: 'step-1', telemetry: { latency_ms: 12.5 }, content_hash: b.content_hash, event_id: b.event_id });
      await session.close();
    });

    describe('when the payload is not JSON', () => {
      const cyclic: Record<string, unknown> = {};
      cyclic['me'] = cyclic;
      const cases: [string, Record<string, unknown>][] = [
        ['a cycle', cyclic],
        ['a BigInt', { n: 1n }],
        ['NaN', { n: Number.NaN }],
        ['a function', { f: () => 0 }],
        ['a lone surrogate', { s: '\udfff' }],
      ];
      for (const [name, payload] of cases) {
        it(`throws NonJsonValueError for ${name}, writes nothing and loses nothing`, async () => {
          const { session } = openSession();
          session.emit('before', { ok: true });
          const size = fs.statSync(session.files.trail).size;
          expectAuraError(() => session.emit('bad', payload), NonJsonValueError, 'NON_JSON_VALUE');
          expect(fs.statSync(session.files.trail).size).toBe(size);
          session.emit('after', { ok: true });
          const result = await session.close();
          expect(result.chain).toMatchObject({ hash_chain_valid: true, complete: true, events: 5 });
          expect(records(result.log_path).map((r) => r['kind'])).toEqual(['membrane.ingress', 'session.open', 'before', 'after', 'session.close']);
        });
      }

      it('refuses an array or a primitive as the payload, and an empty kind', async () => {
        const { session } = openSession();
        expectAuraError(() => session.emit('x', [1] as unknown as Record<string, unknown>), NonJsonValueError, 'NON_JSON_VALUE');
        expectAuraError(() => session.emit('x', 'text' as unknown as Record<string, unknown>), NonJsonValueError, 'NON_JSON_VALUE');
        expectAuraError(() => session.emit('', {}), InvalidOptionError, 'INVALID_OPTION');
        for (const kind of ['session.close', 'session.open', 'membrane.ingress']) expectAuraError(() => session.emit(kind, {}), InvalidOptionError, 'INVALID_OPTION');
        expectAuraError(() => session.emit('x\ud800', {}), NonJsonValueError, 'NON_JSON_VALUE');
        expect(session.eventCount).toBe(2);
        await session.close();
      });
    });

    it('writes a trail that CPython verifies, over unicode, floats and large integers', async () => {
      const { session } = openSession();
      session.emit('unicode', { '😀': 'astral key', '\uffff': 'bmp key', ctl: '\u0000\u001f\t\n', text: 'ΕΛΛΗΝΙΚΑ 漢字 שלום', 'é': 1 });
      session.emit('floats', { tenth: 0.1, tiny: 1e-7, big: 1.5e16, min: 5e-324, float_big: new PythonNumber('float', '1.5e+16'), one: new PythonNumber('float', '1.0') });
      session.emit('ints', { max_safe: 9007199254740991, p60: 2 ** 60, huge: new PythonNumber('int', '1000000000000000000000000000000'), neg: -42 });
      const result = await session.close();
      expect(pythonVerify(result.log_path)).toEqual({ valid: true, events: 6 });
      expect(verifyTrail(result.log_path)).toMatchObject({ hash_chain_valid: true, complete: true, events: 6 });
    });

    it('never lets timestamps go backwards within a session', async () => {
      let t = Date.UTC(2026, 0, 1) * 1000;
      const readings = [t, t + 10, t - 5_000_000, t + 20];
      const { session } = openSession({ session: { clock: () => readings.shift() ?? (t += 1) } });
      session.emit('a', {});
      session.emit('b', {});
      const stamps = records((await session.close()).log_path).map((r) => String(r['timestamp']));
      expect([...stamps].sort()).toEqual(stamps);
    });
  });

  describe('when closed', () => {
    it('records session.close and refuses emit, approve and a second close with SessionClosedError', async () => {
      const { session } = openSession();
      const result = await session.close({ reason: 'done' });
      expect(records(result.log_path).at(-1)).toMatchObject({ kind: 'session.close', payload: { reason: 'done', goal_reached: false } });
      expectAuraError(() => session.emit('late', {}), SessionClosedError, 'SESSION_CLOSED');
      expectAuraError(() => session.approve('req_1', { principal: 'ops' }), SessionClosedError, 'SESSION_CLOSED');
      expectAuraError(() => session.completeGoal(), SessionClosedError, 'SESSION_CLOSED');
      await expectAuraRejection(() => session.close(), SessionClosedError, 'SESSION_CLOSED');
      expect(lines(result.log_path)).toHaveLength(3);
      expect(fs.existsSync(`${result.log_path}.lock`)).toBe(false);
    });

    it('closes once at the end of an `await using` block', async () => {
      const home = tempDir();
      let trail = '';
      {
        await using run = agent('acme/tester', { home }).session({ ids: countingIds(), clock: steppingClock() });
        run.emit('turn.start', { input: 'hi' });
        trail = run.files.trail;
      }
      expect(records(trail).map((r) => r['kind'])).toEqual(['membrane.ingress', 'session.open', 'turn.start', 'session.close']);
    });

    it('records goal_reached after completeGoal', async () => {
      const { session } = openSession();
      session.completeGoal({ sent: true });
      const result = await session.close();
      const kinds = records(result.log_path).slice(2);
      expect(kinds.map((r) => r['kind'])).toEqual(['task.complete', 'session.close']);
      expect(kinds[0]?.['payload']).toEqual({ sent: true });
      expect(kinds[1]?.['payload']).toEqual({ reason: 'normal', goal_reached: true });
    });

    it('gives the same trail bytes for the same ids, clock and events', async () => {
      const write = async (): Promise<string> => {
        const { session } = openSession({ agent: { auraId: '01J0000000000000000000000Z' } });
        session.emit('turn.start', { input: 'same' });
        return fs.readFileSync((await session.close()).log_path, 'utf8');
      };
      expect(await write()).toBe(await write());
    });
  });
});

describe('parseAgentRef', () => {
  it('accepts slug and tenant/slug, trimmed and lower-cased', () => {
    expect(parseAgentRef('  Acme/Bot-1.v2_x ')).toBe('acme/bot-1.v2_x');
    expect(parseAgentRef('solo')).toBe('solo');
  });

  const bad = ['', 'a/b/c', '/slug', 'tenant/', '-lead', 'sp ace', 'caf\u00e9', 'dis\u212Aey', '../x', 'a\\b'];
  for (const ref of bad) {
    it(`refuses ${JSON.stringify(ref)}`, () => {
      expectAuraError(() => parseAgentRef(ref), InvalidAgentRefError, 'INVALID_AGENT_REF');
    });
  }
});

describe('isoTimestamp', () => {
  it("prints Python's isoformat, with no fraction when the microseconds are zero", () => {
    expect(isoTimestamp(Date.UTC(2026, 0, 1) * 1000)).toBe('2026-01-01T00:00:00+00:00');
    expect(isoTimestamp(Date.UTC(2026, 0, 1) * 1000 + 1)).toBe('2026-01-01T00:00:00.000001+00:00');
    expect(isoTimestamp(Date.UTC(2026, 7, 22, 13, 17, 20) * 1000 + 123456)).toBe('2026-08-22T13:17:20.123456+00:00');
  });
});

describe('randomIds', () => {
  it('draws UUID4s as 32 lowercase hex, none twice, across refills of its pool', () => {
    const drawn = Array.from({ length: 1000 }, (_, i) => (i % 2 === 0 ? randomIds.eventId() : randomIds.traceId()));
    for (const id of drawn) expect(id).toMatch(/^[0-9a-f]{12}4[0-9a-f]{3}[89ab][0-9a-f]{15}$/);
    expect(new Set(drawn).size).toBe(drawn.length);
    expect(randomIds.sessionId()).toMatch(/^aura_sess_[0-9a-f]{12}$/);
  });
});
