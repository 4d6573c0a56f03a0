import * as fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { parseOtelSettings } from '../../src/config/otel.js';
import { LiveExport } from '../../src/export/live-export.js';
import { OtlpReceiver, RECEIVER_TOKEN, spansOnDisk } from '../helpers/otlp-receiver.js';
import { openSession } from '../helpers/sessions.js';

const receivers: OtlpReceiver[] = [];

afterEach(async () => {
  for (const receiver of receivers.splice(0)) await receiver.stop();
});

function liveExport(endpoint: string, ringBytes: number): LiveExport {
  const settings = parseOtelSettings({ endpoint, headers: { authorization: `Bearer ${RECEIVER_TOKEN}` }, close_timeout_ms: 5000, capture_tool_content: true });
  const live = LiveExport.fromSettings(settings, {}, { maxQueue: 2048, maxBatch: 512, delayMs: 10, ringBytes });
  if (live === null) throw new Error('live export is off');
  return live;
}

describe('live export through the shared ring', () => {
  it('carries lines that wrap a small ring, split multi-byte text and outgrow it, as the same spans as the file', async () => {
    // Tool content on the spans: a character decoded wrong would show.
    const { session } = openSession({ agent: { overrides: { otel: { capture_tool_content: true } } } });
    for (let i = 0; i < 40; i++) {
      // Lengths that vary, so the ring's end falls inside a character now and then.
      session.emit('tool.call', { tool: 'fs.read', args: { text: 'é日本😀'.repeat(20 + i * 13) } });
      session.emit('tool.result', { tool: 'fs.read', result: { bytes: i } }, { telemetry: { latency_ms: 1.5 } });
    }
    // One line longer than the whole ring.
    session.emit('tool.call', { tool: 'fs.write', args: { text: 'ü'.repeat(20_000) } });
    session.emit('tool.result', { tool: 'fs.write', result: { ok: true } });
    const result = await session.close();
    const lines = fs.readFileSync(result.log_path, 'utf8').split('\n').filter((line) => line !== '');
    expect(Math.max(...lines.map((line) => Buffer.byteLength(line)))).toBeGreaterThan(16 * 1024);

    const collector = await OtlpReceiver.start();
    receivers.push(collector);
    // The export thread is up before the lines come, so none waits long enough to be left out.
    await liveExport(collector.endpoint, 16 * 1024).close();
    const live = liveExport(collector.endpoint, 16 * 1024);
    for (const line of lines) {
      live.add(`${line}\n`);
      await sleep(5);
    }
    const stats = await live.close();
    const onDisk = spansOnDisk(result.exports.otel ?? '');
    expect(stats).toMatchObject({ exported: onDisk.length, dropped: 0 });
    expect(collector.spans).toEqual(onDisk);
  });
});
