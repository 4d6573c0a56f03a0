/**
 * Secrets in a profile: a secret field holds a ref with a scheme a broker declares, never a value;
 * a credential-shaped string anywhere in a profile is refused; no error quotes the value.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, InvalidOptionError, ProfileError } from '../../src/errors.js';
import { EnvSecretBroker, type SecretBroker } from '../../src/policy/secrets.js';
import { agent } from '../../src/session/agent.js';
import { expectAuraError } from '../helpers/errors.js';
import { expectProfileRefused, writeProfile } from '../helpers/profiles.js';
import { tempDir } from '../helpers/temp.js';

/** Expects a refusal at `line`/`key` whose message and data do not hold `value`. */
function refusedWithout(value: string, text: string, line: number, key: string, message: RegExp): void {
  const error = expectProfileRefused(text, line, key, message);
  expect(error.message).not.toContain(value);
  expect(JSON.stringify(error.data)).not.toContain(value);
}

describe('secret refs in a profile', () => {
  const STRIPE = 'sk_live_abcdef1234567890';

  it('refuses a live credential given as a secret, without quoting it', () => {
    refusedWithout(STRIPE, `capabilities:\n  - { id: c1, tool: pay, secret: ${STRIPE} }\n`, 2, 'capabilities[0].secret', /looks like an API key/);
    refusedWithout(STRIPE, `capabilities:\n  - id: c1\n    tool: pay\n    secret_ref: ${STRIPE}\n`, 4, 'capabilities[0].secret_ref', /looks like an API key/);
    refusedWithout(STRIPE, `capabilities:\n  - id: c1\n    tool: pay\n    inject:\n      - { ref: ${STRIPE}, as: api_key }\n`, 5, 'capabilities[0].inject[0].ref', /looks like an API key/);
  });

  const bare: [string, string, number, string][] = [
    ['a bare word', 'capabilities:\n  - { id: c1, tool: pay, secret: hunter2 }\n', 2, 'capabilities[0].secret'],
    ['a bare variable name', 'capabilities:\n  - { id: c1, tool: pay, secret_ref: PAY_KEY }\n', 2, 'capabilities[0].secret_ref'],
    ['a name without a provider', 'capabilities:\n  - id: c1\n    tool: pay\n    secret: { name: hunter2 }\n', 4, 'capabilities[0].secret'],
    ['an upper-case scheme', 'capabilities:\n  - { id: c1, tool: pay, secret: "ENV:hunter2" }\n', 2, 'capabilities[0].secret'],
    ['a scheme with nothing after it', 'capabilities:\n  - { id: c1, tool: pay, secret: "env:" }\n', 2, 'capabilities[0].secret'],
    ['a scheme no broker resolves', 'capabilities:\n  - { id: c1, tool: pay, secret: "hunter2:x" }\n', 2, 'capabilities[0].secret'],
    ['a pseudonymization key', 'middleware:\n  pii_mask: { strategy: pseudonymize, key: hunter2 }\n', 2, 'middleware.pii_mask.key'],
  ];
  for (const [what, text, line, key] of bare) {
    it(`refuses ${what} where a ref belongs, without quoting it`, () => {
      refusedWithout('hunter2', text, line, key, /secret ref|say where the secret lives/);
    });
  }

  it('reads every explicit form as the same env: ref', () => {
    for (const secret of ['env:PAY_KEY', '{ ref: "env:PAY_KEY" }', '{ env: PAY_KEY }', '{ provider: env, name: PAY_KEY }', '{ source: environment, id: PAY_KEY }']) {
      const ag = agent('acme/bot', { home: tempDir(), profileFile: writeProfile(`capabilities:\n  - { id: c1, tool: pay, secret: ${secret} }\n`) });
      expect(ag.policy.capabilities[0]?.inject, secret).toEqual([{ ref: 'env:PAY_KEY', as: 'token', prefix: '' }]);
    }
  });

  it("takes a broker's own scheme when the agent's broker declares it, and resolves it at the call", async () => {
    const vault: SecretBroker = { schemes: ['vault'], resolve: (ref) => (ref === 'vault:payments/stripe#key' ? 'from-the-vault-123456' : undefined) };
    const profile = writeProfile('capabilities:\n  - { id: c1, tool: pay, secret: { provider: vault, name: "payments/stripe#key" } }\n');
    expectAuraError(() => agent('acme/bot', { home: tempDir(), profileFile: profile }), ProfileError, 'PROFILE_INVALID');
    const home = tempDir();
    const ag = agent('acme/bot', { home, profileFile: profile, secretBroker: vault });
    const session = ag.session();
    let given: unknown;
    await session.tool('pay', {}, (live) => (given = live['token']), { capabilityId: 'c1' });
    expect(given).toBe('from-the-vault-123456');
    const result = await session.close();
    expect(fs.readFileSync(result.log_path, 'utf8')).not.toContain('from-the-vault-123456');
  });

  it("refuses a session whose broker does not resolve the profile's schemes, before anything is written", () => {
    const home = tempDir();
    const ag = agent('acme/bot', { home, capabilities: [{ id: 'c1', tool: 'pay', secret: 'env:PAY_KEY' }] });
    const vaultOnly: SecretBroker = { schemes: ['vault'], resolve: () => undefined };
    const error = expectAuraError(() => ag.session({ secretBroker: vaultOnly }), InvalidOptionError, 'INVALID_OPTION');
    expect(error.message).toContain('env:PAY_KEY');
    expectAuraError(() => ag.session({ secretBroker: { schemes: ['Vault:'], resolve: () => undefined } }), InvalidOptionError, 'INVALID_OPTION');
    expect(fs.existsSync(path.join(home, 'sessions')) ? fs.readdirSync(path.join(home, 'sessions')) : []).toEqual([]);
  });

  it('gives the built-in broker env: refs only', () => {
    const broker = new EnvSecretBroker({ PAY_KEY: 'value-1', 'vault:x': 'value-2' });
    expect(broker.resolve('env:PAY_KEY')).toBe('value-1');
    expect(broker.resolve('PAY_KEY')).toBeUndefined();
    expect(broker.resolve('vault:x')).toBeUndefined();
  });

  it('refuses a plaintext config pii_key without quoting it, naming the file and line', () => {
    const home = tempDir();
    fs.writeFileSync(path.join(home, 'config.yaml'), 'pii_key: hunter2-the-key\n');
    const error = expectAuraError(() => agent('acme/bot', { home }), ConfigError, 'CONFIG_INVALID');
    expect(error.data).toEqual({ path: path.join(home, 'config.yaml'), line: 1 });
    expect(error.message).not.toContain('hunter2');
    expect(JSON.stringify(error.data)).not.toContain('hunter2');
  });
});

