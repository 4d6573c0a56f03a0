/**
 * What each framework adapter adds to one tool call: the same scripted agent run (one model call
 * and one tool call a step) on the real framework, without aura and with its adapter (tools and
 * model wrapped, every call through the guarded path into a trail; LangChain's callback handler on
 * the model, as the README has it, and again on the graph's run). Target: at most 150 µs a call
 * at the median. And the wall time of one Claude Code `PreToolUse` hook process (the built
 * `aura hook claude-code`, on a session that already has events), beside a bare `node -e 0`:
 * target at most 150 ms at the median. The hook processes start without NODE_EXTRA_CA_CERTS, and
 * are also timed with it where it is set (bench/utils/node-start.ts).
 */

import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { AIMessage, type BaseMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import { tool as langchainTool } from '@langchain/core/tools';
import { FakeListChatModel } from '@langchain/core/utils/testing';
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { ToolNode, toolsCondition } from '@langchain/langgraph/prebuilt';
import { Agent as AgentsAgent, Runner, tool as agentsTool, Usage, type Model, type ModelResponse } from '@openai/agents-core';
import { generateText, jsonSchema, stepCountIs, tool as aiTool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import * as aiSdk from '../src/adapters/ai-sdk/index.js';
import * as langchain from '../src/adapters/langchain/index.js';
import * as openaiAgents from '../src/adapters/openai-agents/index.js';
import { agent, type Session } from '../src/index.js';
import { EXTRA_CA_CERTS, extraCaCertsNote, withoutExtraCaCerts } from './utils/node-start.js';
import { describeSamples, formatValue, interleave, median, medianPairedDifference, medianPairedRatio, samplesOf, since, withTempDir } from './utils/measure.js';
import { printResult, type Figure } from './utils/result.js';

// Short conversations, many of them: a framework's own cost per step grows with the conversation,
// and would drown what aura adds in a long one.
const CALLS = 10;
const CONVERSATIONS = 20;
const CEILING_US = 150;
/**
 * The goal's figure is taken as aura's code meets a tool call in a process still compiling it:
 * after one untimed pass, with a collection forced before each sample, which lets V8 drop the
 * hidden classes of a closed session's objects and the optimized code that checked them. The
 * warm figure is taken after three more untimed passes, with no collection forced, as in a process
 * that has run aura for a while: the frameworks' own garbage lands on both sides of a round.
 */
const WARM_PASSES = 3;
// The warm figures are told beside the goal's, not against a target: three rounds.
const WARM_ROUNDS = 3;
const HOOK_RUNS = 15;
const HOOK_CEILING_MS = 150;
const ROOT = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const BIN = path.join(ROOT, 'dist', 'cli', 'bin.cjs');
const PROFILE = { rules: [{ type: 'deny_tools', tools: ['delete_account'] }] };

/** A session in a temp home, for one run. */
async function withSession<T>(run: (session: Session) => Promise<T>): Promise<T> {
  return withTempDir('adapters', async (home) => {
    const session = agent('bench/adapters', { home, ...PROFILE }).session({ fsync: 'none', export: false, traceParent: null });
    try {
      return await run(session);
    } finally {
      await session.close();
    }
  });
}

// ---- AI SDK 6
const aiUsage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 3, text: 3, reasoning: 0 } };
function aiModel(): MockLanguageModelV3 {
  let step = 0;
  return new MockLanguageModelV3({
    doGenerate: async () =>
      step++ < CALLS
        ? { content: [{ type: 'tool-call', toolCallId: `call_${step}`, toolName: 'lookup', input: `{"n":${step}}` }], finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage: aiUsage, warnings: [] }
        : { content: [{ type: 'text', text: 'done' }], finishReason: { unified: 'stop', raw: 'stop' }, usage: aiUsage, warnings: [] },
  });
}
const aiTools = { lookup: aiTool({ description: 'Looks up', inputSchema: jsonSchema<{ n: number }>({ type: 'object' }), execute: async ({ n }) => ({ n }) }) };
async function aiRun(session: Session | null): Promise<number> {
  const model = aiModel();
  return cpuOf(() => generateText({ model: session === null ? model : aiSdk.auraModel(session, model), tools: session === null ? aiTools : aiSdk.auraTools(session, aiTools), prompt: 'go', stopWhen: stepCountIs(CALLS + 2) }));
}

