import * as fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { exportOtelCommand } from '../../src/cli/export.js';
import { resolveConfig } from '../../src/config/config.js';
import { OtlpConfigError } from '../../src/errors.js';
import { resolveOtlpTarget } from '../../src/export/otlp-http.js';
import { parseOtelSettings } from '../../src/config/otel.js';
import type { AgentOptions } from '../../src/session/agent.js';
import type { SessionResult } from '../../src/session/session.js';
import { auraAsync } from '../helpers/cli.js';
import { expectAuraError } from '../helpers/errors.js';
import { expectNested, OtlpReceiver, RECEIVER_TOKEN, spansOnDisk, type Answer, type ReceivedSpan } from '../helpers/otlp-receiver.js';
import { countingIds, openSession } from '../helpers/sessions.js';

const AUTH = `authorization=Bearer ${RECEIVER_TOKEN}`;
const receivers: OtlpReceiver[] = [];

afterEach(async () => {
  for (const receiver of receivers.splice(0)) await receiver.stop();
});

async function receiver(answer?: (index: number) => Answer): Promise<OtlpReceiver> {
  const started = await OtlpReceiver.start(answer);
  receivers.push(started);
  return started;
}

/** A closed session with a few guarded calls, one denied. */
async function finishedSession(agentOptions: AgentOptions = {}): Promise<{ result: SessionResult; home: string }> {
  const { session, home } = openSession({ agent: { rules: [{ type: 'deny_tools', tools: ['shell.*'] }], ...agentOptions } });
  await session.tool('search.web', { q: 'otel' }, () => ({ hits: 3 }));
  await session.tool('shell.exec', { cmd: 'ls' }, () => 'ran').catch(() => undefined);
  return { result: await session.close(), home };
}

/** The spans in a comparable order: by span id. */
function sorted(spans: readonly ReceivedSpan[]): ReceivedSpan[] {
  return [...spans].sort((a, b) => a.spanId.localeCompare(b.spanId));
}

function liveConfig(endpoint: string, extra: Record<string, unknown> = {}): AgentOptions {
  // A generous close bound: a worker loaded from the TypeScript sources starts slowly.
  return { overrides: { otel: { endpoint, headers: { authorization: `Bearer ${RECEIVER_TOKEN}` }, close_timeout_ms: 5000, ...extra } } };
}

