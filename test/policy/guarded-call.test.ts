import * as fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { agent, type AgentOptions } from '../../src/session/agent.js';
import type { Session, SessionOptions } from '../../src/session/session.js';
import { verifyTrail } from '../../src/spine/verify.js';
import { ApprovalError, ApprovalRequiredError, IdentityRequiredError, InvalidOptionError, NonJsonValueError, PolicyDeniedError, SecretNotFoundError } from '../../src/errors.js';
import { refusalOf } from '../../src/policy/refusal.js';
import { canonicalJson } from '../../src/spine/canonical.js';
import { sha256 } from '../../src/spine/hash.js';
import { everyText, expectAuraError } from '../helpers/errors.js';
import { pythonVerify } from '../helpers/python.js';
import { countingIds, lines, steppingClock } from '../helpers/sessions.js';
import { tempDir } from '../helpers/temp.js';

type Row = { kind: string; payload: Record<string, unknown>; agent_ids: Record<string, unknown>; telemetry: Record<string, unknown>; event_id: string };

function open(options: AgentOptions = {}, session: SessionOptions = {}): Session {
  return agent('acme/guarded', { home: tempDir(), ...options }).session({ ids: countingIds(), clock: steppingClock(), ...session });
}

function rows(session: Session): Row[] {
  return lines(session.files.trail).map((line) => JSON.parse(line) as Row);
}

function kinds(session: Session): string[] {
  return rows(session)
    .slice(2)
    .map((row) => row.kind);
}