// ---- LangChain / LangGraph
class ScriptedChat extends FakeListChatModel {
  private step = 0;
  override async _generate(): Promise<ChatResult> {
    const n = this.step++;
    const message = n < CALLS ? new AIMessage({ content: '', tool_calls: [{ id: `call_${n}`, name: 'lookup', args: { n }, type: 'tool_call' }] }) : new AIMessage('done');
    return { generations: [{ text: '', message }] };
  }
  override bindTools(): never {
    return this as never;
  }
}
const lcTool = langchainTool(async ({ n }: { n: number }) => `n=${n}`, { name: 'lookup', description: 'Looks up', schema: z.object({ n: z.number() }) });
/** As the README has it: the callback handler on the model, or (`onRun`) on the graph's run. */
async function langchainRun(session: Session | null, onRun = false): Promise<number> {
  const handler = session === null ? null : new langchain.AuraCallbackHandler(session);
  const model = new ScriptedChat({ responses: [], ...(handler === null || onRun ? {} : { callbacks: [handler] }) });
  const tools = session === null ? [lcTool] : langchain.auraTools(session, [lcTool]);
  const graph = new StateGraph(MessagesAnnotation)
    .addNode('agent', async (state: { messages: BaseMessage[] }) => ({ messages: [await model.invoke(state.messages)] }))
    .addNode('tools', new ToolNode(tools))
    .addEdge(START, 'agent')
    .addConditionalEdges('agent', toolsCondition, ['tools', END])
    .addEdge('tools', 'agent')
    .compile();
  return cpuOf(() => graph.invoke({ messages: [{ role: 'user', content: 'go' }] }, { recursionLimit: CALLS * 2 + 10, ...(handler === null || !onRun ? {} : { callbacks: [handler] }) }));
}

// ---- OpenAI Agents SDK
class ScriptedModel implements Model {
  private step = 0;
  async getResponse(): Promise<ModelResponse> {
    const n = this.step++;
    const usage = new Usage({ requests: 1, inputTokens: 10, outputTokens: 3, totalTokens: 13 });
    if (n >= CALLS) return { usage, output: [{ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'done' }] }] };
    return { usage, output: [{ type: 'function_call', callId: `call_${n}`, name: 'lookup', arguments: `{"n":${n}}`, status: 'completed' }] };
  }
  // eslint-disable-next-line require-yield
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error('not streamed');
  }
}
const agentsLookup = agentsTool({ name: 'lookup', description: 'Looks up', parameters: z.object({ n: z.number() }), execute: async ({ n }) => `n=${n}` });
const runner = new Runner({ tracingDisabled: true });
async function agentsRun(session: Session | null): Promise<number> {
  const model = new ScriptedModel();
  const planner = new AgentsAgent({ name: 'bench', instructions: 'go', model: session === null ? model : openaiAgents.auraModel(session, model), tools: session === null ? [agentsLookup] : openaiAgents.auraTools(session, [agentsLookup]) });
  return cpuOf(() => runner.run(planner, 'go', { maxTurns: CALLS + 5 }));
}

/**
 * Microseconds of this process's CPU (user and system) a tool call costs in one run, without aura
 * and with it. CPU time, not wall time: on a shared machine, time spent waiting for a core is
 * someone else's load, and it swamped the difference measured here (runs everything in-process).
 */
async function perCall(run: (session: Session | null) => Promise<number>, mode: 'alone' | 'glue' | 'aura'): Promise<number> {
  const conversations = async (session: Session | null): Promise<number> => {
    let cpu = 0;
    for (let i = 0; i < CONVERSATIONS; i++) cpu += await run(session);
    return cpu;
  };
  const cpu = mode === 'aura' ? await withSession(conversations) : await conversations(mode === 'glue' ? glueSession() : null);
  return cpu / (CALLS * CONVERSATIONS);
}

/**
 * What the adapters ask of a session, answered without a trail: a run through the adapter with it
 * costs the framework, the adapter's own code and nothing of aura's recording. Diagnostic only,
 * to show apart what an adapter adds from what recording costs inside a framework.
 */
