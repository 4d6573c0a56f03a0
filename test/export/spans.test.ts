import * as fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ApprovalRequiredError, PolicyDeniedError } from '../../src/errors.js';
import { otelLines } from '../../src/export/otel.js';
import { buildSpans, type Span } from '../../src/export/spans.js';
import type { AuraEvent, JsonObject } from '../../src/spine/record.js';
import { readTrail } from '../../src/spine/trail-reader.js';
import { expectAuraRejection } from '../helpers/errors.js';
import { expectNested, spansOnDisk, type ReceivedSpan } from '../helpers/otlp-receiver.js';
import { lines, openSession } from '../helpers/sessions.js';

const SPAN_ID = /^(?!0{16})[0-9a-f]{16}$/;
const TRACE_ID = /^(?!0{32})[0-9a-f]{32}$/;

function byName(spans: readonly ReceivedSpan[], name: string): ReceivedSpan[] {
  return spans.filter((span) => span.name === name);
}

function childrenOf(spans: readonly ReceivedSpan[], parent: ReceivedSpan): ReceivedSpan[] {
  return spans.filter((span) => span.parentSpanId === parent.spanId);
}

describe('the span tree of a session', () => {
  it('is an invoke_agent root with an execute_tool span per guarded call and an apply_guardrail span per decision', async () => {
    const { session } = openSession({ agent: { rules: [{ type: 'deny_tools', tools: ['shell.*'] }, { type: 'confirm_before', tools: ['mail.*'] }] } });
    session.emit('turn.start', { input: 'PAYLOAD-MARKER-turn' });
    await session.tool('search.web', { q: 'PAYLOAD-MARKER-args' }, () => ({ hits: 'PAYLOAD-MARKER-result' }));
    await expectAuraRejection(() => session.tool('shell.exec', { cmd: 'ls' }, () => 'ran'), PolicyDeniedError, 'POLICY_DENIED');
    const held = await expectAuraRejection(() => session.tool('mail.send', { to: 'ops' }, () => 'sent'), ApprovalRequiredError, 'APPROVAL_REQUIRED');
    session.approve(held.data?.request_id ?? '', { principal: 'ops-lead' });
    await session.tool('mail.send', { to: 'ops' }, () => 'sent');
    const failure = session.tool('flaky.fetch', {}, () => {
      throw new TypeError('upstream went away');
    });
    await expect(failure).rejects.toThrow(TypeError);
    const result = await session.close();
    const trail = lines(result.log_path).map((line) => JSON.parse(line) as { event_id: string; kind: string; payload: Record<string, unknown> });
    const spans = spansOnDisk(result.exports.otel ?? '');

    const [root, ...others] = [byName(spans, 'invoke_agent acme/tester')[0] as ReceivedSpan, ...spans.filter((s) => s.parentSpanId !== '')];
    expect(spans.filter((s) => s.parentSpanId === '')).toEqual([root]);
    expect(root.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'acme/tester',
      'gen_ai.agent.id': result.summary.aura_id,
      'gen_ai.conversation.id': session.id,
      'aura.session_id': session.id,
      'aura.agent_ref': 'acme/tester',
      'aura.policy_version': '1',
      'aura.close_reason': 'normal',
    });
    expect(root.traceId).toBe(session.traceId);
    for (const span of spans) {
      expect(span.traceId).toMatch(TRACE_ID);
      expect(span.spanId).toMatch(SPAN_ID);
      expect(span.traceId).toBe(root.traceId);
    }
    expect(new Set(spans.map((s) => s.spanId)).size).toBe(spans.length);
    expectNested(spans);

    const intents = trail.filter((e) => e.kind === 'tool.intent');
    const tools = byName(others, 'execute_tool search.web').concat(byName(others, 'execute_tool shell.exec'), byName(others, 'execute_tool mail.send'), byName(others, 'execute_tool flaky.fetch'));
    expect(tools.map((s) => s.attributes['gen_ai.tool.call.id']).sort()).toEqual(intents.map((e) => e.event_id).sort());
    for (const tool of tools) {
      expect(tool.parentSpanId).toBe(root.spanId);
      expect(tool.attributes).toMatchObject({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': tool.name.slice('execute_tool '.length), 'gen_ai.tool.type': 'function' });
    }

    const [search] = byName(others, 'execute_tool search.web') as [ReceivedSpan];
    expect(search.status).toBeNull();
    expect(search.attributes['error.type']).toBeUndefined();
    expect(search.attributes['aura.attempt']).toBe(1n);
    expect(search.events.map((e) => e.name)).toEqual(['tool.call', 'tool.result']);

    const [shell] = byName(others, 'execute_tool shell.exec') as [ReceivedSpan];
    expect(shell.attributes['error.type']).toBe('policy_denied');
    expect(shell.status?.code).toBe(2);
    const [denial] = childrenOf(spans, shell);
    expect(denial?.name).toBe('apply_guardrail deny_tools');
    expect(denial?.attributes).toMatchObject({
      'gen_ai.operation.name': 'apply_guardrail',
      'gen_ai.guardrail.component.name': 'aura policy',
      'gen_ai.guardrail.policy.id': 'acme/tester',
      'gen_ai.guardrail.policy.version': '1',
      'gen_ai.guardrail.policy.rule.id': 'deny_tools',
      'gen_ai.guardrail.result.type': 'decision',
      'gen_ai.guardrail.result.value': 'violated',
      'gen_ai.guardrail.source': 'tool_input',
      'aura.guardrail.action': 'deny',
    });
    expect(denial?.status?.code).toBe(2);

    const [heldCall, releasedCall] = byName(others, 'execute_tool mail.send') as [ReceivedSpan, ReceivedSpan];
    expect(heldCall.attributes['error.type']).toBe('approval_required');
    expect(childrenOf(spans, heldCall).map((s) => s.attributes['gen_ai.guardrail.result.value'])).toEqual(['approval_required']);
    // The approval comes between the two calls: it belongs to the session.
    const approved = others.find((s) => s.attributes['gen_ai.guardrail.result.value'] === 'approved');
    expect(approved?.parentSpanId).toBe(root.spanId);
    expect(approved?.attributes).toMatchObject({ 'aura.principal': 'ops-lead', 'aura.guardrail.action': 'release' });
    expect(releasedCall.status).toBeNull();
    expect(releasedCall.attributes['aura.principal']).toBe('ops-lead');
    expect(childrenOf(spans, releasedCall).map((s) => [s.name, s.attributes['gen_ai.guardrail.result.value']])).toContainEqual(['apply_guardrail confirm_before', 'passed']);

    const [flaky] = byName(others, 'execute_tool flaky.fetch') as [ReceivedSpan];
    expect(flaky.attributes['error.type']).toBe('TypeError');
    expect(flaky.status).toEqual({ code: 2, message: 'upstream went away' });

    // Every event is a span or a span event exactly once.
    const spanned = new Set([...spans.flatMap((s) => s.events.map((e) => e.attributes['aura.event_id'])), ...intents.map((e) => e.event_id)]);
    const decisions = trail.filter((e) => e.kind.startsWith('constraint.'));
    expect(trail.filter((e) => !spanned.has(e.event_id)).map((e) => e.kind)).toEqual(decisions.map((e) => e.kind));
    expect(root.events.map((e) => e.name)).toEqual(trail.filter((e) => !e.kind.startsWith('tool.') && !e.kind.startsWith('constraint.')).map((e) => e.kind));

    // Privacy by default: no payload value reaches a span.
    expect(fs.readFileSync(result.exports.otel ?? '', 'utf8')).not.toMatch(/PAYLOAD-MARKER/);
  });

  it('gives the same spans, byte for byte, every time it is built from the trail', async () => {
    const { session } = openSession({ agent: { rules: [{ type: 'deny_tools', tools: ['rm'] }] } });
    await session.tool('ls', {}, () => []);
    await expectAuraRejection(() => session.tool('rm', {}, () => 'gone'), PolicyDeniedError, 'POLICY_DENIED');
    const result = await session.close();
    const again = otelLines(readTrail(result.log_path).events);
    expect(again).toBe(fs.readFileSync(result.exports.otel ?? '', 'utf8'));
  });

  it('puts tool arguments and results on spans only when config opts in, and then as recorded (redacted)', async () => {
    const run = async (capture: boolean): Promise<ReceivedSpan> => {
      const { session } = openSession({ agent: { overrides: { otel: { capture_tool_content: capture } } } });
      await session.tool('crm.lookup', { email: 'pat@example.test', api_key: 'sk-live-77aa' }, () => ({ name: 'Pat' }));
      const result = await session.close();
      return byName(spansOnDisk(result.exports.otel ?? ''), 'execute_tool crm.lookup')[0] as ReceivedSpan;
    };
    const quiet = await run(false);
    expect(quiet.attributes['gen_ai.tool.call.arguments']).toBeUndefined();
    expect(quiet.attributes['gen_ai.tool.call.result']).toBeUndefined();
    const open = await run(true);
    expect(JSON.parse(open.attributes['gen_ai.tool.call.arguments'] as string)).toEqual({ email: 'pat@example.test', api_key: '[redacted]' });
    expect(JSON.parse(open.attributes['gen_ai.tool.call.result'] as string)).toEqual({ name: 'Pat' });
  });
});

describe('MCP sessions, observer alerts and PII markers', () => {
  /** A hand-built trail: the events a proxied MCP session records. */
  function mcpTrail(): AuraEvent[] {
    let n = 0;
    const at = (ms: number): string => new Date(Date.UTC(2026, 0, 1) + ms).toISOString().replace('Z', '000Z');
    const event = (kind: string, payload: JsonObject, telemetry: JsonObject = {}): AuraEvent => {
      n++;
      return {
        event_id: n.toString(16).padStart(32, 'a'),
        parent_id: null,
        trace_id: 'f'.repeat(32),
        span_id: null,
        step_id: null,
        task_id: null,
        session_id: 'aura_sess_00000000abcd',
        aura_id: '01KBF4Z7Q2M8X3V6N9T5R1W0YC',
        agent_ids: { agent_ref: 'acme/proxy', policy_version: '2' },
        kind,
        timestamp: at(n * 10),
        payload,
        telemetry,
        prev_hash: null,
        content_hash: n.toString(16).padStart(64, 'c'),
      };
    };
    return [
      event('membrane.ingress', { agent_ref: 'acme/proxy', mode: 'continuous' }),
      event('session.open', { agent_ref: 'acme/proxy', policy_version: '2' }),
      event('mcp.session', { mcp_session_id: '191c4850af6c49e08843a3f6c80e5046', transport: 'streamable-http', network_transport: 'tcp', protocol_version: '2025-06-18', client: { name: 'inspector' }, upstream: 'http://127.0.0.1:9/mcp' }),
      event('tool.intent', { tool: 'weather', args: { city: 'Lisbon' } }),
      event('middleware.applied', { middleware: 'pii_mask', tool: 'weather', original: 'alice@example.test', fields: ['args.email'] }),
      event('tool.call', { tool: 'weather', args: { city: 'Lisbon' } }, { attempt: 1 }),
      event('tool.result', { tool: 'weather', result: { isError: true, content: [{ type: 'text', text: 'no such city' }] } }, { latency_ms: 8 }),
      event('observer.alert', { observer: 'pii', severity: 'high', rule: 'email', matched: 'alice@example.test' }),
      event('tool.intent', { tool: 'time', args: {} }),
      event('tool.call', { tool: 'time', args: {} }, { attempt: 1 }),
      event('tool.result', { tool: 'time', result: { content: [{ type: 'text', text: 'noon' }] } }, { latency_ms: 3 }),
      event('session.close', { reason: 'normal', goal_reached: false }),
    ];
  }

  function attrs(span: Span | undefined): Record<string, unknown> {
    return Object.fromEntries((span?.attributes ?? []).map((a) => [a.key, a.value]));
  }

  it('gives tool spans the MCP attributes of the session, and error.type tool_error for an isError result', () => {
    const spans = buildSpans(mcpTrail());
    const weather = spans.find((s) => s.name === 'execute_tool weather');
    const time = spans.find((s) => s.name === 'execute_tool time');
    for (const span of [weather, time]) {
      expect(attrs(span)).toMatchObject({
        'gen_ai.operation.name': 'execute_tool',
        'mcp.method.name': 'tools/call',
        'mcp.session.id': '191c4850af6c49e08843a3f6c80e5046',
        'mcp.protocol.version': '2025-06-18',
        'network.transport': 'tcp',
      });
      expect(span?.kind).toBe(3);
    }
    expect(attrs(weather)['error.type']).toBe('tool_error');
    expect(weather?.status?.code).toBe(2);
    expect(attrs(time)['error.type']).toBeUndefined();
    expect(time?.status).toBeNull();
    const root = spans.at(-1);
    expect(root?.name).toBe('invoke_agent acme/proxy');
    expect(root?.events.map((e) => e.name)).toEqual(['membrane.ingress', 'session.open', 'mcp.session', 'observer.alert', 'session.close']);
  });

  it('keeps alerts and PII markers as span events that name the observer and middleware, never the matched value', () => {
    const spans = buildSpans(mcpTrail());
    const weather = spans.find((s) => s.name === 'execute_tool weather');
    const marker = weather?.events.find((e) => e.name === 'middleware.applied');
    expect(Object.fromEntries(marker?.attributes.map((a) => [a.key, a.value]) ?? [])).toMatchObject({ 'aura.middleware': 'pii_mask', 'aura.event_id': expect.stringMatching(/^[0-9a-f]{32}$/) });
    const alert = spans.at(-1)?.events.find((e) => e.name === 'observer.alert');
    expect(Object.fromEntries(alert?.attributes.map((a) => [a.key, a.value]) ?? [])).toMatchObject({ 'aura.observer': 'pii', 'aura.severity': 'high', 'aura.rule.type': 'email' });
    expect(otelLines(mcpTrail())).not.toContain('alice@example.test');
  });
});
