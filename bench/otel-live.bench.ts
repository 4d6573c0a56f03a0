/**
 * otel-live: events per second through `session.emit` with live OTLP export on (config
 * `otel.endpoint`, to a loopback receiver in this process that answers 200 at once) beside the
 * same session with it off. The receiver is a child process, so its work is not counted. Events are a call and its result, so every other event ends a span
 * that joins the export queue. The loop yields to the event loop every 1,000 events in both
 * variants, so the exporter's batching, encoding and sending run inside the timed window instead
 * of being left for after it. Target: export on at least 0.85× the rate of export off.
 */

import { spawn } from 'node:child_process';
import { agent } from '../src/index.js';
import { describeSamples, formatCount, GUARD_REPETITIONS, interleave, median, medianPairedRatio, samplesOf, since, withTempDir } from './utils/measure.js';
import { KIND, toolCallPayload } from './utils/payload.js';
import { printResult, type Figure } from './utils/result.js';

const EVENTS = Number(process.env['AURA_BENCH_OTEL_EVENTS'] ?? 100_000);
const WARMUP_EVENTS = 20_000;
const CHUNK = 1_000;
const TARGET_RATIO = 0.85;

// The receiver runs in its own process, as a collector would: its work is not the session's.
const RECEIVER = `
const http = require('node:http');
let bytes = 0;
const server = http.createServer((request, response) => {
  request.on('data', (chunk) => (bytes += chunk.length));
  request.on('end', () => response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
});
server.listen(0, '127.0.0.1', () => process.stdout.write(server.address().port + '\\n'));
process.on('message', () => process.send(bytes));
`;

/** A loopback receiver in a child process that reads each request to the end and answers 200. */
async function startReceiver(): Promise<{ endpoint: string; received: () => Promise<number>; stop: () => void }> {
  const child = spawn(process.execPath, ['-e', RECEIVER], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  const port = await new Promise<string>((resolve, reject) => {
    child.stdout?.once('data', (chunk: Buffer) => resolve(chunk.toString('utf8').trim()));
    child.once('error', reject);
  });
  return {
    endpoint: `http://127.0.0.1:${port}`,
    received: () =>
      new Promise((resolve) => {
        child.once('message', (bytes) => resolve(Number(bytes)));
        child.send('bytes');
      }),
    stop: () => child.kill(),
  };
}

interface Run {
  readonly eventsPerSecond: number;
  readonly exported: number;
  readonly dropped: number;
}

async function benchSession(endpoint: string | null, events: number): Promise<Run> {
  return withTempDir('otel-live', async (home) => {
    const overrides = endpoint === null ? {} : { otel: { endpoint, protocol: 'http/protobuf' } };
    // Export at close is off in both: it happens after the timed loop and is the same work either way.
    const session = agent('bench/otel-live', { home, overrides }).session({ export: false });
    const start = performance.now();
    for (let i = 0; i < events; i += 2) {
      session.emit(KIND, toolCallPayload(i));
      session.emit('tool.result', { tool: 'fs.read_file', result: { bytes: 4096 } }, { telemetry: { latency_ms: 1.5 } });
      if (i % CHUNK === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    const ms = since(start);
    const result = await session.close();
    return { eventsPerSecond: (events / ms) * 1000, exported: result.summary.otel?.exported ?? 0, dropped: result.summary.otel?.dropped ?? 0 };
  });
}

async function main(): Promise<void> {
  console.log(`otel-live: ${formatCount(EVENTS)} events (call + result pairs), live OTLP export on vs off; median of interleaved runs`);
  const receiver = await startReceiver();
  try {
    await benchSession(null, WARMUP_EVENTS);
    await benchSession(receiver.endpoint, WARMUP_EVENTS);
    let last: Run | null = null;
    const samples = await interleave([
      { name: 'off', run: async () => (await benchSession(null, EVENTS)).eventsPerSecond },
      {
        name: 'on',
        run: async () => {
          last = await benchSession(receiver.endpoint, EVENTS);
          return last.eventsPerSecond;
        },
      },
    ], GUARD_REPETITIONS);
    const off = samplesOf(samples, 'off');
    const on = samplesOf(samples, 'on');
    const ratio = median(on) / median(off);
    const paired = medianPairedRatio(on, off);
    const lastRun = last as Run | null;
    console.log(`  export off                 ${describeSamples(off, 'events/s')}`);
    console.log(`  export on (http/protobuf)  ${describeSamples(on, 'events/s')}`);
    console.log(`  last 'on' run: ${formatCount(lastRun?.exported ?? 0)} spans exported, ${formatCount(lastRun?.dropped ?? 0)} dropped; ${formatCount(await receiver.received())} bytes received in all`);
    console.log(`  ratio on / off: ${ratio.toFixed(2)} (target >= ${TARGET_RATIO.toFixed(2)}: ${ratio >= TARGET_RATIO ? 'met' : 'MISSED'})`);
    console.log(`  same-round ratios on / off, median: ${paired.toFixed(2)} (a cross-check on drift)`);
    const figures: Figure[] = [
      { name: 'emit, live export off', value: median(off), unit: 'events/s' },
      { name: 'emit, live export on', value: median(on), unit: 'events/s' },
      { name: 'emit ratio live export on / off', value: ratio, unit: 'x', target: TARGET_RATIO },
      { name: 'emit same-round ratio on / off', value: paired, unit: 'x' },
    ];
    printResult({ scenario: 'otel-live', figures });
  } finally {
    receiver.stop();
  }
}

await main();
