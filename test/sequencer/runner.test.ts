import * as fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { agent, type AgentOptions } from '../../src/session/agent.js';
import { ApprovalRequiredError, InvalidOptionError, PolicyDeniedError } from '../../src/errors.js';
import { readTrail } from '../../src/spine/trail-reader.js';
import { verifyTrail } from '../../src/spine/verify.js';
import type { AuraEvent } from '../../src/spine/record.js';
import type { Session } from '../../src/session/session.js';
import { expectAuraRejection } from '../helpers/errors.js';
import { countingIds, steppingClock } from '../helpers/sessions.js';
import { expectProfileRefused } from '../helpers/profiles.js';
import { tempDir } from '../helpers/temp.js';

function open(sequencer: Record<string, unknown>, extra: AgentOptions = {}): Session {
  return agent('acme/pipeline', { home: tempDir(), sequencer, ...extra }).session({ ids: countingIds(), clock: steppingClock() });
}

/** The sequencer events as `kind step_id status/attempt`, for reading the order at a glance. */
function steps(events: readonly AuraEvent[]): string[] {
  return events
    .filter((e) => e.kind.startsWith('sequencer.'))
    .map((e) => {
      const p = e.payload;
      const detail = e.kind === 'sequencer.step.start' ? `#${String(p['attempt'])}` : e.kind === 'sequencer.step.end' ? String(p['status']) : e.kind === 'sequencer.complete' ? (p['steps'] as string[]).join(',') : '';
      return `${e.kind.slice('sequencer.'.length)} ${e.step_id ?? '-'} ${detail}`.trim();
    });
}

function sequencerCheck(result: Awaited<ReturnType<Session['close']>>): Record<string, unknown> | undefined {
  return result.conformance.checks.find((check) => check.type === 'sequencer');
}

/** Counts the calls of each tool. */
function counter(): { calls: Record<string, number>; tool: (name: string, result: unknown) => () => unknown } {
  const calls: Record<string, number> = {};
  return {
    calls,
    tool: (name, result) => () => {
      calls[name] = (calls[name] ?? 0) + 1;
      return result;
    },
  };
}