describe('aura export-otel pushes a finished session', () => {
  for (const protocol of ['http/protobuf', 'http/json'] as const) {
    it(`sends the spans of {id}.otel.jsonl to the collector over ${protocol}`, async () => {
      const collector = await receiver();
      const { result, home } = await finishedSession();
      const outcome = await exportOtelCommand(result.session_id, { endpoint: collector.endpoint, protocol, headers: [AUTH] }, resolveConfig({ home, env: {} }), {});
      expect(outcome.exitCode).toBe(0);
      expect(outcome.json).toMatchObject({ pushed: { endpoint: `${collector.endpoint}/v1/traces`, protocol, dropped: 0 } });
      expect(collector.requests.map((r) => r.contentType)).toEqual([protocol === 'http/json' ? 'application/json' : 'application/x-protobuf']);
      expect(collector.requests[0]?.resource).toMatchObject({ 'service.name': 'aura', 'aura.session_id': result.session_id });

      const pushed = collector.spans;
      // The same spans as the file, decoded independently of aura's encoder.
      expect(sorted(pushed)).toEqual(sorted(spansOnDisk(result.exports.otel ?? '')));
      const root = pushed.find((s) => s.parentSpanId === '');
      expect(root?.name).toBe('invoke_agent acme/tester');
      const tools = pushed.filter((s) => s.name.startsWith('execute_tool '));
      expect(tools.map((s) => s.name).sort()).toEqual(['execute_tool search.web', 'execute_tool shell.exec']);
      for (const tool of tools) expect(tool.parentSpanId).toBe(root?.spanId);
      const guardrail = pushed.find((s) => s.name === 'apply_guardrail deny_tools');
      expect(guardrail?.parentSpanId).toBe(tools.find((s) => s.name === 'execute_tool shell.exec')?.spanId);
      expect(guardrail?.attributes['gen_ai.guardrail.result.value']).toBe('violated');
      expectNested(pushed);
    });
  }

  it('reads OTEL_EXPORTER_OTLP_* from the environment of the built CLI, and its flags win', async () => {
    const collector = await receiver();
    const { result, home } = await finishedSession();
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint, OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer%20${RECEIVER_TOKEN}`, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' };
    const run = await auraAsync(['export-otel', result.session_id, '--json'], { home, env });
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ session_id: result.session_id, pushed: { protocol: 'http/protobuf', dropped: 0 } });
    expect(collector.requests.map((r) => r.contentType)).toEqual(['application/x-protobuf']);
    expect(sorted(collector.spans)).toEqual(sorted(spansOnDisk(result.exports.otel ?? '')));

    const flagged = await auraAsync(['export-otel', result.session_id, '--protocol', 'http/json', '--json'], { home, env });
    expect(flagged.status, flagged.stderr).toBe(0);
    expect(collector.requests.map((r) => r.contentType)).toEqual(['application/x-protobuf', 'application/json']);
    expect(run.stdout + run.stderr + flagged.stdout + flagged.stderr).not.toContain(RECEIVER_TOKEN);
  });

  it('exits 1 and says so when the collector refuses the spans', async () => {
    const collector = await receiver(() => ({ status: 400 }));
    const { result, home } = await finishedSession();
    const run = await auraAsync(['export-otel', result.session_id, '--endpoint', collector.endpoint, '--header', AUTH, '--json'], { home });
    expect(run.status).toBe(1);
    expect(JSON.parse(run.stdout)).toMatchObject({ pushed: { exported: 0, error: 'HTTP 400', attempts: 1 } });
    expect(run.stdout).not.toContain(RECEIVER_TOKEN);
  });

  it('refuses a bad flag or variable with exit 2, naming it and never the header value', async () => {
    const { result, home } = await finishedSession();
    const badHeader = await auraAsync(['export-otel', result.session_id, '--endpoint', 'http://127.0.0.1:9', '--header', '=sk-secret-value-1'], { home });
    expect(badHeader.status).toBe(2);
    expect(badHeader.stderr).toContain('--header (entry 1)');
    expect(badHeader.stderr).not.toContain('sk-secret-value-1');
    const badProtocol = await auraAsync(['export-otel', result.session_id], { home, env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' } });
    expect(badProtocol.status).toBe(2);
    expect(badProtocol.stderr).toContain('OTEL_EXPORTER_OTLP_PROTOCOL');
  });
});

describe('OTLP target resolution', () => {
  const settings = parseOtelSettings({ endpoint: 'http://config.test:4318', protocol: 'http/json', headers: { 'x-team': 'core', 'x-key': 'env:TEAM_KEY' }, timeout_ms: 500 });

  it('takes flags, then the variables, then config, as the OTLP exporter spec orders them', () => {
    expect(resolveOtlpTarget(parseOtelSettings(undefined), {})).toBeNull();
    expect(resolveOtlpTarget(settings, { TEAM_KEY: 'k1' })).toEqual({ url: 'http://config.test:4318/v1/traces', endpoint: 'http://config.test:4318/v1/traces', protocol: 'http/json', headers: { 'x-team': 'core', 'x-key': 'k1' }, timeoutMs: 500, compression: 'none' });
    const env = {
      TEAM_KEY: 'k1',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://env.test:4318/base/',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-team=env%20team,x-other=1',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_EXPORTER_OTLP_TIMEOUT: '2500',
    };
    expect(resolveOtlpTarget(settings, env)).toMatchObject({ url: 'http://env.test:4318/base/v1/traces', protocol: 'http/protobuf', headers: { 'x-team': 'env team', 'x-other': '1', 'x-key': 'k1' }, timeoutMs: 2500 });
    // A signal-specific endpoint is used as given.
    expect(resolveOtlpTarget(settings, { ...env, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://traces.test/custom' })?.url).toBe('http://traces.test/custom');
    const flagged = resolveOtlpTarget(settings, env, { endpoint: 'https://user:pw@flag.test/v1/traces?tenant=a', protocol: 'http/json', headers: ['X-Team=flag'] });
    expect(flagged).toMatchObject({ url: 'https://user:pw@flag.test/v1/traces?tenant=a', endpoint: 'https://flag.test/v1/traces', protocol: 'http/json', headers: { 'x-team': 'flag' } });
  });

  it('refuses bad settings with OtlpConfigError naming the key, never a header value', () => {
    const unknown = expectAuraError(() => parseOtelSettings({ endpoint: 'http://x.test', capture: true }), OtlpConfigError, 'OTLP_CONFIG_INVALID');
    expect(unknown.data?.source).toBe('otel.capture');
    expectAuraError(() => parseOtelSettings({ capture_tool_content: 'yes' }), OtlpConfigError, 'OTLP_CONFIG_INVALID');
    expectAuraError(() => parseOtelSettings({ close_timeout_ms: -1 }), OtlpConfigError, 'OTLP_CONFIG_INVALID');
    const missing = expectAuraError(() => resolveOtlpTarget(settings, {}), OtlpConfigError, 'OTLP_CONFIG_INVALID');
    expect(missing.data?.source).toBe('otel.headers.x-key');
    const scheme = expectAuraError(() => resolveOtlpTarget(settings, {}, { endpoint: 'ftp://x.test' }), OtlpConfigError, 'OTLP_CONFIG_INVALID');
    expect(scheme.data?.source).toBe('--endpoint');
    const encoded = expectAuraError(() => resolveOtlpTarget(settings, { TEAM_KEY: 'k', OTEL_EXPORTER_OTLP_HEADERS: 'x-key=sk%ZZsecret' }), OtlpConfigError, 'OTLP_CONFIG_INVALID');
    expect(encoded.message).not.toContain('secret');
    // A bad otel config stops the session before its trail exists.
    expect(() => openSession({ agent: { overrides: { otel: { endpoint: 42 } } } })).toThrow(OtlpConfigError);
  });
});

describe('live export while a session runs', () => {
  it('pushes each call as it ends and the root at close, the same spans as the file', async () => {
    const collector = await receiver();
    const { session } = openSession({ agent: { rules: [{ type: 'deny_tools', tools: ['shell.*'] }], ...liveConfig(collector.endpoint, { protocol: 'http/json' }) } });
    await session.tool('search.web', { q: 'otel' }, () => ({ hits: 3 }));
    // The call's span arrives while the session is still open.
    await collector.waitForSpans(1);
    expect(session.closed).toBe(false);
    expect(collector.spans.map((s) => s.name)).toEqual(['execute_tool search.web']);
    await session.tool('shell.exec', {}, () => 'ran').catch(() => undefined);
    const result = await session.close();
    const onDisk = spansOnDisk(result.exports.otel ?? '');
    expect(collector.spans).toEqual(onDisk);
    expect(collector.spans.at(-1)?.name).toBe('invoke_agent acme/tester');
    expectNested(collector.spans);
    expect(result.summary.otel).toEqual({ endpoint: `${collector.endpoint}/v1/traces`, protocol: 'http/json', exported: onDisk.length, dropped: 0 });
    expect(JSON.parse(fs.readFileSync(result.exports.summary ?? '', 'utf8')).otel).toEqual(result.summary.otel);
  });

  it('keeps sessions apart that export at the same time through the one export thread', async () => {
    const collector = await receiver();
    const open = (seed: number): ReturnType<typeof openSession>['session'] => openSession({ agent: liveConfig(collector.endpoint), session: { ids: countingIds(seed) } }).session;
    const [a, b] = [open(1), open(1000)];
    await a.tool('search.web', {}, () => 'a');
    await b.tool('fs.read', {}, () => 'b');
    await b.tool('fs.read', {}, () => 'b again');
    const [closedA, closedB] = await Promise.all([a.close(), b.close()]);
    for (const closed of [closedA, closedB]) {
      const onDisk = spansOnDisk(closed.exports.otel ?? '');
      expect(closed.summary.otel).toMatchObject({ exported: onDisk.length, dropped: 0 });
      const pushed = collector.spans.filter((span) => span.traceId === onDisk[0]?.traceId);
      expect(sorted(pushed)).toEqual(sorted(onDisk));
    }
    expect(closedA.summary.otel?.exported).not.toBe(closedB.summary.otel?.exported);
  });

  it('retries a 503 after its Retry-After and drops nothing', async () => {
    const collector = await receiver((index) => (index === 0 ? { status: 503, headers: { 'retry-after': '1' } } : { status: 200 }));
    const { session } = openSession({ agent: liveConfig(collector.endpoint, { close_timeout_ms: 5000 }) });
    await session.tool('search.web', {}, () => 'ok');
    const result = await session.close();
    expect(collector.attempts).toBeGreaterThanOrEqual(2);
    const [first, second] = collector.attemptTimes as [number, number];
    expect(second - first).toBeGreaterThanOrEqual(900);
    expect(result.summary.otel).toMatchObject({ dropped: 0, exported: spansOnDisk(result.exports.otel ?? '').length });
    expect(sorted(collector.spans)).toEqual(sorted(spansOnDisk(result.exports.otel ?? '')));
  });

  it('closes on time when the collector never answers, and counts what it dropped', async () => {
    const collector = await receiver(() => 'hang');
    const { session } = openSession({ agent: liveConfig(collector.endpoint, { close_timeout_ms: 300 }) });
    await session.tool('search.web', {}, () => 'ok');
    for (let i = 0; i < 50; i++) session.emit('turn.start', { i });
    const started = performance.now();
    const result = await session.close();
    // The bound, plus the margin given the worker to answer, plus slack for a busy machine.
    expect(performance.now() - started).toBeLessThan(300 + 500 + 700);
    expect(result.summary.otel).toMatchObject({ exported: 0, dropped: spansOnDisk(result.exports.otel ?? '').length });
    expect(result.chain).toMatchObject({ hash_chain_valid: true, complete: true });
  });

  it('lets no secret, header value or redacted value into any byte it exports', async () => {
    const SECRET = 'pay-key-live-3f9c1a7e5b';
    const PASSWORD = 'hunter2-correct-horse';
    const collector = await receiver();
    const { session, home } = openSession({
      agent: {
        capabilities: [{ id: 'pay-a', tool: 'payment.pay', allowed: { vendor: 'vendor-a' }, inject: [{ ref: 'env:PAY_KEY', as: 'headers.Authorization', prefix: 'Bearer ' }] }],
        ...liveConfig(collector.endpoint, { capture_tool_content: true, protocol: 'http/json' }),
      },
      session: { secretBroker: { resolve: (ref: string) => (ref === 'env:PAY_KEY' ? SECRET : undefined) } },
    });
    await session.tool('payment.pay', { vendor: 'vendor-a', password: PASSWORD }, (live) => ({ echoed: live }), { capabilityId: 'pay-a' });
    const result = await session.close();
    const pushed = await exportOtelCommand(result.session_id, { endpoint: collector.endpoint, protocol: 'http/protobuf', headers: [AUTH] }, resolveConfig({ home, env: {} }), {});
    expect(pushed.exitCode).toBe(0);
    expect(collector.requests.map((r) => r.contentType)).toContain('application/x-protobuf');
    const exported = [collector.bytes, fs.readFileSync(result.exports.otel ?? ''), fs.readFileSync(result.exports.summary ?? ''), Buffer.from(JSON.stringify(pushed.json))];
    for (const bytes of exported) {
      for (const secret of [SECRET, PASSWORD, RECEIVER_TOKEN]) expect(bytes.includes(secret), secret).toBe(false);
    }
    // Content was captured (opt-in), as recorded: redacted.
    expect(collector.bytes.includes('[redacted]')).toBe(true);
  });
});
