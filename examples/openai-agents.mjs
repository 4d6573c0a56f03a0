// aura with the OpenAI Agents SDK: function tools through aura's guarded path (approvals become the
// SDK's own interruptions), model calls recorded. Runs offline with a scripted `Model`; put your
// model (for example from OpenAIProvider) where `model` is made.
import { Agent, Runner, tool, Usage } from '@openai/agents-core';
import { z } from 'zod';
import { agent, verifyTrail } from 'aura-harness';
import { auraModel, auraTools } from 'aura-harness/openai-agents';

const usage = () => new Usage({ requests: 1, inputTokens: 12, outputTokens: 5, totalTokens: 17 });
const replies = [
  { usage: usage(), output: [{ type: 'function_call', callId: 'call_1', name: 'transfer', arguments: '{"amount":50}', status: 'completed' }] },
  { usage: usage(), output: [{ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Transferred 50.' }] }] },
];
const model = { getResponse: async () => replies.shift(), getStreamedResponse: () => { throw new Error('not streamed'); } };
const transfer = tool({ name: 'transfer', description: 'Moves money', parameters: z.object({ amount: z.number() }), execute: async ({ amount }) => `moved ${amount}` });

const run = agent('examples/openai-agents', { rules: [{ type: 'confirm_before', tools: ['transfer'] }] }).session();
const planner = new Agent({ name: 'treasurer', instructions: 'Move money when asked.', model: auraModel(run, model), tools: auraTools(run, [transfer], { principal: 'alice' }) });
const runner = new Runner({ tracingDisabled: true });

const held = await runner.run(planner, 'Transfer 50');
console.log(`approval asked for: ${held.interruptions.map((item) => item.rawItem.name).join(', ')}`);
held.state.approve(held.interruptions[0]);
const result = await runner.run(planner, held.state);
const closed = await run.close();

console.log(`answer: ${result.finalOutput}`);
console.log(`trail: ${closed.log_path} (${verifyTrail(closed.log_path).hash_chain_valid ? 'verifies' : 'BROKEN'})`);
if (result.finalOutput !== 'Transferred 50.' || !verifyTrail(closed.log_path).hash_chain_valid) process.exit(1);
