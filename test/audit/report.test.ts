import { describe, expect, it } from 'vitest';
import type { Finding } from '../../src/audit/detector.js';
import { verdictReason } from '../../src/audit/report.js';
import { openSession } from '../helpers/sessions.js';

const finding = (kind: string, severity: Finding['severity']): Finding => ({ kind, severity, message: kind, event_ids: [] });

describe('verdictReason', () => {
  it('says nothing for a pass', () => {
    expect(verdictReason('pass', [finding('PII_MASKED', 'info')], { passed: true })).toBeNull();
  });

  it('names what failed conformance and the critical findings of a fail', async () => {
    const { session } = openSession({
      agent: { rules: [{ type: 'deny_tools', tools: ['shell.*'] }, { type: 'confirm_before', tools: ['mail.send'] }], sequencer: { steps: [{ id: 'fetch', type: 'op' }, { id: 'pay', type: 'op' }] } },
    });
    for (const tool of ['shell.exec', 'shell.rm', 'mail.send']) await session.tool(tool, {}, () => 'ran').catch(() => undefined);
    session.emit('conformance.drift', { reason: 'off goal', tool: 'crypto.buy' });
    const result = await session.close();
    expect(result.audit_report.verdict).toBe('fail');
    expect(verdictReason('fail', [...result.audit_report.findings, finding('HASH_CHAIN_BROKEN', 'critical')], result.conformance)).toBe(
      'conformance: 2 deny_tools violations, 1 approval pending, sequencer steps not completed: fetch pay, 1 goal drift; critical: HASH_CHAIN_BROKEN',
    );
  });

  it('names the warnings of a warn', () => {
    expect(verdictReason('warn', [finding('STEP_FAILED', 'warn'), finding('PII_MASKED', 'info'), finding('STEP_FAILED', 'warn'), finding('OBSERVER_ALERT', 'warn')], { passed: true })).toBe('warn: STEP_FAILED, OBSERVER_ALERT');
  });

  it("reads a Python Aura summary's conformance: its violation events and its sequencer check", () => {
    const conformance = {
      passed: false,
      violations: [{ kind: 'constraint.violated', payload: { rule: { type: 'max_tokens_per_step', limit: 10 } } }, { kind: 'sequencer.conformance', missing: ['c'], order_ok: true }],
      checks: [{ type: 'max_tokens_per_step', declared: true }, { type: 'sequencer', declared_steps: ['a', 'b', 'c'], completed_steps: ['a', 'b'], passed: false, violations: [{ kind: 'sequencer.conformance', missing: ['c'], order_ok: true }] }],
    };
    expect(verdictReason('fail', [], conformance)).toBe('conformance: 1 max_tokens_per_step violation, sequencer steps not completed: c');
    expect(verdictReason('fail', [], { passed: false })).toBe('conformance: failed');
  });
});
