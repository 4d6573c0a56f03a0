// aura with LangChain.js and LangGraph.js: tools through aura's guarded path, model runs recorded,
// and a call held for approval becomes a LangGraph interrupt. Runs offline with LangChain's fake
// chat model; put your chat model where `model` is made.
import { AIMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { FakeListChatModel } from '@langchain/core/utils/testing';
import { Command, END, MemorySaver, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { ToolNode, toolsCondition } from '@langchain/langgraph/prebuilt';
import { z } from 'zod';
import { agent, verifyTrail } from 'aura-harness';
import { AuraCallbackHandler, auraTools } from 'aura-harness/langchain';

class ScriptedModel extends FakeListChatModel {
  replies = [
    new AIMessage({ content: '', tool_calls: [{ id: 'call_1', name: 'refund', args: { order: 42 }, type: 'tool_call' }], usage_metadata: { input_tokens: 12, output_tokens: 5, total_tokens: 17 } }),
    new AIMessage({ content: 'Refunded order 42.', usage_metadata: { input_tokens: 20, output_tokens: 6, total_tokens: 26 } }),
  ];
  async _generate() { return { generations: [{ text: '', message: this.replies.shift() }] }; }
  bindTools() { return this; }
}
const refund = tool(async ({ order }) => `refund of order ${order} sent`, { name: 'refund', description: 'Refunds an order', schema: z.object({ order: z.number() }) });

const run = agent('examples/langchain', { rules: [{ type: 'confirm_before', tools: ['refund'] }] }).session();
const model = new ScriptedModel({ responses: [], callbacks: [new AuraCallbackHandler(run)] });
const tools = auraTools(run, [refund]);
const graph = new StateGraph(MessagesAnnotation)
  .addNode('agent', async (state) => ({ messages: [await model.invoke(state.messages)] }))
  .addNode('tools', new ToolNode(tools))
  .addEdge(START, 'agent')
  .addConditionalEdges('agent', toolsCondition, ['tools', END])
  .addEdge('tools', 'agent')
  .compile({ checkpointer: new MemorySaver() });
const config = { configurable: { thread_id: 'example' } };

const paused = await graph.invoke({ messages: [{ role: 'user', content: 'Refund order 42' }] }, config);
console.log(`interrupt: ${paused.__interrupt__[0].value.message}`);
const done = await graph.invoke(new Command({ resume: { approved: true, principal: 'alice' } }), config);
const closed = await run.close();

console.log(`answer: ${done.messages.at(-1).content}`);
console.log(`trail: ${closed.log_path} (${verifyTrail(closed.log_path).hash_chain_valid ? 'verifies' : 'BROKEN'})`);
if (done.messages.at(-1).content !== 'Refunded order 42.' || !verifyTrail(closed.log_path).hash_chain_valid) process.exit(1);
