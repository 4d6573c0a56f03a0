/**
 * The detector over a 100k-event trail (tool calls, results, violations, approvals, alerts),
 * beside the verify pass over the same trail, in the same run. Target: the detector costs no more
 * than verifying (detector events/s >= verify events/s).
 */

import * as path from 'node:path';
import { agent } from '../src/index.js';
import { buildConformance } from '../src/audit/conformance.js';
import { detect } from '../src/audit/detector.js';
import { readTrail } from '../src/spine/trail-reader.js';
import { verifyTrail } from '../src/spine/verify.js';
import { describeSamples, formatCount, GUARD_REPETITIONS, interleave, median, samplesOf, since, withTempDir } from './utils/measure.js';
import { toolCallPayload } from './utils/payload.js';
import { printResult, type Figure } from './utils/result.js';

const EVENTS = 100_000;

async function main(): Promise<void> {
  await withTempDir('detector', async (home) => {
    const session = agent('bench/detector', { home }).session({ fsync: 'none', export: false });
    for (let i = 0; session.eventCount < EVENTS; i++) {
      session.emit('tool.call', toolCallPayload(i));
      session.emit('tool.result', { tool: 'fs.read_file', result: { bytes: i } }, { telemetry: { latency_ms: 1.5 } });
      if (i % 50 === 0) session.emit('constraint.violated', { message: 'Tool denied: shell.exec', rule: { type: 'deny_tools', tools: ['shell.*'] }, audit_only: false, event: { kind: 'tool.call', payload: { tool: 'shell.exec' } } });
      if (i % 200 === 0) session.emit('observer.alert', { pattern: 'ACTION_FIXATION', observer_id: 'break' });
      if (i % 500 === 0) session.emit('constraint.approval_required', { request_id: `req_${i}`, message: 'approve?', rule: { type: 'confirm_before' } });
    }
    const result = await session.close();
    const trail = result.log_path;
    const { events, chain } = readTrail(trail);
    console.log(`detector: ${formatCount(events.length)} events in ${path.basename(trail)}; median of interleaved runs`);
    const samples = await interleave([
      {
        name: 'verify',
        run: () => {
          const start = performance.now();
          verifyTrail(trail);
          return (events.length / since(start)) * 1000;
        },
      },
      {
        name: 'detect',
        run: () => {
          const start = performance.now();
          const findings = detect({ events, chain, conformance: buildConformance(events, null) });
          if (findings.length === 0) throw new Error('the detector found nothing');
          return (events.length / since(start)) * 1000;
        },
      },
    ], GUARD_REPETITIONS);
    const verify = median(samplesOf(samples, 'verify'));
    const detector = median(samplesOf(samples, 'detect'));
    console.log(`  verify    ${describeSamples(samplesOf(samples, 'verify'), 'events/s')}`);
    console.log(`  detector  ${describeSamples(samplesOf(samples, 'detect'), 'events/s')}`);
    console.log(`  detector / verify throughput: ${(detector / verify).toFixed(2)} (target >= 1: ${detector >= verify ? 'met' : 'MISSED'})`);
    const figures: Figure[] = [
      { name: 'verify', value: verify, unit: 'events/s' },
      { name: 'detector', value: detector, unit: 'events/s' },
      { name: 'detector / verify throughput', value: detector / verify, unit: 'x', target: 1 },
    ];
    printResult({ scenario: 'detector', figures });
  });
}

await main();