describe('credential shapes anywhere in a profile', () => {
  const shapes: [string, string][] = [
    ['a Stripe key', 'sk_live_abcdef1234567890'],
    ['an OpenAI key', 'sk-proj-abcdefghijklmnopqrstuvwxyz012345'],
    ['a GitHub token', 'ghp_abcdefghijklmnopqrstuvwxyz0123456789'],
    ['an AWS access key id', 'AKIAABCDEFGHIJKLMNOP'],
    ['a JSON web token', 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U'],
    ['a bearer credential', 'Bearer abcdefghijklmnop0123456789'],
    ['a password in a URL', 'postgres://app:s3cret-pass@db.internal:5432/app'],
    ['a private key', '-----BEGIN RSA PRIVATE KEY-----'],
  ];
  for (const [what, value] of shapes) {
    it(`refuses ${what} in a nested variable, without quoting it`, () => {
      refusedWithout(value, `purpose: pay invoices\nvariables:\n  upstream:\n    note: "${value}"\n`, 4, 'variables.upstream.note', /looks like/);
    });
  }

  it('refuses one in the purpose, a rule, a sequencer step or a key', () => {
    const key = 'sk_live_abcdef1234567890';
    refusedWithout(key, `purpose: "pay with ${key}"\n`, 1, 'purpose', /looks like an API key/);
    refusedWithout(key, `rules:\n  - { type: deny_tools, tools: ["${key}"] }\n`, 2, 'rules[0].tools[0]', /looks like an API key/);
    refusedWithout(key, `sequencer:\n  steps:\n    - { id: a, type: op, config: { header: "${key}" } }\n`, 3, 'sequencer.steps[0].config.header', /looks like an API key/);
    refusedWithout(key, `variables:\n  ${key}: true\n`, 1, 'variables', /has a key that looks like an API key/);
  });

  it('refuses one given in code, without quoting it', () => {
    const key = 'ghp_abcdefghijklmnopqrstuvwxyz0123456789';
    const error = expectAuraError(() => agent('acme/bot', { home: tempDir(), variables: { notes: [`token ${key}`] } }), ProfileError, 'PROFILE_INVALID');
    expect(error.data).toEqual({ path: '<code>', line: null, key: 'variables.notes[0]' });
    expect(error.message).not.toContain(key);
  });

  it('keeps what only resembles one: refs, words, e-mail addresses, hex ids', () => {
    const text = 'purpose: "Pay invoices; token-bucket limits; sk- prefixes are refused"\nvariables:\n  owner: ops@example.test\n  build: 3f9a1b2c4d5e6f708192a3b4c5d6e7f8\n  docs: "https://example.test/path"\n';
    expect(agent('acme/bot', { home: tempDir(), profileFile: writeProfile(text) }).profile.variables).toMatchObject({ owner: 'ops@example.test' });
  });
});
