import * as ai from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import * as adapter from '../../src/adapters/ai-sdk/index.js';
import { agent } from '../../src/index.js';
import { APPROVER, expectScenarioTrail, scenarioSession } from '../helpers/adapter-scenario.js';
import { tempDir } from '../helpers/temp.js';
import { aiSdkScenario } from '../fixtures/ai-sdk-scenario.js';

describe('aura-harness/ai-sdk with AI SDK 6', () => {
  it('guards every tool call: allowed, denied and recovered, approved through the SDK for exactly that call, stopped by break', async () => {
    const session = scenarioSession('acme/ai-sdk');
    const outcome = await aiSdkScenario(ai, MockLanguageModelV3, adapter, session, APPROVER);
    // Run 1 ended at the SDK's approval request for pay; the denial reached the model as a tool result, and it went on.
    expect(outcome.firstApproval).toBe('call_p1');
    expect(outcome.deniedPrompt).toContain('aura refused this call (POLICY_DENIED)');
    // Approved in the SDK: that call ran once; the next pay (other arguments) was held again.
    expect(outcome.secondApproval).toBe('call_p2');
    expect(outcome.ran.filter((r) => r.startsWith('pay'))).toEqual(['pay {"amount":120}']);
    // break stopped the polling, and the run ended with LOOP_BROKEN.
    expect(outcome.stoppedWith).toBe('LOOP_BROKEN');
    expect(outcome.ran.filter((r) => r.startsWith('job_status'))).toHaveLength(4);
    expect(outcome.ran).toEqual(['weather {"city":"Lisbon"}', 'weather {"city":"Porto"}', 'pay {"amount":120}', ...Array(4).fill('job_status {"job":7}')]);

    const result = await session.close();
    expectScenarioTrail(result, { allowed: 'call_w1', denied: 'call_d1', approved: 'call_p1', otherPay: 'call_p2' });
  });

  it("leaves the SDK's tool approval as the tool had it when no rule of the profile asks for approval, and guards the call all the same", async () => {
    const session = agent('acme/ai-sdk-plain', { home: tempDir(), rules: [{ type: 'deny_tools', tools: ['delete_account'] }] }).session({ traceParent: null });
    const ran: string[] = [];
    const tools = adapter.auraTools(session, {
      weather: ai.tool({ inputSchema: ai.jsonSchema({ type: 'object' }), execute: async () => (ran.push('weather'), 'sunny') }),
      delete_account: ai.tool({ inputSchema: ai.jsonSchema({ type: 'object' }), needsApproval: false, execute: async () => (ran.push('delete_account'), 'deleted') }),
    });
    expect(tools.weather).not.toHaveProperty('needsApproval');
    expect(tools.delete_account.needsApproval).toBe(false);
    const refused = await tools.delete_account.execute?.({}, { toolCallId: 'call_x', messages: [] });
    expect(refused).toMatchObject({ aura_refused: { code: 'POLICY_DENIED' } });
    expect(ran).toEqual([]);
    await session.close();
  });
});
