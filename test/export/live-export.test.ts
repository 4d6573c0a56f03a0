import * as fs from 'node:fs';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { parseOtelSettings } from '../../src/config/otel.js';
import { LiveExport } from '../../src/export/live-export.js';
import type { LiveExportLimits } from '../../src/export/live-queue.js';
import { spawnFixture, waitForExit } from '../faults/helpers.js';
import { OtlpReceiver, RECEIVER_TOKEN, spansOnDisk, type ReceivedSpan } from '../helpers/otlp-receiver.js';
import { openSession } from '../helpers/sessions.js';
import { tempDir } from '../helpers/temp.js';

const RING = 16 * 1024;
const receivers: OtlpReceiver[] = [];

afterEach(async () => {
  for (const receiver of receivers.splice(0)) await receiver.stop();
});

function liveExport(endpoint: string, limits: Partial<LiveExportLimits> = {}): LiveExport {
  const settings = parseOtelSettings({ endpoint, headers: { authorization: `Bearer ${RECEIVER_TOKEN}` }, close_timeout_ms: 5000, capture_tool_content: true });
  const live = LiveExport.fromSettings(settings, {}, { maxQueue: 2048, maxBatch: 512, delayMs: 10, ringBytes: RING, ...limits });
  if (live === null) throw new Error('live export is off');
  return live;
}

/**
 * A closed session whose trail lines vary in length (so the ring's end falls inside a character
 * now and then), with multi-byte text, and one line longer than the whole ring. Tool content is
 * on the spans: a character decoded wrong would show.
 */
async function recordedSession(): Promise<{ lines: string[]; onDisk: ReceivedSpan[] }> {
  const { session } = openSession({ agent: { overrides: { otel: { capture_tool_content: true } } } });
  for (let i = 0; i < 40; i++) {
    session.emit('tool.call', { tool: 'fs.read', args: { text: 'é日本😀'.repeat(20 + i * 13) } });
    session.emit('tool.result', { tool: 'fs.read', result: { bytes: i } }, { telemetry: { latency_ms: 1.5 } });
  }
  session.emit('tool.call', { tool: 'fs.write', args: { text: 'ü'.repeat(20_000) } });
  session.emit('tool.result', { tool: 'fs.write', result: { ok: true } });
  const result = await session.close();
  const lines = fs.readFileSync(result.log_path, 'utf8').split('\n').filter((line) => line !== '');
  expect(Math.max(...lines.map((line) => Buffer.byteLength(line)))).toBeGreaterThan(RING);
  return { lines, onDisk: spansOnDisk(result.exports.otel ?? '') };
}

async function collector(): Promise<OtlpReceiver> {
  const receiver = await OtlpReceiver.start();
  receivers.push(receiver);
  return receiver;
}

describe('live export through the shared ring', () => {
  it('carries lines that wrap a small ring, split multi-byte text and outgrow it, as the same spans as the file', async () => {
    const { lines, onDisk } = await recordedSession();
    const receiver = await collector();
    const live = liveExport(receiver.endpoint);
    for (const line of lines) {
      live.add(`${line}\n`);
      // Each line goes into the ring where the last one ended: the export thread takes it first.
      while (live.behind > 0) await sleep(1);
    }
    const stats = await live.close();
    expect(stats).toMatchObject({ exported: onDisk.length, dropped: 0 });
    expect(receiver.spans).toEqual(onDisk);
  });

  it('loses no line when the export thread is behind: what the ring cannot take goes as a message', async () => {
    const { lines, onDisk } = await recordedSession();
    const receiver = await collector();
    const live = liveExport(receiver.endpoint);
    // One synchronous burst: the thread's word that it took anything cannot arrive before it ends.
    for (const line of lines) live.add(`${line}\n`);
    expect(live.behind).toBeGreaterThan(2 * RING);
    const stats = await live.close();
    expect(stats).toMatchObject({ exported: onDisk.length, dropped: 0 });
    expect(receiver.spans).toEqual(onDisk);
  });

  it('counts the lines it leaves out as dropped once the waiting text is over its bound', async () => {
    const { lines, onDisk } = await recordedSession();
    const receiver = await collector();
    const live = liveExport(receiver.endpoint, { backlogChars: 1 });
    for (const line of lines) live.add(`${line}\n`);
    const stats = await live.close();
    expect(stats.exported).toBeLessThan(onDisk.length);
    expect(stats.dropped).toBeGreaterThan(0);
    expect(receiver.spans).toHaveLength(stats.exported);
  });

  it('does not keep the process alive for a session left open, and sends its spans meanwhile', async () => {
    const receiver = await collector();
    const home = tempDir();
    fs.writeFileSync(path.join(home, 'config.yaml'), `otel:\n  endpoint: ${receiver.endpoint}\n  headers: { authorization: "Bearer ${RECEIVER_TOKEN}" }\n`);
    // Before the fix, the session's listener on the thread kept the process running for good.
    const child = spawnFixture('open-session.ts', [home, '20']);
    const sent = (): number => receiver.spans.filter((span) => span.name === 'execute_tool fs.read').length;
    for (let waited = 0; sent() < 20 && waited < 20_000; waited += 50) await sleep(50);
    const spans = sent();
    // Its spans sent, the session is left open and the script ends.
    fs.writeFileSync(path.join(home, 'go'), '');
    const exit = await waitForExit(child, 15_000);
    expect(spans).toBe(20);
    expect(exit, exit.stderr).toMatchObject({ code: 0, signal: null });
    expect(exit.stdout).toContain('left open');
  }, 40_000);
});
