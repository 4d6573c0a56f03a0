import * as fs from 'node:fs';
import type { BaseCallbackHandler } from '@langchain/core/callbacks/base';
import { awaitAllCallbacks } from '@langchain/core/callbacks/promises';
import { AIMessage, type BaseMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import { tool } from '@langchain/core/tools';
import { FakeListChatModel } from '@langchain/core/utils/testing';
import { Command, END, MemorySaver, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { ToolNode, toolsCondition } from '@langchain/langgraph/prebuilt';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AuraCallbackHandler, auraTools, type AuraInterrupt } from '../../src/adapters/langchain/index.js';
import { LoopBrokenError } from '../../src/errors.js';
import { APPROVER, expectScenarioTrail, scenarioSession, trailEvents } from '../helpers/adapter-scenario.js';
import { SCENARIO_SCRIPT, type ScriptStep } from '../fixtures/scenario-script.js';

/** LangChain's fake chat model, answering each call with the next step of the script (a tool call or text). */
class ScriptedChatModel extends FakeListChatModel {
  readonly seen: BaseMessage[][] = [];
  private next = 0;

  constructor(
    private readonly script: readonly ScriptStep[],
    callbacks?: BaseCallbackHandler[],
  ) {
    super({ responses: [], ...(callbacks === undefined ? {} : { callbacks }) });
  }

  override async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    this.seen.push(messages);
    const step = this.script[this.next++];
    if (step === undefined) throw new Error('the script has no more steps');
    const usage_metadata = { input_tokens: 30, output_tokens: 7, total_tokens: 37 };
    const message =
      typeof step === 'string'
        ? new AIMessage({ content: step, usage_metadata } as never)
        : new AIMessage({ content: '', tool_calls: [{ id: step[0], name: step[1], args: step[2], type: 'tool_call' }], usage_metadata } as never);
    return { generations: [{ text: '', message }] };
  }

  // The script answers whatever tools are bound.
  override bindTools(): never {
    return this as never;
  }
}

function appTools(ran: string[]) {
  const schema = z.object({}).passthrough();
  return [
    tool(async (input) => (ran.push(`weather ${JSON.stringify(input)}`), 'sunny'), { name: 'weather', description: 'Forecast', schema }),
    tool(async () => (ran.push('delete_account'), 'deleted'), { name: 'delete_account', description: 'Deletes an account', schema }),
    tool(async (input) => (ran.push(`pay ${JSON.stringify(input)}`), 'paid'), { name: 'pay', description: 'Pays', schema }),
    tool(async () => (ran.push('job_status'), 'pending'), { name: 'job_status', description: 'Polls a job', schema }),
  ];
}

describe('aura-harness/langchain with LangGraph', () => {
  // The handler on the run records every model run (and unwrapped tools' runs); on the model, only its own runs, at less cost.
  it.each(['the run', 'the model'])('guards every tool call of a graph: denied and recovered, approved through interrupt for exactly that call, stopped by break (handler on %s)', async (where) => {
    const session = scenarioSession('acme/langgraph');
    const ran: string[] = [];
    const handler = new AuraCallbackHandler(session);
    const model = new ScriptedChatModel(SCENARIO_SCRIPT, where === 'the model' ? [handler] : undefined);
    const tools = auraTools(session, appTools(ran), { principal: 'nobody' });
    const graph = new StateGraph(MessagesAnnotation)
      .addNode('agent', async (state) => ({ messages: [await model.invoke(state.messages)] }))
      .addNode('tools', new ToolNode(tools))
      .addEdge(START, 'agent')
      .addConditionalEdges('agent', toolsCondition, ['tools', END])
      .addEdge('tools', 'agent')
      .compile({ checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: 'thread-1' }, ...(where === 'the run' ? { callbacks: [handler] } : {}), recursionLimit: 50 };

    // Run 1 pauses at aura's interrupt for pay.
    const first = (await graph.invoke({ messages: [{ role: 'user', content: 'Plan and pay' }] }, config)) as { __interrupt__?: { value: AuraInterrupt }[] };
    expect(first.__interrupt__?.[0]?.value).toMatchObject({ aura: 'approval_required', tool: 'pay', tool_call_id: 'call_p1', args: { amount: 120 }, session_id: session.id });
    // The denial reached the model as a tool message it read, and the agent went on.
    const deniedMessage = model.seen[2]?.at(-1);
    expect(deniedMessage?.getType()).toBe('tool');
    expect(String(deniedMessage?.content)).toContain('aura refused this call (POLICY_DENIED)');
    expect(ran).toEqual(['weather {"city":"Lisbon"}', 'weather {"city":"Porto"}']);

    // A person approves; exactly that call runs, and the next pay (other arguments) is held again.
    const second = (await graph.invoke(new Command({ resume: { approved: true, principal: APPROVER } }), config)) as { __interrupt__?: { value: AuraInterrupt }[] };
    expect(ran.filter((r) => r.startsWith('pay'))).toEqual(['pay {"amount":120}']);
    expect(second.__interrupt__?.[0]?.value).toMatchObject({ aura: 'approval_required', tool_call_id: 'call_p2' });

    // The person declines it; the agent polls a job until break stops the session, which ends the run.
    await expect(graph.invoke(new Command({ resume: { approved: false } }), config)).rejects.toBeInstanceOf(LoopBrokenError);
    expect(ran.filter((r) => r.startsWith('pay'))).toHaveLength(1);
    expect(ran.filter((r) => r === 'job_status')).toHaveLength(4);
    expect(ran).not.toContain('delete_account');
    expect(String(model.seen[5]?.at(-1)?.content)).toContain('A person declined this call of pay');

    const result = await session.close();
    expectScenarioTrail(result, { allowed: 'call_w1', denied: 'call_d1', approved: 'call_p1', otherPay: 'call_p2' });
  });

  it("records a tool run it does not guard with its arguments, so the secret a command printed stays out of the trail", async () => {
    const session = scenarioSession('acme/langchain-shell');
    const shell = tool(async ({ command }: { command: string }) => (command.startsWith('printenv') ? 'Lc-Printed-0001\n' : 'ok'), { name: 'shell', description: 'runs a command', schema: z.object({ command: z.string() }) });
    const out: unknown = await shell.invoke({ command: 'printenv DB_PASSWORD' }, { callbacks: [new AuraCallbackHandler(session)] });
    expect(out).toBe('Lc-Printed-0001\n');
    // LangChain runs its callbacks in the background: they are all in before the session closes.
    await awaitAllCallbacks();
    const result = await session.close();
    const results = trailEvents(result).filter((e) => e.kind === 'tool.result');
    expect(results.map((e) => e.payload)).toEqual([{ tool: 'shell', args: { command: 'printenv DB_PASSWORD' }, result: '[redacted]' }]);
    expect(fs.readFileSync(result.log_path, 'utf8')).not.toContain('Lc-Printed-0001');
  });
});