describe('session.runSequencer', () => {
  it('runs the steps in declared order through the guarded path, and conformance passes', async () => {
    const session = open({
      steps: [
        { id: 'fetch', type: 'tool', ref: 'crm.lookup', config: { args: { id: 42 } } },
        { id: 'plan', type: 'prompt', ref: 'Draft a reply' },
        { id: 'tag', type: 'op', ref: 'label' },
        { id: 'store', type: 'skill', ref: 'notes', config: { tool: 'notes.save', args: { text: 'done' } } },
      ],
    });
    const { calls, tool } = counter();
    const run = await session.runSequencer({ 'crm.lookup': tool('crm.lookup', { found: true }), 'notes.save': tool('notes.save', { saved: 1 }) });
    expect(run).toEqual({ completed: ['fetch', 'plan', 'tag', 'store'], steps: 4, results: { fetch: { found: true }, plan: { prompt: 'Draft a reply', status: 'declared' }, tag: { op: 'label', status: 'ok' }, store: { saved: 1 } } });
    expect(calls).toEqual({ 'crm.lookup': 1, 'notes.save': 1 });
    const result = await session.close();
    const events = readTrail(result.log_path).events;
    expect(steps(events)).toEqual([
      'step.start fetch #1', 'step.end fetch ok',
      'step.start plan #1', 'prompt plan', 'step.end plan ok',
      'step.start tag #1', 'op tag', 'step.end tag ok',
      'step.start store #1', 'step.end store ok',
      'complete - fetch,plan,tag,store',
    ]);
    const call = events.find((e) => e.kind === 'tool.call' && e.payload['tool'] === 'notes.save');
    expect([call?.step_id, call?.payload['step_id'], call?.payload['skill_id']]).toEqual(['store', 'store', 'notes']);
    expect(sequencerCheck(result)).toMatchObject({ passed: true, missing_steps: [], order_ok: true });
    expect(result.audit_report.verdict).toBe('pass');
  });

  it('retries a failing step with its backoff, then succeeds, and conformance passes', async () => {
    const session = open({ steps: [{ id: 'sync', type: 'tool', ref: 'ledger.sync', retry: { max: 3, backoff: 'exponential', delay_ms: 10 } }] });
    let attempts = 0;
    const waits: number[] = [];
    await session.runSequencer(
      {
        'ledger.sync': () => {
          if (++attempts < 3) throw new Error(`ledger timed out (${attempts})`);
          return { synced: true };
        },
      },
      { sleep: async (ms) => void waits.push(ms) },
    );
    expect(waits).toEqual([10, 20]);
    const result = await session.close();
    const events = readTrail(result.log_path).events;
    expect(steps(events)).toEqual(['step.start sync #1', 'step.end sync error', 'step.start sync #2', 'step.end sync error', 'step.start sync #3', 'step.end sync ok', 'complete - sync']);
    expect(events.filter((e) => e.kind === 'sequencer.step.end').map((e) => e.payload['error'] ?? null)).toEqual(['Error: ledger timed out (1)', 'Error: ledger timed out (2)', null]);
    expect(sequencerCheck(result)).toMatchObject({ passed: true });
    expect(result.audit_report.scorecard.sequencer).toEqual({ steps_started: 3, step_errors: 2 });
  });

  it('waits linearly with linear backoff, and with a real timer by default', async () => {
    const session = open({ steps: [{ id: 'sync', type: 'tool', ref: 'ledger.sync', retry: { max: 2, backoff: 'linear', delay_ms: 15 } }] });
    let attempts = 0;
    const started = performance.now();
    await session.runSequencer({ 'ledger.sync': () => (++attempts < 3 ? Promise.reject(new Error('busy')) : 'ok') });
    // 15 ms after the first attempt, 30 ms after the second.
    expect(performance.now() - started).toBeGreaterThanOrEqual(44);
    await session.close();
  });

  it('throws the last error after the last attempt, and the run fails conformance with the step failures', async () => {
    const session = open({ steps: [{ id: 'sync', type: 'tool', ref: 'ledger.sync', retry: { max: 1 } }, { id: 'report', type: 'op' }] });
    await expect(session.runSequencer({ 'ledger.sync': () => { throw new Error('ledger down'); } }, { sleep: async () => undefined })).rejects.toThrow('ledger down');
    const result = await session.close();
    expect(steps(readTrail(result.log_path).events)).toEqual(['step.start sync #1', 'step.end sync error', 'step.start sync #2', 'step.end sync error']);
    expect(sequencerCheck(result)).toMatchObject({ passed: false, missing_steps: ['sync', 'report'] });
    expect(result.audit_report.findings.map((f) => f.kind)).toEqual(['STEP_FAILED', 'STEP_FAILED', 'SEQUENCER_INCOMPLETE']);
    expect(result.audit_report.verdict).toBe('fail');
  });

  it('does not retry a call policy denied: the same call would be denied again', async () => {
    const session = open({ steps: [{ id: 'wipe', type: 'tool', ref: 'shell.exec', retry: { max: 3 } }] }, { rules: [{ type: 'deny_tools', tools: ['shell.*'] }] });
    const { calls, tool } = counter();
    await expectAuraRejection(() => session.runSequencer({ 'shell.exec': tool('shell.exec', 'ran') }, { sleep: async () => undefined }), PolicyDeniedError, 'POLICY_DENIED');
    expect(calls).toEqual({});
    const events = readTrail((await session.close()).log_path).events;
    expect(steps(events)).toEqual(['step.start wipe #1', 'step.end wipe error']);
  });

  it('skips a step whose when-condition does not hold, and conformance counts it as done', async () => {
    const session = open({
      steps: [
        { id: 'check', type: 'tool', ref: 'inventory.check' },
        { id: 'order', type: 'tool', ref: 'inventory.order', when: { prior_step: 'check', field: 'stock.low', equals: true } },
        { id: 'notify', type: 'op', when: { prior_step: 'check', field: 'stock.count', truthy: true } },
      ],
    });
    const { calls, tool } = counter();
    const run = await session.runSequencer({ 'inventory.check': tool('inventory.check', { stock: { low: false, count: 7 } }), 'inventory.order': tool('inventory.order', 'ordered') });
    expect(calls).toEqual({ 'inventory.check': 1 });
    expect(run.results['order']).toEqual({ status: 'skipped', reason: 'stock.low=false expected true' });
    const result = await session.close();
    expect(steps(readTrail(result.log_path).events)).toEqual([
      'step.start check #1', 'step.end check ok',
      'step.start order #0', 'step.skipped order', 'step.end order skipped',
      'step.start notify #1', 'op notify', 'step.end notify ok',
      'complete - check,order,notify',
    ]);
    expect(sequencerCheck(result)).toMatchObject({ passed: true, missing_steps: [] });
  });

  it('runs a subflow\'s steps inside its step, with their own complete, and conformance passes', async () => {
    const session = open({
      steps: [
        { id: 'prepare', type: 'op' },
        { id: 'notify', type: 'subflow', config: { steps: [{ id: 'mail', type: 'tool', ref: 'mail.send' }, { id: 'sms', type: 'tool', ref: 'sms.send', depends_on: ['mail'] }] } },
        { id: 'close', type: 'op', depends_on: ['sms'] },
      ],
    });
    const { calls, tool } = counter();
    const run = await session.runSequencer({ 'mail.send': tool('mail.send', 'sent'), 'sms.send': tool('sms.send', 'sent') });
    expect(run.results['notify']).toEqual({ status: 'ok', completed: ['mail', 'sms'] });
    expect(calls).toEqual({ 'mail.send': 1, 'sms.send': 1 });
    const result = await session.close();
    expect(steps(readTrail(result.log_path).events)).toEqual([
      'step.start prepare #1', 'op prepare', 'step.end prepare ok',
      'step.start notify #1',
      'step.start mail #1', 'step.end mail ok',
      'step.start sms #1', 'step.end sms ok',
      'complete notify mail,sms',
      'step.end notify ok',
      'step.start close #1', 'op close', 'step.end close ok',
      'complete - prepare,notify,close',
    ]);
    expect(sequencerCheck(result)).toMatchObject({ passed: true, missing_steps: [], order_ok: true });
  });

  it('stops at a human_confirm gate, and after approval resumes from the gated step without running earlier steps again', async () => {
    const session = open({
      steps: [
        { id: 'fetch', type: 'tool', ref: 'crm.lookup' },
        { id: 'draft', type: 'op' },
        { id: 'send', type: 'tool', ref: 'mail.send', gates: ['human_confirm'] },
        { id: 'archive', type: 'tool', ref: 'crm.archive' },
      ],
    });
    const { calls, tool } = counter();
    const tools = { 'crm.lookup': tool('crm.lookup', { found: true }), 'mail.send': tool('mail.send', 'sent'), 'crm.archive': tool('crm.archive', 'archived') };
    const held = await expectAuraRejection(() => session.runSequencer(tools), ApprovalRequiredError, 'APPROVAL_REQUIRED');
    expect(held.data?.request_id).toBe('sequencer.gate.send');
    expect(calls).toEqual({ 'crm.lookup': 1 });

    session.approve('sequencer.gate.send', { principal: 'ops@acme.test' });
    const run = await session.runSequencer(tools);
    expect(run.completed).toEqual(['fetch', 'draft', 'send', 'archive']);
    expect(calls).toEqual({ 'crm.lookup': 1, 'mail.send': 1, 'crm.archive': 1 });

    const result = await session.close();
    const events = readTrail(result.log_path).events;
    expect(steps(events)).toEqual([
      'step.start fetch #1', 'step.end fetch ok',
      'step.start draft #1', 'op draft', 'step.end draft ok',
      'step.start send #1', 'step.end send ok',
      'step.start archive #1', 'step.end archive ok',
      'complete - fetch,draft,send,archive',
    ]);
    const required = events.find((e) => e.kind === 'constraint.approval_required');
    expect(required?.payload).toMatchObject({ request_id: 'sequencer.gate.send', rule: { type: 'human_confirm', step_id: 'send' } });
    expect(events.findIndex((e) => e.kind === 'constraint.approved')).toBeGreaterThan(events.indexOf(required as AuraEvent));
    expect(sequencerCheck(result)).toMatchObject({ passed: true, missing_steps: [], order_ok: true });
    expect(result.conformance.passed).toBe(true);
    expect(result.audit_report.verdict).toBe('pass');
    const verified = verifyTrail(result.log_path, result.summary.chain);
    expect([verified.hash_chain_valid, verified.complete, verified.reason]).toEqual([true, true, undefined]);
  });

  it('resumes a step whose call policy held for approval, once approved, and conformance passes', async () => {
    const session = open(
      { steps: [{ id: 'fetch', type: 'tool', ref: 'crm.lookup' }, { id: 'pay', type: 'tool', ref: 'payment.pay', config: { args: { amount: 120 } } }] },
      { rules: [{ type: 'confirm_before', tools: ['payment.pay'] }] },
    );
    const { calls, tool } = counter();
    const tools = { 'crm.lookup': tool('crm.lookup', 1), 'payment.pay': tool('payment.pay', 'paid') };
    const held = await expectAuraRejection(() => session.runSequencer(tools), ApprovalRequiredError, 'APPROVAL_REQUIRED');
    session.approve(held.data?.request_id ?? '');
    await session.runSequencer(tools);
    expect(calls).toEqual({ 'crm.lookup': 1, 'payment.pay': 1 });
    const result = await session.close();
    expect(steps(readTrail(result.log_path).events)).toEqual(['step.start fetch #1', 'step.end fetch ok', 'step.start pay #1', 'step.start pay #1', 'step.end pay ok', 'complete - fetch,pay']);
    expect(sequencerCheck(result)).toMatchObject({ passed: true });
    expect(result.conformance.passed).toBe(true);
  });

  it('asks again, under the same request, at a gate that was not approved', async () => {
    const session = open({ steps: [{ id: 'confirm', type: 'gate', ref: 'human_confirm' }] });
    await expectAuraRejection(() => session.runSequencer({}), ApprovalRequiredError, 'APPROVAL_REQUIRED');
    await expectAuraRejection(() => session.runSequencer({}), ApprovalRequiredError, 'APPROVAL_REQUIRED');
    session.approve('sequencer.gate.confirm');
    expect((await session.runSequencer({})).results['confirm']).toEqual({ gate: 'human_confirm', status: 'ok' });
    const events = readTrail((await session.close()).log_path).events;
    expect(events.filter((e) => e.kind === 'constraint.approval_required').map((e) => e.payload['request_id'])).toEqual(['sequencer.gate.confirm', 'sequencer.gate.confirm']);
  });

  it('resumes after a step that failed every attempt, from that step', async () => {
    const session = open({ steps: [{ id: 'fetch', type: 'tool', ref: 'crm.lookup' }, { id: 'sync', type: 'tool', ref: 'ledger.sync' }] });
    const { calls, tool } = counter();
    let down = true;
    const tools = { 'crm.lookup': tool('crm.lookup', 1), 'ledger.sync': () => (down ? Promise.reject(new Error('down')) : 'synced') };
    await expect(session.runSequencer(tools)).rejects.toThrow('down');
    down = false;
    await session.runSequencer(tools);
    expect(calls).toEqual({ 'crm.lookup': 1 });
    const result = await session.close();
    expect(sequencerCheck(result)).toMatchObject({ passed: true });
  });

  it('masks the calls of a step that declares middleware: [pii_mask], and only those', async () => {
    const session = open({
      steps: [
        { id: 'lookup', type: 'tool', ref: 'crm.lookup', middleware: ['pii_mask'], config: { args: { email: 'jane.doe@example.com' } } },
        { id: 'log', type: 'tool', ref: 'audit.log', config: { args: { note: 'ops@example.org' } } },
      ],
    });
    const seen: unknown[] = [];
    const run = await session.runSequencer({ 'crm.lookup': (live) => (seen.push(live), { phone: '+351 912 345 678' }), 'audit.log': () => 'ok' });
    expect(seen).toEqual([{ email: 'jane.doe@example.com' }]);
    expect(run.results['lookup']).toEqual({ phone: '+*** *** *** *78' });
    const events = readTrail((await session.close()).log_path).events;
    const applied = events.filter((e) => e.kind === 'middleware.applied');
    expect(applied.map((e) => [e.step_id, e.payload['boundary'], e.payload['fields']])).toEqual([
      ['lookup', 'tool.args', ['args.email']],
      ['lookup', 'tool.result', ['result.phone']],
    ]);
    expect(events.find((e) => e.kind === 'tool.call' && e.step_id === 'log')?.payload['args']).toEqual({ note: 'ops@example.org' });
  });

  it('masks the error a masked step records, so a failure quoting personal data leaks nothing', async () => {
    const session = open({ steps: [{ id: 'mail', type: 'tool', ref: 'mail.send', middleware: ['pii_mask'], config: { args: { to: 'customer:4711' } } }] });
    await expect(session.runSequencer({ 'mail.send': () => { throw new Error('bounced: jane.doe@example.com'); } })).rejects.toThrow('bounced: j***@e***.com');
    const closed = await session.close();
    expect(fs.readFileSync(closed.log_path, 'utf8')).not.toContain('jane.doe@example.com');
    const end = readTrail(closed.log_path).events.find((e) => e.kind === 'sequencer.step.end');
    expect(end?.payload).toEqual({ status: 'error', attempt: 1, error: 'Error: bounced: j***@e***.com' });
    // The step fails with the error its call handed back, masked already: masked once, where the call recorded it.
    const applied = readTrail(closed.log_path).events.filter((e) => e.kind === 'middleware.applied');
    expect(applied.map((e) => [e.payload['boundary'], e.payload['fields'], e.payload['for_event']])).toEqual([
      ['tool.result', ['error.message'], readTrail(closed.log_path).events.find((e) => e.kind === 'tool.error')?.event_id],
    ]);
  });

  it('refuses tools missing from the host before recording anything, and a session without a sequencer', async () => {
    const session = open({ steps: [{ id: 'a', type: 'tool', ref: 'crm.lookup' }, { id: 'b', type: 'subflow', config: { steps: [{ id: 'c', type: 'tool', ref: 'mail.send' }] } }] });
    const before = session.eventCount;
    const error = await expectAuraRejection(() => session.runSequencer({ 'crm.lookup': () => 1 }), InvalidOptionError, 'INVALID_OPTION');
    expect(error.message).toMatch(/missing: mail\.send/);
    expect(session.eventCount).toBe(before);
    await session.close();
    const bare = agent('acme/bare', { home: tempDir() }).session();
    await expectAuraRejection(() => bare.runSequencer({}), InvalidOptionError, 'INVALID_OPTION');
    await bare.close();
  });
});

