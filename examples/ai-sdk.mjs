// aura with the Vercel AI SDK: every tool call through aura's guarded path, every model call recorded.
// Runs offline with the AI SDK's mock model; put your provider's model where `model` is made.
import { generateText, jsonSchema, stepCountIs, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { agent, verifyTrail } from 'aura-harness';
import { auraModel, auraTools } from 'aura-harness/ai-sdk';

const usage = { inputTokens: { total: 12, noCache: 12, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } };
const replies = [
  { content: [{ type: 'tool-call', toolCallId: 'call_1', toolName: 'drop_table', input: '{"table":"users"}' }], finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage, warnings: [] },
  { content: [{ type: 'tool-call', toolCallId: 'call_2', toolName: 'weather', input: '{"city":"Lisbon"}' }], finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage, warnings: [] },
  { content: [{ type: 'text', text: 'Sunny in Lisbon.' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] },
];
const model = new MockLanguageModelV3({ doGenerate: async () => replies.shift() });
const tools = {
  weather: tool({ description: 'Forecast', inputSchema: jsonSchema({ type: 'object' }), execute: async () => ({ sky: 'sunny' }) }),
  drop_table: tool({ description: 'Drops a table', inputSchema: jsonSchema({ type: 'object' }), execute: async () => ({ dropped: true }) }),
};

const run = agent('examples/ai-sdk', { rules: [{ type: 'deny_tools', tools: ['drop_table'] }] }).session();
const result = await generateText({ model: auraModel(run, model), tools: auraTools(run, tools), prompt: 'Weather in Lisbon?', stopWhen: stepCountIs(5) });
const closed = await run.close();

console.log(`answer: ${result.text}`);
console.log(`trail: ${closed.log_path} (${verifyTrail(closed.log_path).hash_chain_valid ? 'verifies' : 'BROKEN'})`);
console.log(`denied: ${closed.summary.audit_report.findings.filter((f) => f.kind === 'POLICY_VIOLATION').length} call(s)`);
if (result.text !== 'Sunny in Lisbon.' || !verifyTrail(closed.log_path).hash_chain_valid) process.exit(1);