function glueSession(): Session {
  let events = 0;
  const glue = {
    id: 'glue',
    stoppedBy: null,
    agent: { policy: { rules: [] } },
    emit: () => ({ event_id: `e${++events}` }),
    tool: (_tool: string, args: Record<string, unknown>, fn: (live: Record<string, unknown>) => unknown) => Promise.resolve(fn({ ...args })),
  };
  return glue as unknown as Session;
}

/**
 * The floor: what the trail itself costs a tool call, with no framework: one guarded
 * `session.tool()` and the model call's two events, on the same profile.
 */
async function floorRun(session: Session | null): Promise<number> {
  if (session === null) return 0;
  return cpuOf(async () => {
    for (let n = 0; n < CALLS; n++) {
      session.emit('model.call', { model: 'scripted', messages: n + 1, tools: ['lookup'] });
      session.emit('model.result', { model: 'scripted', finish_reason: 'tool-calls', prompt_tokens: 10, completion_tokens: 3, total_tokens: 13, tool_calls: [{ tool: 'lookup', tool_call_id: `call_${n}` }] });
      await session.tool('lookup', { n }, () => ({ n }), { callId: `call_${n}` });
    }
  });
}

/** Microseconds of CPU `work` took (the session's open and close are outside: this is the run). */
async function cpuOf(work: () => Promise<unknown>): Promise<number> {
  const before = process.cpuUsage();
  await work();
  const used = process.cpuUsage(before);
  return used.user + used.system;
}

// ---- Claude Code hook process
function wall(command: string, args: readonly string[], input: string, env = withoutExtraCaCerts()): Promise<number> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn(command, [...args], { stdio: ['pipe', 'ignore', 'inherit'], env });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(since(start)) : reject(new Error(`exit ${code}`))));
    child.stdin.end(input);
  });
}

async function hookRuns(): Promise<{ hook: number[]; bare: number[]; withCerts: number[] }> {
  return withTempDir('adapters-hook', async (home) => {
    const profile = path.join(home, 'profile.yaml');
    fs.writeFileSync(profile, 'agent_ref: bench/claude\nrules:\n  - { type: deny_tools, tools: [delete_account] }\nobservers:\n  - { preset: break }\n');
    const args = [BIN, 'hook', 'claude-code', '--home', home, '--profile', profile];
    const pre = (n: number): string => JSON.stringify({ session_id: 'bench', hook_event_name: 'PreToolUse', cwd: home, permission_mode: 'default', tool_name: 'Bash', tool_input: { command: `ls ${n}` }, tool_use_id: `toolu_${n}` });
    // A session with history: the hook takes it up from the trail each time.
    for (let n = 0; n < 20; n++) await wall(process.execPath, args, pre(n));
    const hook: number[] = [];
    const bare: number[] = [];
    const withCerts: number[] = [];
    for (let n = 0; n < HOOK_RUNS; n++) {
      bare.push(await wall(process.execPath, ['-e', '0'], ''));
      hook.push(await wall(process.execPath, args, pre(100 + n)));
      if (EXTRA_CA_CERTS !== undefined) withCerts.push(await wall(process.execPath, args, pre(200 + n), { ...withoutExtraCaCerts(), NODE_EXTRA_CA_CERTS: EXTRA_CA_CERTS }));
    }
    return { hook, bare, withCerts };
  });
}

