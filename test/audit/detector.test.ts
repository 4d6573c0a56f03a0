import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { detect } from '../../src/audit/detector.js';
import { FINDING_KINDS, severityOf, type KindEntry } from '../../src/audit/kinds.js';
import { PROBES, type Probe } from '../../src/audit/probes.js';
import { readSummary } from '../../src/audit/session-report.js';
import { buildConformance } from '../../src/audit/conformance.js';
import { readTrail } from '../../src/spine/trail-reader.js';
import { AuraError } from '../../src/errors.js';
import { openSession } from '../helpers/sessions.js';
import { tempDir } from '../helpers/temp.js';
import { AURA_PY } from '../helpers/fixtures.js';

/** The kinds some probe declares that the severity map lacks. */
function unmappedKinds(probes: readonly Probe[], map: Readonly<Record<string, unknown>>): string[] {
  return probes.flatMap((probe) => probe.kinds.filter((kind) => !Object.hasOwn(map, kind)));
}

/** A session that records every kind of event a probe reads. */
async function everything(): Promise<ReturnType<typeof readTrail>> {
  const { session } = openSession({ agent: { rules: [{ type: 'deny_tools', tools: ['shell.*'] }], sequencer: { steps: [{ id: 'fetch', type: 'op' }, { id: 'pay', type: 'op' }] } } });
  session.emit('sequencer.step.start', { type: 'skill', ref: 'ledger', attempt: 1 }, { stepId: 'fetch' });
  session.emit('sequencer.step.end', { status: 'error', error: 'ledger timed out' }, { stepId: 'fetch' });
  expect(() => session.emit('tool.call', { tool: 'shell.exec' })).toThrow();
  session.emit('constraint.violated', { message: 'scope mismatch', rule: { type: 'capability_scope' }, audit_only: true, event: { kind: 'tool.call', payload: { tool: 'pay' } } });
  session.emit('constraint.violated', { message: 'bad args', rule: { type: 'schema_check', ref: 'pay_args' }, audit_only: false, event: { kind: 'tool.call', payload: {} } });
  session.emit('constraint.approval_required', { request_id: 'req_0123456789', message: 'approve?', rule: { type: 'confirm_before' } });
  session.emit('tool.error', { tool: 'pay', error: 'secret_broker_unresolved', secret_ref: 'env:X', capability_id: 'c' });
  session.emit('conformance.drift', { reason: 'off goal', tool: 'crypto.buy', goal: 'invoices' });
  session.emit('slo.missed', { reason: 'late', required_tool: 'sql/append', deadline: '09:00' });
  session.emit('observer.alert', { pattern: 'OSCILLATION_CYCLE', observer_id: 'break' });
  session.emit('observer.alert', { pattern: 'REASONING_INERTIA', observer_id: 'break' });
  session.emit('observer.error', { observer_id: 'monitor', error: 'boom' });
  session.emit('middleware.applied', { redactions: 2, strategy: 'mask', entities_detected: { email: 2 } });
  session.emit('escalation.fired', { rule_id: 'r', trigger_kind: 'constraint.violated', actions: [] });
  const result = await session.close();
  return readTrail(result.log_path);
}

describe('the severity map', () => {
  it('has an entry for every kind any probe can emit', () => {
    expect(unmappedKinds(PROBES, FINDING_KINDS)).toEqual([]);
  });

  it('is what the exhaustiveness check rests on: removing a kind is caught', () => {
    const without: Record<string, unknown> = { ...FINDING_KINDS };
    delete without['POLICY_VIOLATION'];
    expect(unmappedKinds(PROBES, without)).toEqual(['POLICY_VIOLATION']);
  });

  it('gives an unknown kind info at run time', () => {
    expect(severityOf('SOMETHING_NEW')).toBe('info');
    expect(severityOf('HASH_CHAIN_BROKEN')).toBe('critical');
  });

  it('keeps critical for records that cannot be trusted', () => {
    const critical = Object.entries(FINDING_KINDS).filter(([, e]) => e.severity === 'critical').map(([k]) => k).sort();
    expect(critical).toEqual(['HASH_CHAIN_BROKEN', 'PUSH_REFUSED', 'SEAL_LOG_BROKEN', 'SIGNATURE_INVALID', 'SIGNATURE_MISSING', 'SUMMARY_MISMATCH', 'TRAIL_MISSING', 'TRAIL_TRUNCATED']);
  });

  it('marks every kind whose evidence is a text match as lexical: a goal word found or missed, repeated wording, a PII pattern', () => {
    const lexical = Object.entries(FINDING_KINDS as Readonly<Record<string, KindEntry>>).filter(([, e]) => e.lexical === true).map(([k]) => k).sort();
    expect(lexical).toEqual(['GOAL_DRIFT', 'PII_MASKED', 'REASONING_INERTIA']);
  });

  it('gives a lexical kind info, never warn or critical (SuperAuditor §4)', () => {
    const graded = Object.entries(FINDING_KINDS as Readonly<Record<string, KindEntry>>).filter(([, e]) => e.lexical === true && e.severity !== 'info');
    expect(graded).toEqual([]);
  });
});