describe('the sequencer profile block', () => {
  const bad: [string, string, number, string, RegExp][] = [
    ['an unknown step type', 'sequencer:\n  steps:\n    - id: a\n      type: lambda\n', 4, 'sequencer.steps[0].type', /unknown step type "lambda"/],
    ['a duplicate id', 'sequencer:\n  steps:\n    - { id: a, type: op }\n    - { id: a, type: op }\n', 4, 'sequencer.steps[1].id', /duplicate step id: a/],
    ['depends_on a later step', 'sequencer:\n  steps:\n    - id: a\n      type: op\n      depends_on: [b]\n    - { id: b, type: op }\n', 5, 'sequencer.steps[0].depends_on[0]', /"b" is not a step that runs before this one/],
    ['depends_on an unknown step', 'sequencer:\n  steps:\n    - { id: a, type: op }\n    - id: b\n      type: op\n      depends_on: [a, z]\n', 6, 'sequencer.steps[1].depends_on[1]', /"z" is not a step/],
    ['a subflow step depending on its own subflow', 'sequencer:\n  steps:\n    - id: s\n      type: subflow\n      config:\n        steps:\n          - { id: c, type: op, depends_on: [s] }\n', 7, 'sequencer.steps[0].config.steps[0].depends_on[0]', /"s" is not a step/],
    ['when on a later step', 'sequencer:\n  steps:\n    - id: a\n      type: op\n      when: { prior_step: b, field: ok, truthy: true }\n    - { id: b, type: op }\n', 5, 'sequencer.steps[0].when.prior_step', /not a step that runs before/],
    ['an unknown gate', 'sequencer:\n  steps:\n    - id: a\n      type: op\n      gates: [constitution]\n', 5, 'sequencer.steps[0].gates[0]', /expected one of human_confirm/],
    ['an unknown backoff', 'sequencer:\n  steps:\n    - id: a\n      type: op\n      retry: { max: 2, backoff: fibonacci }\n', 5, 'sequencer.steps[0].retry.backoff', /none, linear, exponential/],
    ['a negative retry count', 'sequencer:\n  steps:\n    - id: a\n      type: op\n      retry:\n        max: -1\n', 6, 'sequencer.steps[0].retry.max', /integer from 0/],
    ['a tool step without a tool', 'sequencer:\n  steps:\n    - id: a\n      type: tool\n', 3, 'sequencer.steps[0].ref', /names its tool/],
    ['middleware on an op step', 'sequencer:\n  steps:\n    - id: a\n      type: op\n      middleware: [pii_mask]\n', 5, 'sequencer.steps[0].middleware', /tool and skill steps only/],
    ['an unknown middleware', 'sequencer:\n  steps:\n    - id: a\n      type: tool\n      ref: t\n      middleware: [compress]\n', 6, 'sequencer.steps[0].middleware[0]', /expected one of pii_mask/],
    ['an empty subflow', 'sequencer:\n  steps:\n    - id: a\n      type: subflow\n', 3, 'sequencer.steps[0].config.steps', /non-empty list/],
    ['a typo in a step key', 'sequencer:\n  steps:\n    - id: a\n      type: op\n      depend_on: [x]\n', 5, 'sequencer.steps[0].depend_on', /unknown key for a step/],
  ];

  it.each(bad)('refuses %s at load with a ProfileError naming file, line and key', (_, text, line, key, message) => {
    expectProfileRefused(text, line, key, message);
  });
});
