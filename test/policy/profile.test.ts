import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { agent } from '../../src/session/agent.js';
import { ProfileError } from '../../src/errors.js';
import { expectAuraError } from '../helpers/errors.js';
import { REPO } from '../helpers/fixtures.js';
import { expectProfileRefused } from '../helpers/profiles.js';
import { tempDir } from '../helpers/temp.js';

const PAYMENTS = path.join(REPO, 'test', 'fixtures', 'profiles', 'payments.yaml');

describe('agent() with a profile file', () => {
  it('reads every key of the profile, and compiles its rules, capabilities and escalations', () => {
    const ag = agent('acme/payments', { home: tempDir(), profileFile: PAYMENTS });
    expect(ag.profile).toMatchObject({ name: 'payments-bot', purpose: 'Pay approved invoices', policy_version: '3', skills: ['ledger.read', 'payment.pay', 'mail.send'], default_tool_policy: 'allow' });
    expect(ag.policy.rules.map((r) => r.type)).toEqual(['deny_tools', 'confirm_before', 'max_tokens_per_step', 'schema_check']);
    expect(ag.policy.capabilities.map((c) => c.id)).toEqual(['pay-vendor-a']);
    expect(ag.policy.escalations.map((e) => e.on)).toEqual(['constraint.violated']);
    expect(ag.policy.schemaRefCount).toBe(1);
  });

  it('lets options given in code win over the file', () => {
    const ag = agent('acme/payments', { home: tempDir(), profileFile: PAYMENTS, purpose: 'from code', rules: [] });
    expect(ag.profile.purpose).toBe('from code');
    expect(ag.policy.rules).toEqual([]);
  });

  const bad: [string, string, number, string, RegExp][] = [
    ['a typo in a top-level key', 'purpose: x\nrulez:\n  - { type: deny_tools, tools: [a] }\n', 2, 'rulez', /unknown profile key/],
    ['an unknown rule type', 'rules:\n  - { type: deny_tools, tools: [a] }\n  - { type: deny_tool, tools: [b] }\n', 3, 'rules[1].type', /unknown rule type "deny_tool"/],
    ['a typo in a rule key', 'rules:\n  - type: deny_tools\n    tool: [a]\n', 3, 'rules[0].tool', /unknown key for a deny_tools rule/],
    ['an empty tool list', 'rules:\n  - { type: allow_tools, tools: [] }\n', 2, 'rules[0].tools', /non-empty list/],
    ['an invalid glob', 'rules:\n  - type: deny_tools\n    tools:\n      - "shell.["\n', 4, 'rules[0].tools[0]', /unclosed '\['/],
    ['a schema that does not compile', 'rules:\n  - type: schema_check\n    schema: { type: objekt }\n', 3, 'rules[0].schema', /does not compile/],
    ['a schema ref that does not exist', 'rules:\n  - { type: schema_check, ref: nothing }\n', 2, 'rules[0].ref', /not in variables.schema_refs/],
    ['a token limit that is not a positive integer', 'rules:\n  - { type: max_tokens_per_step, limit: -5 }\n', 2, 'rules[0].limit', /positive integer/],
    ['a plaintext secret', 'capabilities:\n  - id: c\n    tool: t\n    secret: { value: hunter2hunter2 }\n', 4, 'capabilities[0].secret.value', /by ref only/],
    ['a live credential as a ref', 'capabilities:\n  - { id: c, tool: t, secret: sk-live-0123456789 }\n', 2, 'capabilities[0].secret', /plaintext secret/],
    ['a duplicate capability id', 'capabilities:\n  - { id: c, tool: t }\n  - { id: c, tool: u }\n', 3, 'capabilities[1].id', /duplicate capability id/],
    ['an unknown spectrum level', 'spectrum: { level: extreme }\n', 1, 'spectrum.level', /expected one of low, mid, high, full/],
    ['a level where the spectrum mapping goes, listing its keys', 'purpose: x\nspectrum: high\n', 2, 'spectrum', /expected a mapping with the keys level, services, output, budgets, identity_required, service_config, strict_services, schema_enforcement \(for a level alone: spectrum: \{level: high\}\)/],
    ['a scalar for an observer config, listing its keys', 'observers:\n  - preset: limit\n    config: 200\n', 3, 'observers[0].config', /expected a mapping with the keys .*max_tool_calls/],
    ['a scalar for the sequencer, naming its key', 'sequencer: fetch\n', 1, 'sequencer', /expected a mapping with the key steps/],
    ['an unknown escalation trigger', 'escalations:\n  - { on: tool.call, actions: [log] }\n', 2, 'escalations[0].on', /expected a trigger/],
    ['an unknown escalation action', 'escalations:\n  - { on: constraint.violated, actions: [explode] }\n', 2, 'escalations[0].actions[0]', /unknown action "explode"/],
    ['a default_tool_policy outside its set', 'default_tool_policy: maybe\n', 1, 'default_tool_policy', /'allow' or 'deny'/],
    ['YAML that does not parse', 'rules:\n  - { type: deny_tools\n', 3, '(root)', /./],
    ['a duplicate YAML key', 'purpose: a\npurpose: b\n', 2, '(root)', /unique|duplicate/i],
  ];
  for (const [what, text, line, key, message] of bad) {
    it(`refuses ${what}, naming the file, line ${line} and ${key}`, () => {
      expectProfileRefused(text, line, key, message);
    });
  }

  it('refuses a profile written for another agent', () => {
    const error = expectAuraError(() => agent('acme/other', { home: tempDir(), profileFile: PAYMENTS }), ProfileError, 'PROFILE_INVALID');
    expect(error.message).toContain('the profile is for acme/payments, not acme/other');
  });

  it('refuses bad rules given in code too, naming the key', () => {
    const error = expectAuraError(() => agent('acme/bot', { home: tempDir(), rules: [{ type: 'allow' }] }), ProfileError, 'PROFILE_INVALID');
    expect(error.data).toMatchObject({ path: '<code>', line: null, key: 'rules[0].type' });
  });
});