describe('detect', () => {
  it('emits only the kinds each probe declares, with the map severity, in event order then kind', async () => {
    const { events, chain } = await everything();
    const conformance = buildConformance(events, null);
    for (const probe of PROBES) {
      for (const finding of probe.run({ events, chain, conformance })) expect(probe.kinds, probe.id).toContain(finding.kind);
    }
    const findings = detect({ events, chain, conformance });
    expect(findings.map((f) => f.kind)).toEqual([
      'STEP_FAILED',
      'POLICY_VIOLATION',
      'CAPABILITY_AUDIT',
      'SCHEMA_VIOLATION',
      'APPROVAL_PENDING',
      'SECRET_BROKER_ERROR',
      'GOAL_DRIFT',
      'SCHEDULE_SLO_MISS',
      'COGNITIVE_CYCLE_DETECTED',
      'REASONING_INERTIA',
      'OBSERVER_ERROR',
      'PII_MASKED',
      'ESCALATION_FIRED',
      'SEQUENCER_INCOMPLETE',
    ]);
    for (const finding of findings) {
      expect(finding.severity).toBe(severityOf(finding.kind));
      expect(finding).not.toHaveProperty('at');
    }
    const fixed = findings.find((f) => f.kind === 'SEQUENCER_INCOMPLETE');
    expect(fixed?.['missing_steps']).toEqual(['fetch', 'pay']);
  });

  it('replaces the findings of a probe that throws with one CHECK_CRASHED naming it', async () => {
    const { events, chain } = await everything();
    const crashing: Probe = {
      id: 'flaky',
      kinds: ['POLICY_VIOLATION'],
      run: () => {
        throw new TypeError('bad state');
      },
    };
    const findings = detect({ events, chain, conformance: buildConformance(events, null) }, [crashing, ...PROBES.filter((p) => p.id === 'escalations')]);
    expect(findings.map((f) => f.kind)).toEqual(['ESCALATION_FIRED', 'CHECK_CRASHED']);
    expect(findings[1]).toMatchObject({ severity: 'warn', probe: 'flaky', error: 'TypeError', message: 'probe flaky threw: bad state' });
  });
});

describe('conformance', () => {
  it('passes a sequence whose steps completed in order, retries included', async () => {
    const { session } = openSession({ agent: { sequencer: { steps: [{ id: 'a', type: 'op' }, { id: 'b', type: 'op' }] } } });
    session.emit('sequencer.step.start', {}, { stepId: 'a' });
    session.emit('sequencer.step.end', { status: 'error', error: 'x' }, { stepId: 'a' });
    session.emit('sequencer.step.start', {}, { stepId: 'a' });
    session.emit('sequencer.step.end', { status: 'ok' }, { stepId: 'a' });
    session.emit('sequencer.step.start', {}, { stepId: 'b' });
    session.emit('sequencer.step.end', { status: 'ok' }, { stepId: 'b' });
    const result = await session.close();
    expect(result.conformance.checks.find((c) => c.type === 'sequencer')).toMatchObject({ passed: true, missing_steps: [], order_ok: true });
    expect(result.conformance.passed).toBe(true);
    expect(result.audit_report.verdict).toBe('warn');
  });

  it('fails on goal drift and schedule misses', async () => {
    const { session } = openSession();
    session.emit('slo.missed', { reason: 'late' });
    const result = await session.close();
    expect(result.conformance.checks.find((c) => c.type === 'goal_slo')).toMatchObject({ passed: false, miss_count: 1 });
    expect(result.audit_report.verdict).toBe('fail');
  });
});

describe('readSummary', () => {
  it("reads a Python Aura summary's findings into aura's vocabulary, Aura's grade moved to aura_severity", () => {
    const summary = readSummary(path.join(AURA_PY, 'sessions', 'aura_sess_db9f4efab22c.summary.json'));
    const [finding] = summary.audit_report.findings;
    expect(finding).toMatchObject({ kind: 'POLICY_VIOLATION', severity: 'warn', aura_severity: 'high' });
    expect(finding).not.toHaveProperty('code');
    expect(finding?.event_ids).toHaveLength(1);
  });

  it('refuses to overwrite an aura_severity a finding already has', () => {
    const file = path.join(tempDir(), 's.summary.json');
    fs.writeFileSync(file, JSON.stringify({ audit_report: { findings: [{ code: 'POLICY_VIOLATION', severity: 'high', aura_severity: 'medium' }] } }));
    expect(() => readSummary(file)).toThrow(AuraError);
    expect(() => readSummary(file)).toThrow(/refusing to overwrite/);
  });

  it('refuses a summary of a newer format', () => {
    const file = path.join(tempDir(), 's.summary.json');
    fs.writeFileSync(file, JSON.stringify({ summary_version: 99, audit_report: { findings: [] } }));
    expect(() => readSummary(file)).toThrow(/written by a newer aura/);
  });
});
