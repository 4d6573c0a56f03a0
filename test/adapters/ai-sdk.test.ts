import { generateText, jsonSchema, stepCountIs, tool, type ModelMessage } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { auraModel, auraTools } from '../../src/adapters/ai-sdk/index.js';
import { LoopBrokenError } from '../../src/errors.js';
import { APPROVER, expectScenarioTrail, scenarioSession } from '../helpers/adapter-scenario.js';

type Step = { readonly call: readonly [id: string, tool: string, input: Record<string, unknown>] } | { readonly text: string };

const usage = { inputTokens: { total: 30, noCache: 30, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 7, text: 7, reasoning: 0 } };

/** The AI SDK's mock model, answering each call with the next step of the script. */
function scriptedModel(script: readonly Step[]): MockLanguageModelV3 {
  let next = 0;
  return new MockLanguageModelV3({
    modelId: 'scripted',
    doGenerate: async () => {
      const step = script[next++];
      if (step === undefined) throw new Error('the script has no more steps');
      if ('text' in step) return { content: [{ type: 'text', text: step.text }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] };
      const [toolCallId, toolName, input] = step.call;
      return { content: [{ type: 'tool-call', toolCallId, toolName, input: JSON.stringify(input) }], finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage, warnings: [] };
    },
  });
}

const object = jsonSchema<Record<string, unknown>>({ type: 'object' });

function appTools(ran: string[]) {
  return {
    weather: tool({ description: 'Forecast', inputSchema: object, execute: async (input) => (ran.push(`weather ${JSON.stringify(input)}`), { sky: 'sunny' }) }),
    delete_account: tool({ description: 'Deletes an account', inputSchema: object, execute: async () => (ran.push('delete_account'), { deleted: true }) }),
    pay: tool({ description: 'Pays', inputSchema: object, execute: async (input) => (ran.push(`pay ${JSON.stringify(input)}`), { paid: true }) }),
    job_status: tool({ description: 'Polls a job', inputSchema: object, execute: async () => (ran.push('job_status'), { state: 'pending' }) }),
  };
}

describe('aura-harness/ai-sdk with AI SDK 6', () => {
  it('guards every tool call: allowed, denied and recovered, approved through the SDK for exactly that call, stopped by break', async () => {
    const session = scenarioSession('acme/ai-sdk');
    const ran: string[] = [];
    const model = scriptedModel([
      { call: ['call_w1', 'weather', { city: 'Lisbon' }] },
      { call: ['call_d1', 'delete_account', { user: 'bob' }] },
      { call: ['call_w2', 'weather', { city: 'Porto' }] },
      { call: ['call_p1', 'pay', { amount: 120 }] },
      { call: ['call_p2', 'pay', { amount: 999 }] },
      { call: ['call_s1', 'job_status', { job: 7 }] },
      { call: ['call_s2', 'job_status', { job: 7 }] },
      { call: ['call_s3', 'job_status', { job: 7 }] },
      { call: ['call_s4', 'job_status', { job: 7 }] },
      { call: ['call_s5', 'job_status', { job: 7 }] },
      { text: 'never reached' },
    ]);
    const wrappedModel = auraModel(session, model);
    const tools = auraTools(session, appTools(ran), { principal: APPROVER });

    // Run 1 ends at the SDK's approval request for pay.
    const first = await generateText({ model: wrappedModel, tools, prompt: 'Plan and pay', stopWhen: stepCountIs(20) });
    const request = first.content.find((part) => part.type === 'tool-approval-request');
    expect(request?.toolCall.toolCallId).toBe('call_p1');
    // The denial reached the model as a tool result it read, and the agent went on (weather in Porto).
    const deniedResult = JSON.stringify(model.doGenerateCalls[2]?.prompt);
    expect(deniedResult).toContain('aura refused this call (POLICY_DENIED)');
    expect(ran).toEqual(['weather {"city":"Lisbon"}', 'weather {"city":"Porto"}']);

    // The app approves in the SDK; the run resumes, pay runs once, and the next pay (other arguments) waits again.
    const messages: ModelMessage[] = [
      { role: 'user', content: 'Plan and pay' },
      ...first.response.messages,
      { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: request?.approvalId ?? '', approved: true }] },
    ];
    const second = await generateText({ model: wrappedModel, tools, messages, stopWhen: stepCountIs(20) });
    expect(ran.filter((r) => r.startsWith('pay'))).toEqual(['pay {"amount":120}']);
    const again = second.content.find((part) => part.type === 'tool-approval-request');
    expect(again?.toolCall.toolCallId).toBe('call_p2');

    // Run 3: the app lets the model go on without paying; polling the same job is stopped by break.
    const run = generateText({ model: wrappedModel, tools, messages: [...messages, ...second.response.messages, { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: again?.approvalId ?? '', approved: false }] }], stopWhen: stepCountIs(20) });
    await expect(run).rejects.toBeInstanceOf(LoopBrokenError);
    expect(ran.filter((r) => r === 'job_status')).toHaveLength(4);
    expect(ran).not.toContain('delete_account');

    const result = await session.close();
    expectScenarioTrail(result, { allowed: 'call_w1', denied: 'call_d1', approved: 'call_p1', otherPay: 'call_p2' });
  });
});
