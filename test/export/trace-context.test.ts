import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { InvalidOptionError } from '../../src/errors.js';
import { agent } from '../../src/session/agent.js';
import { parseTraceparent } from '../../src/session/trace-context.js';
import { listSessionIds, sessionFiles } from '../../src/store/session-files.js';
import { AURA_BIN } from '../helpers/cli.js';
import { expectAuraError } from '../helpers/errors.js';
import { REPO } from '../helpers/fixtures.js';
import { OtlpReceiver, RECEIVER_TOKEN, spansOnDisk } from '../helpers/otlp-receiver.js';
import { tempDir } from '../helpers/temp.js';

const receivers: OtlpReceiver[] = [];
afterAll(async () => {
  for (const receiver of receivers) await receiver.stop();
});

async function receiver(): Promise<OtlpReceiver> {
  const started = await OtlpReceiver.start();
  receivers.push(started);
  return started;
}

/** An agent whose sessions stream their spans to `endpoint` (OTLP/JSON). */
function streaming(endpoint: string) {
  return agent('acme/app', { home: tempDir(), overrides: { otel: { endpoint, protocol: 'http/json', headers: { authorization: `Bearer ${RECEIVER_TOKEN}` }, close_timeout_ms: 5000 } } });
}

describe('trace context', () => {
  const exporter = new InMemorySpanExporter();
  const contextManager = new AsyncLocalStorageContextManager();

  beforeAll(() => {
    // The app's own OpenTelemetry setup: an SDK tracer provider and the async-hooks context manager.
    context.setGlobalContextManager(contextManager.enable());
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
  });
  afterAll(() => {
    trace.disable();
    context.disable();
  });
  afterEach(() => exporter.reset());

  it("joins the app's active span: aura's spans carry its trace id, and the session's root is its child", async () => {
    const collector = await receiver();
    const ag = streaming(collector.endpoint);
    const tracer = trace.getTracer('checkout-app');
    const app = await tracer.startActiveSpan('POST /plan', async (span) => {
      const session = ag.session();
      await session.tool('weather.forecast', { city: 'Lisbon' }, () => ({ sky: 'sunny' }), { callId: 'call_1' });
      await session.close();
      span.end();
      return span.spanContext();
    });
    const [appSpan] = exporter.getFinishedSpans();
    expect(appSpan?.name).toBe('POST /plan');
    await collector.waitForSpans(2);
    const root = collector.spans.find((s) => s.name.startsWith('invoke_agent'));
    const tool = collector.spans.find((s) => s.name === 'execute_tool weather.forecast');
    expect(root).toMatchObject({ traceId: app.traceId, parentSpanId: app.spanId });
    expect(tool).toMatchObject({ traceId: app.traceId, parentSpanId: root?.spanId });
    expect(tool?.attributes['gen_ai.tool.call.id']).toBe('call_1');
    expect(collector.spans.every((s) => s.traceId === app.traceId)).toBe(true);
  });

  it('takes an explicit traceparent, and starts its own trace when there is no parent', async () => {
    const collector = await receiver();
    const ag = streaming(collector.endpoint);
    const parent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const joined = ag.session({ traceParent: parent });
    const result = await joined.close();
    const alone = await ag.session().close();
    const spans = spansOnDisk(result.exports.otel ?? '');
    expect(spans[0]).toMatchObject({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', parentSpanId: '00f067aa0ba902b7' });
    expect(spansOnDisk(alone.exports.otel ?? '')[0]?.parentSpanId).toBe('');
    expectAuraError(() => ag.session({ traceParent: '00-00000000000000000000000000000000-00f067aa0ba902b7-01' }), InvalidOptionError, 'INVALID_OPTION');
    expect(() => parseTraceparent('ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', 'x')).toThrow(InvalidOptionError);
  });

  it('honours OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES and OTEL_EXPORTER_OTLP_COMPRESSION=gzip', async () => {
    const collector = await receiver();
    const ag = streaming(collector.endpoint);
    const saved = { ...process.env };
    Object.assign(process.env, { OTEL_SERVICE_NAME: 'checkout', OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=prod,team=payments%20core,service.name=ignored', OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip' });
    try {
      const session = ag.session();
      await session.tool('pay', { amount: 1 }, () => 'ok');
      const result = await session.close();
      await collector.waitForSpans(2);
      expect(collector.requests.every((request) => request.contentEncoding === 'gzip')).toBe(true);
      expect(collector.requests[0]?.resource).toMatchObject({ 'service.name': 'checkout', 'deployment.environment': 'prod', team: 'payments core', 'aura.session_id': result.session_id });
      expect(spansOnDisk(result.exports.otel ?? '').length).toBe(collector.spans.length);
    } finally {
      process.env = saved;
    }
  });

  it('keeps a credential in OTEL_RESOURCE_ATTRIBUTES or OTEL_SERVICE_NAME off every span', async () => {
    const collector = await receiver();
    const ag = streaming(collector.endpoint);
    const saved = { ...process.env };
    const token = `ghp_${'A1b2C3d4E5f6'.repeat(3)}`;
    Object.assign(process.env, { OTEL_SERVICE_NAME: 'svc password=Hunter2Hunter2xyz', OTEL_RESOURCE_ATTRIBUTES: `api_key=PlainValue12345,vcs.ref=${token},db.url=postgres%3A%2F%2Fu%3Asecretpw%40h%2Fd,team=core` });
    try {
      const session = ag.session();
      await session.tool('pay', { amount: 1 }, () => 'ok');
      const result = await session.close();
      await collector.waitForSpans(2);
      expect(collector.requests[0]?.resource).toMatchObject({ 'service.name': 'svc password=[redacted]', api_key: '[redacted]', 'vcs.ref': '[redacted]', 'db.url': 'postgres://u:[redacted]@h/d', team: 'core' });
      const onDisk = fs.readFileSync(result.exports.otel ?? '', 'utf8');
      for (const secret of ['Hunter2Hunter2xyz', 'PlainValue12345', token, 'secretpw']) expect(onDisk).not.toContain(secret);
    } finally {
      process.env = saved;
    }
  });

  it("aura proxy parents each call's span on the client's _meta.traceparent", async () => {
    const home = tempDir();
    const everything = path.join(REPO, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
    const client = new Client({ name: 'traced-client', version: '1.0.0' });
    const transport = new StdioClientTransport({ command: process.execPath, args: [AURA_BIN, '--home', home, 'proxy', '--', everything, 'stdio'], cwd: REPO, stderr: 'pipe' });
    await client.connect(transport);
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    await client.callTool({ name: 'echo', arguments: { message: 'hi' }, _meta: { traceparent } });
    await client.callTool({ name: 'echo', arguments: { message: 'untraced' } });
    await client.close();
    const [sessionId] = listSessionIds(path.join(home, 'sessions'));
    const otel = sessionFiles(path.join(home, 'sessions'), sessionId ?? '').otel;
    for (let i = 0; i < 200 && !fs.existsSync(otel); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    const spans = spansOnDisk(otel).filter((s) => s.name === 'execute_tool echo');
    expect(spans).toHaveLength(2);
    expect(spans[0]).toMatchObject({ traceId: '0af7651916cd43dd8448eb211c80319c', parentSpanId: 'b7ad6b7169203331' });
    const root = spansOnDisk(otel).find((s) => s.name.startsWith('invoke_agent'));
    expect(spans[1]).toMatchObject({ traceId: root?.traceId, parentSpanId: root?.spanId });
  });
});
