import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApprovalRequiredError, ExportError } from '../../src/errors.js';
import { stagingPathOf } from '../../src/export/commit.js';
import { exportSession } from '../../src/export/session-export.js';
import { resolveSessionKey } from '../../src/store/session-files.js';
import { expectAuraError, expectAuraRejection } from '../helpers/errors.js';
import { AURA_PY, interopIndex } from '../helpers/fixtures.js';
import { lines, openSession } from '../helpers/sessions.js';
import { expectNested, spansOnDisk, type ReceivedSpan } from '../helpers/otlp-receiver.js';
import { tempDir } from '../helpers/temp.js';

const AURA_SUMMARY_KEYS = ['session_id', 'aura_id', 'agent_ref', 'agent_name', 'policy_version', 'mode', 'snapshot_hash', 'agent_ids', 'purpose', 'conformance', 'audit_report', 'event_count', 'log'];

describe('session export at close', () => {
  it("writes a summary with Aura's keys, the chain seal, and an audit report that carries the chain check", async () => {
    const { session } = openSession({ agent: { purpose: 'Say hello', name: 'greeter' } });
    session.emit('turn.start', { input: 'héllo' });
    const result = await session.close();
    const summary = JSON.parse(fs.readFileSync(result.exports.summary ?? '', 'utf8')) as Record<string, unknown>;
    for (const key of AURA_SUMMARY_KEYS) expect(summary).toHaveProperty(key);
    expect(Object.keys(summary).slice(0, 7)).toEqual(AURA_SUMMARY_KEYS.slice(0, 7));
    expect(summary).toMatchObject({
      session_id: session.id,
      agent_ref: 'acme/tester',
      agent_name: 'greeter',
      policy_version: '1',
      mode: 'script',
      snapshot_hash: session.openSnapshotHash,
      open_snapshot_hash: session.openSnapshotHash,
      trace_id: session.traceId,
      purpose: 'Say hello',
      event_count: 4,
      log: result.log_path,
      chain: { events: 4, first_hash: result.chain.first_hash, head_hash: result.chain.head_hash },
    });
    expect(summary['audit_report']).toMatchObject({ verdict: 'pass', hash_chain_valid: true, findings: [], scorecard: { events: 4 } });
    expect(summary['conformance']).toMatchObject({ passed: true, violations: [], event_count: 4 });
    expect(result.chain.head_hash).toBe(JSON.parse(lines(result.log_path).at(-1) ?? '{}').content_hash);
    // ASCII-escaped, as Aura's json.dump writes it.
    expect([...fs.readFileSync(result.exports.summary ?? '', 'utf8')].every((c) => c.charCodeAt(0) < 0x80)).toBe(true);
  });

  it('builds summary and report in memory only with export: false', async () => {
    const { session } = openSession({ session: { export: false } });
    const result = await session.close();
    expect(result.exports).toEqual({ jsonl: result.log_path });
    expect(result.summary.audit_report.verdict).toBe('pass');
    expect(fs.existsSync(session.files.summary)).toBe(false);
    expect(fs.existsSync(session.files.otel)).toBe(false);
  });

  it('commits neither file when the second write fails, and keeps the trail whole', async () => {
    const { session } = openSession();
    session.emit('turn.start', { input: 'hi' });
    // A folder where the spans' staging file must go makes that write fail.
    fs.mkdirSync(stagingPathOf(session.files.otel));
    const error = await expectAuraRejection(() => session.close(), ExportError, 'EXPORT_FAILED');
    expect(error.data?.path).toBe(session.files.otel);
    expect(fs.existsSync(session.files.summary)).toBe(false);
    expect(fs.existsSync(stagingPathOf(session.files.summary))).toBe(false);
    expect(fs.existsSync(session.files.otel)).toBe(false);
    expect(lines(session.files.trail).map((l) => JSON.parse(l).kind)).toEqual(['membrane.ingress', 'session.open', 'turn.start', 'session.close']);
    // Once the obstacle is gone, the evidence can be built from the trail.
    fs.rmdirSync(stagingPathOf(session.files.otel));
    const rebuilt = exportSession(session.files, true);
    expect(rebuilt.summary.audit_report.verdict).toBe('pass');
    expect(fs.existsSync(session.files.summary) && fs.existsSync(session.files.otel)).toBe(true);
  });

  it('leaves the previous files in place when a later export fails', async () => {
    const { session } = openSession();
    const result = await session.close();
    const before = fs.readFileSync(result.exports.summary ?? '', 'utf8');
    fs.mkdirSync(stagingPathOf(session.files.otel));
    expect(() => exportSession(session.files, true)).toThrow(ExportError);
    expect(fs.readFileSync(result.exports.summary ?? '', 'utf8')).toBe(before);
  });

  it('verifies the trail from disk, so a file tampered with before close is reported', async () => {
    const { session } = openSession();
    session.emit('tool.call', { tool: 'search' });
    // Edit a recorded line under the writer's feet (same length, so appends stay whole).
    const text = fs.readFileSync(session.files.trail, 'utf8').replace('"tool": "search"', '"tool": "shell!"');
    fs.writeFileSync(session.files.trail, text);
    const result = await session.close();
    expect(result.audit_report).toMatchObject({ verdict: 'fail', hash_chain_valid: false });
    expect(result.audit_report.findings[0]).toMatchObject({ kind: 'HASH_CHAIN_BROKEN', severity: 'critical', reason: 'edited' });
  });
});