async function rejection(action: () => Promise<unknown>): Promise<unknown> {
  try {
    await action();
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

describe('Session.tool', () => {
  describe('when the call is allowed', () => {
    it('records tool.intent, tool.call, constraint.passed and tool.result with latency and attempt', async () => {
      const session = open({ rules: [{ type: 'allow_tools', tools: ['search.*'] }] });
      const result = await session.tool('search.web', { q: 'aura' }, (args) => ({ hits: [String(args['q'])] }));
      expect(result).toEqual({ hits: ['aura'] });
      expect(kinds(session)).toEqual(['tool.intent', 'tool.call', 'constraint.passed', 'tool.result']);
      const [intent, call, passed, done] = rows(session).slice(2) as Row[];
      expect(intent?.payload).toMatchObject({ tool: 'search.web', args: { q: 'aura' }, membrane: 'egress' });
      expect(call?.telemetry).toEqual({ attempt: 1 });
      expect(passed?.payload).toEqual({ results: [{ passed: true, message: 'tool allowed: search.web', rule: { type: 'allow_tools', tools: ['search.*'] }, audit_only: false }], for_event: call?.event_id });
      expect(done?.payload).toMatchObject({ tool: 'search.web', result: { hits: ['aura'] } });
      expect(done?.telemetry['attempt']).toBe(1);
      expect(done?.telemetry['latency_ms']).toBeTypeOf('number');
      await session.close();
    });

    it('records a throwing tool as tool.error with the error name and message, and rethrows it', async () => {
      const session = open();
      const error = await rejection(() => session.tool('fs.read', { path: '/x' }, () => { throw new RangeError('no such file'); }));
      expect(error).toBeInstanceOf(RangeError);
      expect(rows(session).at(-1)).toMatchObject({ kind: 'tool.error', payload: { tool: 'fs.read', error: { name: 'RangeError', message: 'no such file' } } });
      await session.close();
    });

    it('records an answer the trail cannot hold (a cycle, a BigInt, nested too deep) as why, and hands the answer back: the tool ran', async () => {
      const session = open();
      const cycle: Record<string, unknown> = { ok: true };
      cycle['self'] = cycle;
      let deep: unknown = 'x';
      for (let i = 0; i < 600; i++) deep = [deep];
      for (const answer of [cycle, { size: 10n }, deep]) expect(await session.tool('fs.stat', { path: '/x' }, () => answer)).toBe(answer);
      const results = rows(session).filter((r) => r.kind === 'tool.result').map((r) => String((r.payload['result'] as { not_recorded?: string }).not_recorded));
      expect(results).toHaveLength(3);
      expect(results[0]).toMatch(/^payload\.result\.self is not JSON: .*(cycle|itself)/);
      expect(results[1]).toMatch(/^payload\.result\.size is not JSON: .*BigInt/i);
      expect(results[2]).toMatch(/is not JSON: nested deeper than 500 levels$/);
      const result = await session.close();
      expect(result.chain).toMatchObject({ hash_chain_valid: true, complete: true });
    });

    it('counts attempts of the same call', async () => {
      const session = open();
      await session.tool('t', { a: 1 }, () => 1);
      await session.tool('t', { a: 1 }, () => 1);
      await session.tool('t', { a: 2 }, () => 1);
      expect(rows(session).filter((r) => r.kind === 'tool.call').map((r) => r.telemetry['attempt'])).toEqual([1, 2, 1]);
      await session.close();
    });
  });

  describe('through a host adapter', () => {
    it('dispatches by name through the same guarded path, and refuses an unknown tool', async () => {
      const session = open({ rules: [{ type: 'deny_tools', tools: ['shell.*'] }] });
      const host = session.host({ 'search.web': (live) => ({ q: live['q'] }), 'shell.exec': () => 'never' }, { skillId: 'toolbox' });
      expect(await host.call('search.web', { q: 'x' })).toEqual({ q: 'x' });
      expect(await rejection(() => host.call('shell.exec', {}))).toBeInstanceOf(PolicyDeniedError);
      expect(await rejection(() => host.call('nope' as 'search.web', {}))).toMatchObject({ code: 'INVALID_OPTION' });
      expect(rows(session).filter((r) => r.kind === 'tool.call').map((r) => r.payload['skill_id'])).toEqual(['toolbox']);
      await session.close();
    });
  });

  describe('when policy denies the call', () => {
    const cases: [string, AgentOptions, string, RegExp][] = [
      ['deny_tools', { rules: [{ type: 'deny_tools', tools: ['shell.*'] }] }, 'shell.exec', /Tool denied: shell\.exec/],
      ['allow_tools', { rules: [{ type: 'allow_tools', tools: ['search.*'] }] }, 'shell.exec', /Tool not allowed: shell\.exec/],
      ['default_tool_policy deny', { defaultToolPolicy: 'deny' }, 'shell.exec', /no rule allows it/],
    ];
    for (const [rule, options, tool, message] of cases) {
      it(`never runs the tool, records constraint.violated and throws PolicyDeniedError (${rule})`, async () => {
        const session = open(options);
        let ran = false;
        const error = await rejection(() => session.tool(tool, { cmd: 'rm -rf /' }, () => (ran = true)));
        expect(ran).toBe(false);
        expect(error).toBeInstanceOf(PolicyDeniedError);
        const denied = error as PolicyDeniedError;
        expect(denied.code).toBe('POLICY_DENIED');
        expect(denied.message).toMatch(message);
        expect(kinds(session)).toEqual(['tool.intent', 'constraint.violated']);
        const violation = rows(session).at(-1) as Row;
        expect(denied.data?.event_id).toBe(violation.event_id);
        expect(violation.payload).toMatchObject({ message: denied.message, audit_only: false, event: { kind: 'tool.call', payload: { tool } } });
        expect((violation.payload['rule'] as Record<string, unknown>)['type']).toBe(denied.data?.rule_type);
        // The host recovers: the session goes on.
        await session.tool('search.web', {}, () => 1).catch(() => undefined);
        const result = await session.close();
        expect(result.audit_report.findings.map((f) => f.kind)).toContain('POLICY_VIOLATION');
        expect(result.audit_report.verdict).toBe('fail');
      });
    }

    it('lets deny beat allow and approval wherever it is listed', async () => {
      const session = open({
        rules: [
          { type: 'allow_tools', tools: ['*'] },
          { type: 'confirm_before', tools: ['mail.*'] },
          { type: 'deny_tools', tools: ['mail.send'] },
        ],
      });
      const error = await rejection(() => session.tool('mail.send', { to: 'x' }, () => 1));
      expect(error).toBeInstanceOf(PolicyDeniedError);
      expect(kinds(session)).not.toContain('constraint.approval_required');
      await session.close();
    });

    it('enforces max_tokens_per_step on emitted model calls, and refuses a token count that is not a number', async () => {
      const session = open({ rules: [{ type: 'max_tokens_per_step', limit: 100 }] });
      session.emit('model.call', { tokens: 100 });
      expectAuraError(() => session.emit('model.call', { tokens: 101 }), PolicyDeniedError, 'POLICY_DENIED');
      const error = expectAuraError(() => session.emit('turn.end', { tokens: 'many' }), PolicyDeniedError, 'POLICY_DENIED');
      expect(error.message).toContain('not a number');
      expect(rows(session).filter((r) => r.kind === 'constraint.violated').map((r) => r.payload['message'])).toEqual(['Token limit exceeded: 101 > 100', 'Token count tokens is not a number']);
      await session.close();
    });
  });

  describe('approvals', () => {
    const gated: AgentOptions = { rules: [{ type: 'confirm_before', tools: ['mail.send'] }] };

    async function request(session: Session, args: Record<string, unknown>): Promise<ApprovalRequiredError> {
      const error = await rejection(() => session.tool('mail.send', args, () => 'sent'));
      expect(error).toBeInstanceOf(ApprovalRequiredError);
      return error as ApprovalRequiredError;
    }

    it('binds the approval to the exact call: the approved retry runs once, with the principal on the record', async () => {
      const session = open(gated);
      const pending = await request(session, { to: 'a@example.test', body: 'hi' });
      const required = rows(session).at(-1) as Row;
      expect(required.kind).toBe('constraint.approval_required');
      expect(required.payload).toMatchObject({ request_id: pending.data?.request_id, digest: pending.data?.digest, pending_event: { kind: 'tool.call' } });
      expect(pending.data?.request_id).toMatch(/^req_[0-9a-f]{10}$/);
      expect(pending.data?.digest).toMatch(/^[0-9a-f]{64}$/);

      session.approve(pending.data?.request_id ?? '', { principal: 'ops@example.test' });
      expect(rows(session).at(-1)?.payload).toMatchObject({ request_id: pending.data?.request_id, principal: 'ops@example.test', tool: 'mail.send' });
      expect(await session.tool('mail.send', { to: 'a@example.test', body: 'hi' }, () => 'sent')).toBe('sent');
      const call = rows(session).filter((r) => r.kind === 'tool.call').at(-1) as Row;
      expect(call.payload).toMatchObject({ principal: 'ops@example.test', approval: { request_id: pending.data?.request_id, principal: 'ops@example.test' } });

      // Used once: the same call again needs a new approval.
      const again = await request(session, { to: 'a@example.test', body: 'hi' });
      expect(again.data?.request_id).not.toBe(pending.data?.request_id);
      expectAuraError(() => session.approve(pending.data?.request_id ?? ''), ApprovalError, 'APPROVAL_INVALID');
      await session.close();
    });

    it('never lets an approval for one set of arguments release another', async () => {
      const session = open(gated);
      const pending = await request(session, { to: 'a@example.test' });
      session.approve(pending.data?.request_id ?? '', { principal: 'ops' });
      const other = await request(session, { to: 'attacker@example.test' });
      expect(other.data?.request_id).not.toBe(pending.data?.request_id);
      expect(other.data?.digest).not.toBe(pending.data?.digest);
      // The approved call still goes through afterwards.
      expect(await session.tool('mail.send', { to: 'a@example.test' }, () => 'sent')).toBe('sent');
      await session.close();
    });

    it('reuses the pending request while the same call waits', async () => {
      const session = open(gated);
      const first = await request(session, { to: 'a' });
      const second = await request(session, { to: 'a' });
      expect(second.data?.request_id).toBe(first.data?.request_id);
      const result = await session.close();
      expect(result.conformance.pending_approvals).toEqual([first.data?.request_id]);
      expect(result.audit_report.findings.map((f) => f.kind)).toContain('APPROVAL_PENDING');
    });

    it('records a digest that the trail and a guess cannot recompute: a password the trail redacts is not brute-forced from it', async () => {
      const session = open({ rules: [{ type: 'confirm_before', tools: ['db.exec'] }] });
      const args = { command: 'mysql -uroot -pSummer2024 -e "DROP TABLE x"', password: 'Summer2024' };
      const held = (await rejection(() => session.tool('db.exec', args, () => 'dropped'))) as ApprovalRequiredError;
      const required = rows(session).find((r) => r.kind === 'constraint.approval_required') as Row;
      const recorded = (required.payload['pending_event'] as { payload: { args: { command: string } } }).payload.args;
      expect(recorded).toEqual({ command: 'mysql -uroot -p[redacted] -e "DROP TABLE x"', password: '[redacted]' });
      expect(required.payload['digest']).toBe(held.data?.digest);
      // What one who reads only the trail tries: each guess put back where it says [redacted], hashed as a call is.
      for (const guess of ['letmein', 'Summer2024']) {
        const guessed = { command: recorded.command.replace('[redacted]', guess), password: guess };
        expect(sha256(canonicalJson({ args: guessed, session_id: session.id, tool: 'db.exec' }))).not.toBe(held.data?.digest);
      }
      session.approve(held.data?.request_id ?? '', { principal: 'ops' });
      expect(await session.tool('db.exec', args, () => 'dropped')).toBe('dropped');
      const closed = await session.close();
      expect(fs.readFileSync(closed.log_path, 'utf8')).not.toContain('Summer2024');
    });

    it('refuses to approve an unknown or already approved request', async () => {
      const session = open(gated);
      expect(expectAuraError(() => session.approve('req_0000000000'), ApprovalError, 'APPROVAL_INVALID').data?.reason).toBe('unknown_request');
      const pending = await request(session, { to: 'a' });
      session.approve(pending.data?.request_id ?? '', { principal: 'ops' });
      expect(expectAuraError(() => session.approve(pending.data?.request_id ?? ''), ApprovalError, 'APPROVAL_INVALID').data?.reason).toBe('already_approved');
      await session.close();
    });
  });

  describe('capabilities and secrets', () => {
    const SECRET = 'pay-key-7c1f0e9a55d24b18a6';
    const payments: AgentOptions = {
      capabilities: [{ id: 'pay-a', tool: 'payment.pay', allowed: { vendor: 'vendor-a', currency: ['EUR', 'USD'] }, inject: [{ ref: 'env:PAY_KEY', as: 'api_key' }, { ref: 'env:PAY_KEY', as: 'headers.Authorization', prefix: 'Bearer ' }] }],
    };
    const broker = { resolve: (ref: string) => (ref === 'env:PAY_KEY' ? SECRET : undefined) };

    it('injects the secret into the live arguments only: it appears nowhere in the trail, summary or spans', async () => {
      const session = open(payments, { secretBroker: broker });
      let seen: Record<string, unknown> = {};
      const result = await session.tool(
        'payment.pay',
        { vendor: 'vendor-a', currency: 'EUR', amount: 12.5, api_key: 'agent-supplied-token-123' },
        (live) => {
          seen = live;
          return { receipt: `charged with ${String(live['api_key'])}`, echo: live };
        },
        { capabilityId: 'pay-a' },
      );
      expect(seen).toEqual({ vendor: 'vendor-a', currency: 'EUR', amount: 12.5, api_key: SECRET, headers: { Authorization: `Bearer ${SECRET}` } });
      // The tool had the secret; the caller (the model's side) gets its answer without it.
      expect(result.receipt).toBe('charged with [redacted]');
      expect(result.echo).toMatchObject({ api_key: '[redacted]', headers: { Authorization: '[redacted]' } });
      const injected = rows(session).find((r) => r.kind === 'capability.injected');
      expect(injected?.payload).toEqual({
        capability_id: 'pay-a',
        tool: 'payment.pay',
        skill_id: null,
        injected: [
          { secret_ref: 'env:PAY_KEY', inject_as: 'api_key' },
          { secret_ref: 'env:PAY_KEY', inject_as: 'headers.Authorization' },
        ],
      });
      const closed = await session.close();
      for (const file of [closed.log_path, closed.exports.summary ?? '', closed.exports.otel ?? '']) {
        const text = fs.readFileSync(file, 'utf8');
        expect(text, file).not.toContain(SECRET);
        expect(text, file).not.toContain('agent-supplied-token-123');
      }
      expect(fs.readFileSync(closed.log_path, 'utf8')).toContain('charged with [redacted]');
      expect(closed.chain).toMatchObject({ hash_chain_valid: true, complete: true });
      expect(pythonVerify(closed.log_path).valid).toBe(true);
    });

    it('keeps back an answer it cannot walk whole (nested too deep) when a secret was injected into the call: the secret could be in it', async () => {
      const session = open(payments, { secretBroker: broker });
      let deep: unknown = SECRET;
      for (let i = 0; i < 600; i++) deep = [deep];
      const error = await rejection(() => session.tool('payment.pay', { vendor: 'vendor-a', currency: 'EUR' }, () => ({ echo: deep }), { capabilityId: 'pay-a' }));
      expect(error).toBeInstanceOf(NonJsonValueError);
      expect(String((error as Error).message)).toMatch(/^the tool ran, but its answer is kept back: .* cleared of the secrets injected into the session's calls$/);
      expect(String((error as Error).message)).not.toContain(SECRET);
      expect(rows(session).at(-1)).toMatchObject({ kind: 'tool.result', payload: { result: { not_recorded: expect.stringMatching(/nested deeper than 500 levels/) } } });
      const closed = await session.close();
      expect(fs.readFileSync(closed.log_path, 'utf8')).not.toContain(SECRET);
    });

    describe('what a tool throws', () => {
      type Live = Record<string, unknown>;
      const key = (live: Live): string => String(live['api_key']);
      const header = (live: Live): string => (live['headers'] as { Authorization: string }).Authorization;
      const pay = (session: Session, fail: (live: Live) => never): Promise<unknown> => rejection(() => session.tool('payment.pay', { vendor: 'vendor-a', currency: 'EUR' }, fail, { capabilityId: 'pay-a' }));
      class HttpError extends Error {
        constructor(
          message: string,
          readonly status: number,
          readonly config: unknown,
        ) {
          super(message);
          this.name = 'HttpError';
        }
      }
      const failures: [string, (live: Live) => never][] = [
        ['its message', (live) => { throw new Error(`rejected key ${key(live)}`); }],
        ['its name', (live) => { throw Object.assign(new Error('x'), { name: `E_${key(live)}` }); }],
        ['its cause', (live) => { throw new Error('boom', { cause: { header: header(live) } }); }],
        ["its cause's message", (live) => { throw new Error('outer', { cause: new TypeError(`inner ${key(live)}`) }); }],
        ['a field of its own', (live) => { throw Object.assign(new Error('request failed'), { config: { headers: live['headers'] } }); }],
        ['a field that is not plain data', (live) => { throw new HttpError('request failed', 401, { headers: new Map([['Authorization', header(live)]]) }); }],
        ['a field with the secret as its key', (live) => { throw Object.assign(new Error('request failed'), { seen: { [key(live)]: true } }); }],
        ['an error among the errors of an AggregateError', (live) => { throw new AggregateError([new Error(`no ${key(live)}`)], 'all failed'); }],
        ['a frozen error', (live) => { throw Object.freeze(new Error(`rejected key ${key(live)}`)); }],
        ['a getter', (live) => { throw Object.defineProperty(new Error('request failed'), 'auth', { get: () => header(live), enumerable: true }); }],
        ['a field beside one that refers back to the error', (live) => { const error = Object.assign(new Error('request failed'), { token: key(live) }); throw Object.assign(error, { self: error }); }],
        ['an error that throws when its fields are read', (live) => { throw new Proxy(new Error(`rejected key ${key(live)}`), { ownKeys: () => { throw new Error('not now'); } }); }],
        ['a thrown string', (live) => { throw `failed with ${key(live)}`; }],
        ['a thrown object', (live) => { throw { status: 401, header: header(live) }; }],
      ];
      for (const [where, fail] of failures) {
        it(`hands the caller the failure without the injected secret in ${where}, and records none`, async () => {
          const session = open(payments, { secretBroker: broker });
          const error = await pay(session, fail);
          expect(error).toBeInstanceOf(Error);
          expect(everyText(error)).not.toContain(SECRET);
          expect(rows(session).at(-1)?.kind).toBe('tool.error');
          const closed = await session.close();
          expect(fs.readFileSync(closed.log_path, 'utf8')).not.toContain(SECRET);
        });
      }

      it('keeps the class, code and plain fields a caller relies on, and hands an error that holds no secret on as thrown', async () => {
        const session = open(payments, { secretBroker: broker });
        const http = await pay(session, (live) => { throw new HttpError(`401 for ${key(live)}`, 401, { headers: live['headers'], retry: false }); });
        expect(http).toBeInstanceOf(HttpError);
        expect(http).toMatchObject({ name: 'HttpError', message: '401 for [redacted]', status: 401, config: { headers: { Authorization: '[redacted]' }, retry: false } });
        expect((http as Error).stack).toMatch(/^HttpError: 401 for \[redacted\]\n\s+at /);
        const aura = await pay(session, (live) => { throw new InvalidOptionError('vendor', key(live), 'a vendor id'); });
        expect(aura).toBeInstanceOf(InvalidOptionError);
        expect(aura).toMatchObject({ code: 'INVALID_OPTION', data: { option: 'vendor', value: '[redacted]' } });
        expect(everyText(aura)).not.toContain(SECRET);
        const plain = new RangeError('no such vendor');
        expect(await pay(session, () => { throw plain; })).toBe(plain);
        expect(await pay(session, () => { throw 'declined'; })).toBe('declined');
        await session.close();
      });
    });

    it('keeps back such an answer in a later call that injects nothing, and hands on one not JSON that it can clear (a NaN)', async () => {
      const session = open(payments, { secretBroker: broker });
      await session.tool('payment.pay', { vendor: 'vendor-a', currency: 'EUR' }, () => ({ ok: true }), { capabilityId: 'pay-a' });
      let deep: unknown = SECRET;
      for (let i = 0; i < 600; i++) deep = [deep];
      const error = await rejection(() => session.tool('lookup', {}, () => ({ echo: deep })));
      expect(error).toBeInstanceOf(NonJsonValueError);
      expect(String((error as Error).message)).not.toContain(SECRET);
      expect(await session.tool('lookup', {}, () => ({ rate: NaN, note: `key ${SECRET}` }))).toEqual({ rate: NaN, note: 'key [redacted]' });
      const closed = await session.close();
      expect(fs.readFileSync(closed.log_path, 'utf8')).not.toContain(SECRET);
    });

    const misses: [string, Record<string, unknown>, string | undefined, RegExp][] = [
      ['no capability id', { vendor: 'vendor-a', currency: 'EUR' }, undefined, /Capability id required for gated tool: payment\.pay/],
      ['an unknown capability', { vendor: 'vendor-a', currency: 'EUR' }, 'pay-z', /Unknown capability: pay-z/],
      ['an argument outside the scope', { vendor: 'vendor-b', currency: 'EUR' }, 'pay-a', /scope mismatch: vendor="vendor-b"/],
    ];
    for (const [what, args, capabilityId, message] of misses) {
      it(`denies ${what}, and injects nothing`, async () => {
        const session = open(payments, { secretBroker: broker });
        const error = await rejection(() => session.tool('payment.pay', args, () => 1, capabilityId === undefined ? {} : { capabilityId }));
        expect(error).toBeInstanceOf(PolicyDeniedError);
        expect((error as Error).message).toMatch(message);
        expect(kinds(session)).not.toContain('capability.injected');
        const result = await session.close();
        expect(result.audit_report.findings[0]).toMatchObject({ kind: 'CAPABILITY_DENIED', severity: 'warn' });
      });
    }

    it('at spectrum low records the miss as audit-only, runs the call and injects nothing', async () => {
      const session = open({ ...payments, spectrum: { level: 'low' } }, { secretBroker: broker });
      let seen: Record<string, unknown> = {};
      await session.tool('payment.pay', { vendor: 'vendor-b', currency: 'EUR' }, (live) => (seen = live), { capabilityId: 'pay-a' });
      expect(seen['api_key']).toBeUndefined();
      expect(kinds(session)).toEqual(['tool.intent', 'constraint.violated', 'tool.call', 'tool.result']);
      expect(rows(session)[3]?.payload['audit_only']).toBe(true);
      const result = await session.close();
      expect(result.conformance.passed).toBe(true);
      expect(result.audit_report.findings[0]).toMatchObject({ kind: 'CAPABILITY_AUDIT', severity: 'info', audit_only: true });
    });

    it('records an unresolved secret as tool.error and throws SecretNotFoundError naming only the ref', async () => {
      const session = open(payments, { secretBroker: { resolve: () => undefined } });
      let ran = false;
      const error = await rejection(() => session.tool('payment.pay', { vendor: 'vendor-a', currency: 'USD' }, () => (ran = true), { capabilityId: 'pay-a' }));
      expect(ran).toBe(false);
      expect(error).toBeInstanceOf(SecretNotFoundError);
      expect((error as SecretNotFoundError).data).toEqual({ ref: 'env:PAY_KEY', capability_id: 'pay-a' });
      expect(rows(session).at(-1)).toMatchObject({ kind: 'tool.error', payload: { error: 'secret_broker_unresolved', secret_ref: 'env:PAY_KEY', capability_id: 'pay-a' } });
      const result = await session.close();
      expect(result.audit_report.findings.map((f) => f.kind)).toContain('SECRET_BROKER_ERROR');
    });

    it('resolves env: refs from the environment by default', async () => {
      process.env['AURA_TEST_CAPABILITY_SECRET'] = 'from-the-environment-42';
      try {
        const session = open({ capabilities: [{ id: 'c', tool: 't', secret: 'env:AURA_TEST_CAPABILITY_SECRET' }] });
        let given: unknown;
        await session.tool('t', {}, (live) => (given = live['token']), { capabilityId: 'c' });
        expect(given).toBe('from-the-environment-42');
        await session.close();
      } finally {
        delete process.env['AURA_TEST_CAPABILITY_SECRET'];
      }
    });
  });

  describe('redaction', () => {
    it('records secret-like keys at any depth, in any case, as [redacted], and keeps token counts', async () => {
      const session = open();
      session.emit('http.request', {
        headers: { Authorization: 'Bearer abc', 'X-Api-Key': 'k1', cookie: 'c' },
        body: { user: { password: 'p', apiKey: 'k2', db_password: 'p2', nested: [{ client_secret: 's', refresh_token: 'r' }] } },
        tokens: 120,
        total_tokens: 300,
        prompt_tokens: 80,
        primary_key: 'user_id',
      });
      const payload = rows(session).at(-1)?.payload;
      expect(payload).toEqual({
        headers: { Authorization: '[redacted]', 'X-Api-Key': '[redacted]', cookie: '[redacted]' },
        body: { user: { password: '[redacted]', apiKey: '[redacted]', db_password: '[redacted]', nested: [{ client_secret: '[redacted]', refresh_token: '[redacted]' }] } },
        tokens: 120,
        total_tokens: 300,
        prompt_tokens: 80,
        primary_key: 'user_id',
      });
      const result = await session.close();
      expect(verifyTrail(result.log_path).hash_chain_valid).toBe(true);
    });

    it('redacts a secret-like key even when its value is not JSON', async () => {
      const session = open();
      session.emit('x', { token: 10n });
      expectAuraError(() => session.emit('x', { other: 10n }), NonJsonValueError, 'NON_JSON_VALUE');
      expect(rows(session).at(-1)?.payload).toEqual({ token: '[redacted]' });
      await session.close();
    });
  });

  describe('schema checks', () => {
    const schema = { type: 'object', required: ['amount'], properties: { amount: { type: 'number', exclusiveMinimum: 0 } }, additionalProperties: false };

    it('denies a call whose arguments do not match, with the problems listed', async () => {
      const session = open({ rules: [{ type: 'schema_check', tool: 'payment.*', schema }] });
      let ran = false;
      const error = await rejection(() => session.tool('payment.pay', { amount: -3, memo: 'x' }, () => (ran = true)));
      expect(ran).toBe(false);
      expect((error as Error).message).toBe('Schema validation failed for payment.pay on tool.call: (root): must NOT have additional properties (memo); amount: must be > 0');
      expect(await session.tool('payment.pay', { amount: 3 }, () => 'ok')).toBe('ok');
      expect(await session.tool('other.tool', { anything: true }, () => 'ok')).toBe('ok');
      const result = await session.close();
      expect(result.audit_report.findings.map((f) => f.kind)).toEqual(['SCHEMA_VIOLATION']);
      expect(result.audit_report.scorecard.tools.schema_violations).toBe(1);
      expect(result.conformance.checks.find((c) => c.type === 'schema')).toMatchObject({ declared_schema_rules: 1, schema_violations: 1, passed: false });
    });

    it('checks results after the call: the result is recorded, then the violation, and the call throws', async () => {
      const session = open({ variables: { schema_refs: { receipt: { on: 'result', schema: { type: 'object', required: ['id'] } } } }, rules: [{ type: 'schema_check', ref: 'receipt' }] });
      const error = await rejection(() => session.tool('payment.pay', {}, () => ({ status: 'ok' })));
      expect(error).toBeInstanceOf(PolicyDeniedError);
      expect(kinds(session)).toEqual(['tool.intent', 'tool.call', 'tool.result', 'constraint.violated']);
      const open_ = rows(session)[1]?.payload['spectrum'] as Record<string, unknown>;
      expect(open_['schema']).toEqual({ refs: 1, active_rules: 1, auto_enforced: false });
      await session.close();
    });
  });

  describe('schema checks of results', () => {
    const SECRET = 'pay-key-7c1f0e9a55d24b18a6';
    const closedObject = { type: 'object', properties: { accounts: { type: 'object', additionalProperties: false } } };

    it('refuses an answer by what the trail holds: the caller is not told the injected secret a key of it is, and hears that the tool ran', async () => {
      const session = open(
        { capabilities: [{ id: 'pay-a', tool: 'payment.pay', inject: [{ ref: 'env:PAY_KEY', as: 'api_key' }] }], rules: [{ type: 'schema_check', tool: 'payment.pay', on: 'result', schema: closedObject }] },
        { secretBroker: { resolve: () => SECRET } },
      );
      let ran = false;
      const error = await rejection(() => session.tool('payment.pay', {}, (live) => ((ran = true), { accounts: { [String(live['api_key'])]: 1 } }), { capabilityId: 'pay-a' }));
      expect(ran).toBe(true);
      expect(error).toBeInstanceOf(PolicyDeniedError);
      const denied = error as PolicyDeniedError;
      const violation = rows(session).find((r) => r.kind === 'constraint.violated') as Row;
      expect(denied.message).toBe('Schema validation failed for payment.pay on tool.result: accounts: must NOT have additional properties ([redacted])');
      expect(denied.message).toBe(violation.payload['message']);
      expect(denied.data).toMatchObject({ tool: 'payment.pay', kind: 'tool.result', event_id: violation.event_id });
      expect(everyText(denied)).not.toContain(SECRET);
      const refusal = refusalOf(denied, (id) => `approve ${id}`).text;
      expect(refusal).toContain('The tool ran');
      expect(refusal).not.toContain('did not run');
      const closed = await session.close();
      expect(fs.readFileSync(closed.log_path, 'utf8')).not.toContain(SECRET);
    });

    it('masks the personal data a refusal names, for the caller as on the trail', async () => {
      const contacts = { type: 'object', properties: { contacts: { type: 'object', additionalProperties: { type: 'object' } } } };
      const session = open({ middleware: { pii_mask: { strategy: 'redact' } }, rules: [{ type: 'schema_check', tool: 'crm.lookup', on: 'result', schema: contacts }] });
      const error = await rejection(() => session.tool('crm.lookup', { q: 'acme' }, () => ({ contacts: { 'alice.smith@example.com': 'VIP' } })));
      expect(error).toBeInstanceOf(PolicyDeniedError);
      expect((error as Error).message).toBe('Schema validation failed for crm.lookup on tool.result: [email]: must be object');
      expect((error as Error).message).toBe(rows(session).find((r) => r.kind === 'constraint.violated')?.payload['message']);
      expect(everyText(error)).not.toContain('alice.smith');
      const closed = await session.close();
      expect(fs.readFileSync(closed.log_path, 'utf8')).not.toContain('alice.smith');
    });
  });

  describe('spectrum', () => {
    it('at high allows only the declared skills and requires a verified operator', async () => {
      const options: AgentOptions = { skills: ['search.web'], spectrum: { level: 'high' } };
      const home = tempDir();
      const ag = agent('acme/high', { home, ...options });
      expectAuraError(() => ag.session(), IdentityRequiredError, 'IDENTITY_REQUIRED');
      const unverified = expectAuraError(() => ag.session({ operator: { subject: 'ops@example.test' } }), IdentityRequiredError, 'IDENTITY_REQUIRED');
      expect(unverified.data).toEqual({ reason: 'operator_not_verified', source: 'level_default:high' });
      expect(fs.existsSync(ag.config.paths.sessions) ? fs.readdirSync(ag.config.paths.sessions) : []).toEqual([]);

      const session = ag.session({ operator: { subject: 'ops@example.test', verified: true, email: 'ops@example.test' } });
      expect(await session.tool('search.web', {}, () => 1)).toBe(1);
      expect(await rejection(() => session.tool('shell.exec', {}, () => 1))).toBeInstanceOf(PolicyDeniedError);
      const opened = rows(session)[1]?.payload['spectrum'] as Record<string, unknown>;
      expect(opened).toMatchObject({ level: 'high', coat: 'tight', enforcement_rule_count: 1, verified_identity_required: true, verified_identity_required_source: 'level_default:high' });
      expect(rows(session)[0]?.payload['spectrum']).toEqual({ level: 'high', coat: 'tight', services: ['monitor'], planes: { audit: true, enforce: true, escalate: true } });
      await session.close();
    });

    it('at full requires every tool call to belong to a step', async () => {
      const session = open({ skills: ['t'], spectrum: { level: 'full', identity_required: false } });
      expect(await rejection(() => session.tool('t', {}, () => 1))).toBeInstanceOf(PolicyDeniedError);
      session.emit('tool.call', { tool: 't', step_id: 'fetch' });
      await session.close();
    });
  });

  describe('identity', () => {
    it('records identity.bound after session.open and carries the operator on later events; the summary nulls its PII', async () => {
      const session = open({}, { operator: { subject: 'ops@corp.com', email: 'ops@corp.com', name: 'Ops', verified: true } });
      session.emit('turn.start', {});
      expect(kinds(session).slice(0, 2)).toEqual(['identity.bound', 'turn.start']);
      const bound = rows(session)[2] as Row;
      expect(bound.payload['operator']).toMatchObject({ subject: 'ops@corp.com', method: 'manual', verified: true, subject_hash: '345d7f217b01ffc7' });
      expect((rows(session)[3]?.agent_ids['ids'] as Record<string, unknown>)['operator']).toMatchObject({ subject_hash: '345d7f217b01ffc7' });
      expect(rows(session)[1]?.agent_ids['ids']).not.toHaveProperty('operator');
      const result = await session.close();
      expect(result.summary.identity).toEqual({ operator: { verified: true, method: 'manual', subject: null, subject_hash: '345d7f217b01ffc7', email: null, name: null } });
      expect(fs.readFileSync(result.exports.summary ?? '', 'utf8')).not.toContain('ops@corp.com');
      expect(fs.readFileSync(result.exports.otel ?? '', 'utf8')).not.toContain('ops@corp.com');
    });
  });

  describe('escalations', () => {
    it('turns a violation into recorded intents, hands them to the handler, and records a failing handler', async () => {
      const delivered: string[] = [];
      const session = open(
        { rules: [{ type: 'deny_tools', tools: ['shell.*'] }], escalations: [{ id: 'violations', on: 'constraint.violated', actions: ['nudge:stay on task', 'email:ops@example.test', 'wake'] }] },
        {
          escalationHandler: (delivery) => {
            if (delivery.action.name === 'wake') throw new Error('pager is down');
            delivered.push(`${delivery.action.name}:${delivery.action.argument ?? ''}`);
          },
        },
      );
      await rejection(() => session.tool('shell.exec', {}, () => 1));
      expect(kinds(session)).toEqual(['tool.intent', 'constraint.violated', 'membrane.nudge', 'escalation.email', 'escalation.wake', 'escalation.fired']);
      expect(delivered).toEqual(['nudge:stay on task', 'email:ops@example.test']);
      const fired = rows(session).at(-1) as Row;
      expect(fired.payload).toMatchObject({
        trigger_kind: 'constraint.violated',
        rule_id: 'violations',
        actions: [
          { action: 'nudge', status: 'ok', message: 'stay on task' },
          { action: 'email', status: 'ok', to: 'ops@example.test' },
          { action: 'wake', status: 'error', error: 'Error: pager is down' },
        ],
      });
      const result = await session.close();
      expect(result.audit_report.findings.map((f) => f.kind)).toEqual(['POLICY_VIOLATION', 'ESCALATION_FIRED']);
    });

    it('pauses the session: the next tool call waits for approval of the pause', async () => {
      const session = open({ rules: [{ type: 'deny_tools', tools: ['shell.*'] }], escalations: [{ on: 'constraint.violated', actions: ['pause'] }] });
      await rejection(() => session.tool('shell.exec', {}, () => 1));
      const paused = await rejection(() => session.tool('search.web', {}, () => 1));
      expect(paused).toBeInstanceOf(ApprovalRequiredError);
      const requestId = (paused as ApprovalRequiredError).data?.request_id ?? '';
      expect(requestId).toMatch(/^escal_pause_[0-9a-f]{10}$/);
      session.approve(requestId, { principal: 'ops' });
      expect(await session.tool('search.web', {}, () => 'resumed')).toBe('resumed');
      await session.close();
    });
  });
});
