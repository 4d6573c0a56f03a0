/**
 * pii-mask: PII masking throughput in MB/s of payload text. The payloads are support-ticket
 * notes of about 1 KB, mixed prose and ids where one in four values is personal data (e-mails,
 * phones, card numbers, IBANs, IP addresses) and the rest are near-misses (order ids, versions,
 * dates, 16-digit numbers failing Luhn), so the detectors do the work they do on real traffic.
 *
 * Variants, each over the same payloads:
 * - **baseline**: `session.emit` on a session whose profile has no middleware;
 * - **emit + pii_mask**: `session.emit` with `pii_mask` (strategy mask) on the `emit` boundary:
 *   masking, `middleware.applied` and the trail write;
 * - **masker alone**: `PiiMasker.mask` over the payloads, nothing recorded.
 *
 * The ratio emit + pii_mask / baseline is what masking costs a session that turns it on.
 */

import { agent } from '../src/index.js';
import { PII_ENTITIES } from '../src/middleware/pii-detectors.js';
import { PiiMasker } from '../src/middleware/pii-mask.js';
import { describeSamples, formatCount, GUARD_REPETITIONS, interleave, median, medianPairedRatio, samplesOf, since, withTempDir } from './utils/measure.js';
import { printResult, type Figure } from './utils/result.js';

const PAYLOADS = Number(process.env['AURA_BENCH_PII_PAYLOADS'] ?? 4_000);
const WARMUP_PAYLOADS = 500;

const PERSONAL = ['jane.doe@example.com', '+351 912 345 678', '4111 1111 1111 1111', 'DE89 3704 0044 0532 0130 00', '192.168.14.20', 'ops+alerts@mail.acme-corp.co.uk', '(415) 555-2671'];
const NEAR_MISSES = ['ORD-2024-555-0123', 'v2.14.3', '2026-12-02', '4111 1111 1111 1112', 'build 1.2.3', 'ticket #88231', 'SKU-55512-0042', 'release 10.0.1'];
const PROSE = [
  'The customer reports that the export stopped after the last update and asks for a call back.',
  'Agent checked the account, found two failed payments and a pending refund for the same order.',
  'Escalated to billing; the invoice shows the discount twice and the total does not match the cart.',
  'Follow-up scheduled for Monday morning, after the nightly job has re-run the reconciliation.',
];

/** Payload `n`: a ticket whose note and history mix prose, personal data and near-misses. */
function ticket(n: number): Record<string, unknown> {
  const pick = <T>(list: readonly T[], k: number): T => list[(n * 7 + k * 3) % list.length] as T;
  const sentence = (k: number): string => `${pick(PROSE, k)} Ref ${pick(NEAR_MISSES, k)}${k % 4 === 0 ? `, contact ${pick(PERSONAL, k)}` : ''}.`;
  return {
    ticket_id: `T-${100_000 + n}`,
    subject: `Export issue ${pick(NEAR_MISSES, n)}`,
    note: [0, 1, 2, 3, 4, 5].map(sentence).join(' '),
    history: [{ by: 'agent', text: sentence(6) }, { by: 'customer', text: sentence(8) }],
    priority: n % 3,
  };
}

/** The UTF-8 bytes of every string in a value: the payload text a masker reads. */
function textBytes(value: unknown): number {
  if (typeof value === 'string') return Buffer.byteLength(value);
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + textBytes(item), 0);
  if (value !== null && typeof value === 'object') return Object.values(value).reduce((sum: number, item) => sum + textBytes(item), 0);
  return 0;
}

async function emitRun(payloads: readonly Record<string, unknown>[], masking: boolean, megabytes: number): Promise<number> {
  return withTempDir(`pii-${masking ? 'mask' : 'base'}`, async (home) => {
    const options = masking ? { home, middleware: { pii_mask: { strategy: 'mask', boundaries: ['emit'] } } } : { home };
    const session = agent('bench/pii', options).session({ export: false });
    const start = performance.now();
    for (const payload of payloads) session.emit('ticket.note', payload);
    const ms = since(start);
    const result = await session.close();
    if (!result.chain.hash_chain_valid) throw new Error('the trail did not verify');
    if (masking && result.audit_report.scorecard.middleware.applied === 0) throw new Error('nothing was masked: the bench measures the wrong thing');
    return megabytes / (ms / 1000);
  });
}

function maskerRun(payloads: readonly Record<string, unknown>[], megabytes: number): number {
  const masker = new PiiMasker('mask', PII_ENTITIES);
  let redactions = 0;
  const start = performance.now();
  for (const payload of payloads) redactions += masker.mask(payload, '').report?.redactions ?? 0;
  const ms = since(start);
  if (redactions === 0) throw new Error('nothing was masked');
  return megabytes / (ms / 1000);
}

async function main(): Promise<void> {
  const payloads = Array.from({ length: PAYLOADS }, (_, n) => ticket(n));
  const bytes = payloads.reduce((sum, payload) => sum + textBytes(payload), 0);
  const megabytes = bytes / 1e6;
  console.log(`pii-mask: ${formatCount(PAYLOADS)} ticket payloads, ${formatCount(bytes / PAYLOADS)} bytes of text each (${megabytes.toFixed(2)} MB); median of interleaved runs`);
  const warm = payloads.slice(0, WARMUP_PAYLOADS);
  await emitRun(warm, false, 1);
  await emitRun(warm, true, 1);
  maskerRun(warm, 1);

  const samples = await interleave([
    { name: 'baseline', run: () => emitRun(payloads, false, megabytes) },
    { name: 'masked', run: () => emitRun(payloads, true, megabytes) },
    { name: 'masker', run: () => maskerRun(payloads, megabytes) },
  ], GUARD_REPETITIONS);
  const baseline = samplesOf(samples, 'baseline');
  const masked = samplesOf(samples, 'masked');
  const masker = samplesOf(samples, 'masker');
  const ratio = median(masked) / median(baseline);
  const paired = medianPairedRatio(masked, baseline);
  console.log(`  baseline: emit, no middleware          ${describeSamples(baseline, 'MB/s')}`);
  console.log(`  emit + pii_mask (mask, emit boundary)  ${describeSamples(masked, 'MB/s')}`);
  console.log(`  masker alone (PiiMasker.mask)          ${describeSamples(masker, 'MB/s')}`);
  console.log(`  ratio emit + pii_mask / baseline: ${ratio.toFixed(2)} (same-round median ${paired.toFixed(2)})`);

  const figures: Figure[] = [
    { name: 'emit baseline (no middleware)', value: median(baseline), unit: 'MB/s' },
    { name: 'emit + pii_mask', value: median(masked), unit: 'MB/s' },
    { name: 'masker alone', value: median(masker), unit: 'MB/s' },
    { name: 'ratio emit + pii_mask / baseline', value: ratio, unit: 'x' },
    { name: 'same-round ratio emit + pii_mask / baseline', value: paired, unit: 'x' },
  ];
  printResult({ scenario: 'pii-mask', figures });
}

await main();