describe('otel.jsonl', () => {
  it('holds one OTLP/JSON request a line, spans built from emitted calls with the promoted aura.* attributes', async () => {
    const { session } = openSession({ agent: { rules: [{ type: 'confirm_before', tools: ['mail.*'] }] } });
    session.emit('tool.call', { tool: 'search', skill_id: 'web' }, { stepId: 's1' });
    session.emit('tool.result', { tool: 'search', result: 'RESULT-MARKER-7f' }, { telemetry: { latency_ms: 12.5 } });
    session.emit('tool.error', { tool: 'search', error: 'timeout' }, { telemetry: { latency_ms: 2 } });
    const call = { tool: 'mail.send', args: { to: 'ops@example.test' } };
    const pending = expectAuraError(() => session.emit('tool.call', call), ApprovalRequiredError, 'APPROVAL_REQUIRED');
    session.approve(pending.data?.request_id ?? '', { principal: 'ops' });
    session.emit('tool.call', call);
    const result = await session.close();
    const spanLines = lines(result.exports.otel ?? '');
    const trail = lines(result.log_path).map((l) => JSON.parse(l) as { event_id: string; kind: string; timestamp: string });
    for (const line of spanLines) {
      const data = JSON.parse(line) as { resourceSpans: { resource: { attributes: unknown[] }; scopeSpans: { scope: { name: string }; spans: unknown[] }[] }[] };
      expect(data.resourceSpans[0]?.scopeSpans[0]?.scope.name).toBe('aura-harness');
      expect(data.resourceSpans[0]?.scopeSpans[0]?.spans).toHaveLength(1);
    }
    const spans = spansOnDisk(result.exports.otel ?? '');
    expect(spans).toHaveLength(spanLines.length);
    expectNested(spans);
    const named = (name: string): ReceivedSpan[] => spans.filter((s) => s.name === name);
    const root = named('invoke_agent acme/tester')[0];
    // Recorded as 2026-01-01T00:00:00.001500+00:00: microseconds after the second.
    const [seconds, fraction] = (trail[0]?.timestamp ?? '').replace('+00:00', '').split('.') as [string, string];
    expect(root?.start).toBe(BigInt(Date.parse(`${seconds}Z`)) * 1_000_000n + BigInt(fraction.padEnd(9, '0')));
    const [searched, failed] = named('execute_tool search') as [ReceivedSpan, ReceivedSpan];
    // Emitted without tool(): the span runs from the call to its result.
    expect(searched.attributes).toMatchObject({ 'aura.agent_ref': 'acme/tester', 'aura.policy_version': '1', 'aura.step_id': 's1', 'aura.skill_id': 'web', 'aura.tool': 'search' });
    expect(searched.events.map((e) => e.name)).toEqual(['tool.call', 'tool.result']);
    expect(failed.end - failed.start).toBe(2_000_000n);
    expect(failed.attributes['error.type']).toBe('timeout');
    expect(failed.status).toEqual({ code: 2, message: 'timeout' });
    // The approved call carries its approver; the approval is a guardrail span.
    const [held, released] = named('execute_tool mail.send') as [ReceivedSpan, ReceivedSpan];
    expect(held.attributes['error.type']).toBe('approval_required');
    expect(released.attributes).toMatchObject({ 'aura.principal': 'ops', 'aura.tool': 'mail.send' });
    expect(spans.find((s) => s.attributes['gen_ai.guardrail.result.value'] === 'approved')?.attributes).toMatchObject({ 'aura.principal': 'ops' });
    // Payloads stay in the trail: no span carries one.
    expect(fs.readFileSync(result.log_path, 'utf8')).toContain('RESULT-MARKER-7f');
    expect(spanLines.join('\n')).not.toContain('RESULT-MARKER-7f');
  });

  it('builds spans and a summary for a Python Aura session without changing its trail', () => {
    const home = tempDir();
    const sessions = path.join(home, 'sessions');
    fs.mkdirSync(sessions);
    const id = interopIndex().sessions['policy_deny_tool']?.session_id ?? '';
    fs.copyFileSync(path.join(AURA_PY, 'sessions', `${id}.jsonl`), path.join(sessions, `${id}.jsonl`));
    const before = fs.readFileSync(path.join(sessions, `${id}.jsonl`));
    const exported = exportSession(resolveSessionKey(sessions, id), true);
    expect(exported.summary).toMatchObject({ session_id: id, agent_ref: 'acme/deny-bot', audit_report: { verdict: 'fail', hash_chain_valid: true } });
    expect(exported.summary.audit_report.findings.map((f) => f.kind)).toContain('POLICY_VIOLATION');
    expect(fs.readFileSync(path.join(sessions, `${id}.jsonl`))).toEqual(before);
    const spans = spansOnDisk(path.join(sessions, `${id}.otel.jsonl`));
    expectNested(spans);
    expect(spans.at(-1)?.name).toBe('invoke_agent acme/deny-bot');
    // Python Aura records the denied call's payload as the decided event: the denial still ends its call.
    const denied = spans.find((s) => s.name === 'execute_tool shell.exec');
    expect(denied?.attributes['error.type']).toBe('policy_denied');
    expect(spans.find((s) => s.name === 'apply_guardrail deny_tools')?.parentSpanId).toBe(denied?.spanId);
  });
});
