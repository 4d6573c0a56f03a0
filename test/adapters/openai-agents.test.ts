import { Agent, Runner, tool, Usage, type Model, type ModelRequest, type ModelResponse } from '@openai/agents-core';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { auraModel, auraTools } from '../../src/adapters/openai-agents/index.js';
import { LoopBrokenError } from '../../src/errors.js';
import { APPROVER, expectScenarioTrail, scenarioSession } from '../helpers/adapter-scenario.js';
import { SCENARIO_SCRIPT, type ScriptStep } from '../fixtures/scenario-script.js';

/** An Agents SDK `Model` answering each request with the next step of the script. */
class ScriptedModel implements Model {
  readonly requests: ModelRequest[] = [];
  private next = 0;

  constructor(private readonly script: readonly ScriptStep[]) {}

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.requests.push(request);
    const step = this.script[this.next++];
    if (step === undefined) throw new Error('the script has no more steps');
    const usage = new Usage({ requests: 1, inputTokens: 30, outputTokens: 7, totalTokens: 37 });
    if (typeof step === 'string') return { usage, output: [{ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: step }] }] };
    const [callId, name, args] = step;
    return { usage, output: [{ type: 'function_call', callId, name, arguments: JSON.stringify(args), status: 'completed' }] };
  }

  // eslint-disable-next-line require-yield
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error('not streamed in this test');
  }
}

function appTools(ran: string[]) {
  return [
    tool({ name: 'weather', description: 'Forecast', parameters: z.object({ city: z.string() }), execute: async (input) => (ran.push(`weather ${JSON.stringify(input)}`), 'sunny') }),
    tool({ name: 'delete_account', description: 'Deletes an account', parameters: z.object({ user: z.string() }), execute: async () => (ran.push('delete_account'), 'deleted') }),
    tool({ name: 'pay', description: 'Pays', parameters: z.object({ amount: z.number() }), execute: async (input) => (ran.push(`pay ${JSON.stringify(input)}`), 'paid') }),
    tool({ name: 'job_status', description: 'Polls a job', parameters: z.object({ job: z.number() }), execute: async () => (ran.push('job_status'), 'pending') }),
  ];
}

describe('aura-harness/openai-agents', () => {
  it('guards every function tool call: denied and recovered, approved through the run state for exactly that call, stopped by break', async () => {
    const session = scenarioSession('acme/agents');
    const ran: string[] = [];
    const model = new ScriptedModel(SCENARIO_SCRIPT);
    const agent = new Agent({ name: 'planner', instructions: 'Plan and pay.', model: auraModel(session, model), tools: auraTools(session, appTools(ran), { principal: APPROVER }) });
    const runner = new Runner({ tracingDisabled: true });

    // Run 1 ends with the SDK's interruption for pay.
    const first = await runner.run(agent, 'Plan and pay', { maxTurns: 30 });
    expect(first.interruptions.map((item) => (item.rawItem as { callId?: string }).callId)).toEqual(['call_p1']);
    // The denial reached the model as the tool's output, and the agent went on.
    expect(JSON.stringify(model.requests[2]?.input)).toContain('aura refused this call (POLICY_DENIED)');
    expect(ran).toEqual(['weather {"city":"Lisbon"}', 'weather {"city":"Porto"}']);

    // The app approves in the run state: exactly that call runs; the next pay (other arguments) is held again.
    first.state.approve(first.interruptions[0] as never);
    const second = await runner.run(agent, first.state, { maxTurns: 30 });
    expect(ran.filter((r) => r.startsWith('pay'))).toEqual(['pay {"amount":120}']);
    expect(second.interruptions.map((item) => (item.rawItem as { callId?: string }).callId)).toEqual(['call_p2']);

    // The app rejects it; polling the same job is stopped by break, which ends the run.
    second.state.reject(second.interruptions[0] as never);
    await expect(runner.run(agent, second.state, { maxTurns: 30 })).rejects.toBeInstanceOf(LoopBrokenError);
    expect(ran.filter((r) => r === 'job_status')).toHaveLength(4);
    expect(ran).not.toContain('delete_account');

    const result = await session.close();
    expectScenarioTrail(result, { allowed: 'call_w1', denied: 'call_d1', approved: 'call_p1', otherPay: 'call_p2' });
  });
});
