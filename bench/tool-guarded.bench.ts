/**
 * The cost of policy at the egress: a guarded `session.tool()` call under 10 rules, a schema
 * check and redaction of a secret-like argument, beside (a) a bare `emit` of the same payload and
 * (b) the same four events a guarded call writes (tool.intent, tool.call, constraint.passed,
 * tool.result) emitted bare. (b) isolates what policy adds from what four trail lines cost; the
 * target is that policy adds at most 2× the cost of one bare emit.
 */

import type { AgentOptions } from '../src/index.js';
import { agent } from '../src/index.js';
import { describeSamples, formatCount, formatValue, interleave, median, samplesOf, since, withTempDir } from './utils/measure.js';
import { printResult, type Figure } from './utils/result.js';

const CALLS = 20_000;
const WARMUP_CALLS = 5_000;
const CEILING = 2;

// Ten rules of every kind, none of which denies the benchmark call, plus a schema on its args.
const GUARDED: AgentOptions = {
  rules: [
    { type: 'deny_tools', tools: ['shell.*', 'fs.delete', 'net.raw'] },
    { type: 'deny_tools', tools: ['payment.*'] },
    { type: 'allow_tools', tools: ['fs.*', 'search.*', 'mail.*'] },
    { type: 'allow_tools', tools: ['fs.read_file', 'fs.list'] },
    { type: 'max_tokens_per_step', limit: 8000 },
    { type: 'confirm_before', tools: ['mail.send'] },
    { type: 'confirm_before', tools: ['calendar.*'] },
    { type: 'deny_tools', tools: ['db.drop*'] },
    { type: 'allow_tools', tools: ['*'] },
    {
      type: 'schema_check',
      tool: 'fs.read_file',
      schema: { type: 'object', required: ['path'], properties: { path: { type: 'string' }, limit: { type: 'integer', minimum: 1 } } },
    },
  ],
};

function args(n: number): Record<string, unknown> {
  return { path: `/workspace/src/components/module_${n % 1000}.ts`, encoding: 'utf8', offset: 0, limit: 4096, access_token: 'tok-not-recorded', reason: 'inspect' };
}

/** Microseconds per operation for `calls` runs of `op` in a fresh session. */
async function perCall(options: AgentOptions, calls: number, op: (session: ReturnType<ReturnType<typeof agent>['session']>, n: number) => unknown): Promise<number> {
  return withTempDir('tool-guarded', async (home) => {
    const session = agent('bench/tool-guarded', { home, ...options }).session({ fsync: 'none', export: false });
    const start = performance.now();
    for (let i = 0; i < calls; i++) await op(session, i);
    const ms = since(start);
    await session.close();
    return (ms * 1000) / calls;
  });
}

const bareEmit = (options: AgentOptions, calls: number): Promise<number> => perCall(options, calls, (session, n) => session.emit('tool.note', { tool: 'fs.read_file', skill_id: null, args: args(n) }));

const guarded = (calls: number): Promise<number> => perCall(GUARDED, calls, (session, n) => session.tool('fs.read_file', args(n), () => ({ bytes: 4096 })));

const fourBare = (calls: number): Promise<number> =>
  perCall({}, calls, (session, n) => {
    const base = { tool: 'fs.read_file', skill_id: null, args: args(n) };
    session.emit('tool.intent', { ...base, membrane: 'egress' });
    const call = session.emit('tool.note', base, { telemetry: { attempt: 1 } });
    session.emit('constraint.note', { results: [{ passed: true, message: 'tool allowed: fs.read_file', rule: { type: 'allow_tools' }, audit_only: false }], for_event: call.event_id });
    session.emit('tool.outcome', { ...base, result: { bytes: 4096 } }, { telemetry: { attempt: 1, latency_ms: 0.01 } });
  });

async function main(): Promise<void> {
  console.log(`tool-guarded: ${formatCount(CALLS)} calls, 10 rules + a schema check + redaction; median of interleaved runs`);
  await guarded(WARMUP_CALLS);
  await fourBare(WARMUP_CALLS);
  await bareEmit({}, WARMUP_CALLS);
  const samples = await interleave([
    { name: 'emit', run: () => bareEmit({}, CALLS) },
    { name: 'four', run: () => fourBare(CALLS) },
    { name: 'guarded', run: () => guarded(CALLS) },
  ]);
  const emit = median(samplesOf(samples, 'emit'));
  const four = median(samplesOf(samples, 'four'));
  const call = median(samplesOf(samples, 'guarded'));
  const added = (call - four) / emit;
  console.log(`  bare emit of the payload                      ${describeSamples(samplesOf(samples, 'emit'), 'µs')}`);
  console.log(`  the four events of a guarded call, bare       ${describeSamples(samplesOf(samples, 'four'), 'µs')}`);
  console.log(`  guarded call (policy, schema, redaction)      ${describeSamples(samplesOf(samples, 'guarded'), 'µs')}`);
  console.log(`  policy adds ${formatValue(call - four, 'µs')} a call = ${added.toFixed(2)}× a bare emit (target <= ${CEILING}×: ${added <= CEILING ? 'met' : 'MISSED'})`);
  console.log(`  a guarded call costs ${(call / emit).toFixed(2)}× a bare emit in all (it writes four lines)`);
  const figures: Figure[] = [
    { name: 'bare emit', value: emit, unit: 'µs' },
    { name: 'four bare events of a guarded call', value: four, unit: 'µs' },
    { name: 'guarded call', value: call, unit: 'µs' },
    { name: 'policy cost / bare emit', value: added, unit: 'x', ceiling: CEILING },
    { name: 'guarded call / bare emit', value: call / emit, unit: 'x' },
  ];
  printResult({ scenario: 'tool-guarded', figures });
}

await main();