/** Prints one set of rounds and returns its figures; the goal's (no `label`) carry the ceiling. */
function reported(samples: ReadonlyMap<string, readonly number[]>, frameworks: readonly { readonly name: string }[], label: string): Figure[] {
  const floor = median(samplesOf(samples, 'floor'));
  console.log(`  the trail's own cost of a tool call (a guarded session.tool() and a model call's two events, no framework) ${describeSamples(samplesOf(samples, 'floor'), 'µs')}`);
  const figures: Figure[] = [{ name: `trail's own cost of a tool call${label}`, value: floor, unit: 'µs' }];
  for (const framework of frameworks) {
    const alone = samplesOf(samples, `${framework.name} alone`);
    const guarded = samplesOf(samples, `${framework.name} with aura`);
    const glue = samples.get(`${framework.name} glue`);
    const added = medianPairedDifference(guarded, alone);
    const ratio = medianPairedRatio(guarded, alone);
    const verdict = label === '' ? ` (target <= ${CEILING_US} µs: ${added <= CEILING_US ? 'met' : 'MISSED'})` : '';
    console.log(`  ${framework.name}`);
    console.log(`    alone     ${describeSamples(alone, 'µs')}`);
    console.log(`    with aura ${describeSamples(guarded, 'µs')}`);
    if (glue !== undefined) {
      const glueAdded = medianPairedDifference(glue, alone);
      console.log(`    the adapter's own code (the session's calls answered without a trail) ${formatValue(glueAdded, 'µs')} a tool call, median of the rounds' differences`);
      figures.push({ name: `${framework.name}: the adapter's own code a tool call`, value: glueAdded, unit: 'µs' });
    }
    console.log(`    aura adds ${formatValue(added, 'µs')} a tool call, median of the rounds' differences${verdict}; ${ratio.toFixed(2)}× the framework alone; beyond the trail's own cost: ${formatValue(added - floor, 'µs')}`);
    figures.push({ name: `${framework.name}: aura adds a tool call${label}`, value: added, unit: 'µs', ...(label === '' ? { ceiling: CEILING_US } : {}) });
    figures.push({ name: `${framework.name}: with aura / alone${label}`, value: ratio, unit: 'x' });
  }
  return figures;
}

async function main(): Promise<void> {
  if (!fs.existsSync(BIN)) throw new Error('dist/ is missing: run npm run build first');
  console.log(`adapters: ${CONVERSATIONS} conversations of ${CALLS} tool calls (one model call each), the framework alone and with aura's adapter; CPU time, median of interleaved runs`);
  const frameworks = [
    { name: 'ai-sdk', run: aiRun },
    { name: 'langchain', run: (session: Session | null) => langchainRun(session) },
    { name: 'langchain (handler on the run)', run: (session: Session | null) => langchainRun(session, true) },
    { name: 'openai-agents', run: agentsRun },
  ] as const;
  const variants = [
    { name: 'floor', run: () => perCall(floorRun, 'aura') },
    ...frameworks.flatMap((framework) => [
      { name: `${framework.name} alone`, run: () => perCall(framework.run, 'alone') },
      { name: `${framework.name} glue`, run: () => perCall(framework.run, 'glue') },
      { name: `${framework.name} with aura`, run: () => perCall(framework.run, 'aura') },
    ]),
  ];
  const untimed = async (passes: number, which = variants): Promise<void> => {
    for (let pass = 0; pass < passes; pass++) for (const variant of which) await variant.run();
  };
  await untimed(1);
  const figures = reported(await interleave(variants), frameworks, '');
  console.log(`  warm: after ${WARM_PASSES} more untimed passes, no collection forced before a sample`);
  // The adapter's own code is measured once, above: the warm rounds leave it out, to keep the bench short.
  const warm = variants.filter((variant) => !variant.name.endsWith(' glue'));
  await untimed(WARM_PASSES, warm);
  figures.push(...reported(await interleave(warm, WARM_ROUNDS, { collect: false }), frameworks, ', warm'));
  console.log(`  ${extraCaCertsNote()}`);
  const { hook, bare, withCerts } = await hookRuns();
  const hookMs = median(hook);
  const bareMs = median(bare);
  console.log(`  claude-code PreToolUse hook process ${describeSamples(hook, 'ms')} (target <= ${HOOK_CEILING_MS} ms: ${hookMs <= HOOK_CEILING_MS ? 'met' : 'MISSED'})`);
  console.log(`  bare node -e 0                      ${describeSamples(bare, 'ms')}; the hook is ${(hookMs / bareMs).toFixed(2)}× a bare Node start`);
  figures.push({ name: 'claude-code PreToolUse hook process', value: hookMs, unit: 'ms', ceiling: HOOK_CEILING_MS });
  if (withCerts.length > 0) {
    console.log(`  the hook with NODE_EXTRA_CA_CERTS    ${describeSamples(withCerts, 'ms')}`);
    figures.push({ name: 'claude-code hook with NODE_EXTRA_CA_CERTS', value: median(withCerts), unit: 'ms' });
  }
  figures.push({ name: 'bare node start', value: bareMs, unit: 'ms' });
  figures.push({ name: 'hook / bare node start', value: hookMs / bareMs, unit: 'x' });
  printResult({ scenario: 'adapters', figures });
}

await main();
