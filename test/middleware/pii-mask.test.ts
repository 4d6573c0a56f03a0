import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { agent, type AgentOptions } from '../../src/session/agent.js';
import { ApprovalRequiredError, InvalidOptionError, PolicyDeniedError, SecretNotFoundError } from '../../src/errors.js';
import { findPii, PII_ENTITIES, type PiiEntity } from '../../src/middleware/pii-detectors.js';
import { PiiMasker } from '../../src/middleware/pii-mask.js';
import { canonicalJson } from '../../src/spine/canonical.js';
import { sha256 } from '../../src/spine/hash.js';
import { readTrail } from '../../src/spine/trail-reader.js';
import type { SessionOptions } from '../../src/session/session.js';
import { expectAuraError, expectAuraRejection } from '../helpers/errors.js';
import { countingIds, steppingClock } from '../helpers/sessions.js';
import { expectProfileRefused } from '../helpers/profiles.js';
import { tempDir } from '../helpers/temp.js';

const ALL = new Set(PII_ENTITIES);

/** Real-looking values each detector must find (published test numbers, documentation addresses). */
const POSITIVES: readonly [PiiEntity, string][] = [
  ['email', 'jane.doe@example.com'],
  ['email', 'ops+alerts@mail.acme-corp.co.uk'],
  ['phone', '+351 912 345 678'],
  ['phone', '+1 (415) 555-2671'],
  ['phone', '+44 20 7946 0958'],
  ['phone', '+4915112345678'],
  ['phone', '(415) 555-2671'],
  ['phone', '415-555-2671'],
  ['payment_card', '4111 1111 1111 1111'],
  ['payment_card', '5500-0055-5555-5559'],
  ['payment_card', '378282246310005'],
  ['payment_card', '3782 822463 10005'],
  ['iban', 'DE89 3704 0044 0532 0130 00'],
  ['iban', 'GB82 WEST 1234 5698 7654 32'],
  ['iban', 'NL91ABNA0417164300'],
  ['iban', 'FR14 2004 1010 0505 0001 3M02 606'],
  ['ip', '192.168.1.20'],
  ['ip', '10.0.0.1'],
  ['ip', '2001:db8::8a2e:370:7334'],
  ['ip', 'fe80::1ff:fe23:4567:890a'],
  ['national_id', '12345678Z'],
  ['national_id', 'X1234567L'],
  ['national_id', 'RSSMRA85T10A562S'],
  ['national_id', '811218-9876'],
  ['api_key', 'sk-proj-4fQ9zXc2LmN8pR1tV6wY0bKd'],
  ['api_key', 'ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5'],
  ['api_key', 'AKIAIOSFODNN7EXAMPLE'],
  ['api_key', 'xoxb-2048-1024-AbCdEfGhIjKl'],
];

/** Values that look like personal data and are not: each must not be found at all. */
const NEAR_MISSES: readonly [string, string][] = [
  ['an address without a TLD', 'user@localhost'],
  ['a handle', '@jane_doe'],
  ['an order id shaped like a phone number', 'ORD-2024-555-0123'],
  ['a bare run of digits', '4155552671'],
  ['a phone number glued to a path', 'calls/415-555-2671'],
  ['an ISO date', '2024-05-06'],
  ['16 digits failing Luhn', '4111 1111 1111 1112'],
  ['16 digits failing Luhn, ungrouped', '4111111111111112'],
  ['a card number grouped unlike any card', '4111 11111 1111 111'],
  ['an IBAN failing mod 97', 'DE89 3704 0044 0532 0130 01'],
  ['an IBAN of the wrong length for its country', 'GB82 WEST 1234 5698 7654'],
  ['a three-part version', '1.2.3'],
  ['a prefixed four-part version', 'v1.2.3.4'],
  ['a pre-release version', '2.0.0-beta.1'],
  ['an octet out of range', '999.1.1.1'],
  ['five dotted numbers', '1.2.3.4.5'],
  ['a time of day', '12:30:45'],
  ['a DNI with the wrong letter', '12345678A'],
  ['a codice fiscale with the wrong check letter', 'RSSMRA85T10A562X'],
  ['a personnummer failing Luhn', '811218-9875'],
  ['a US SSN (no checksum: not detected)', '123-45-6789'],
  ['a package name', 'sk-learn'],
  ['an AWS-like prefix too short', 'AKIA1234'],
  ['a GitHub-like prefix too short', 'ghp_short'],
];

describe('findPii', () => {
  it.each(POSITIVES)('finds the %s %s in running text', (entity, value) => {
    const text = `Customer record: ${value}, noted.`;
    expect(findPii(text, ALL).map((m) => [m.entity, m.text])).toEqual([[entity, value]]);
  });

  it.each(NEAR_MISSES)('does not take %s (%s) for personal data', (_, value) => {
    expect(findPii(`ref ${value} ok`, ALL)).toEqual([]);
  });

  it('looks only for the entity types asked for', () => {
    const text = 'mail jane.doe@example.com or call +351 912 345 678';
    expect(findPii(text, new Set<PiiEntity>(['phone'])).map((m) => m.entity)).toEqual(['phone']);
  });
});

describe('PiiMasker strategies', () => {
  const text = 'jane.doe@example.com paid with 4111 1111 1111 1111 from DE89 3704 0044 0532 0130 00';

  it('redact replaces each value with its type', () => {
    expect(new PiiMasker('redact', PII_ENTITIES).maskText(text, new Map())).toBe('[email] paid with [payment_card] from [iban]');
  });

  it('mask keeps a partial form: first letters and TLD of an e-mail, last 4 of a card, country and last 2 of an IBAN', () => {
    const counts = new Map<PiiEntity, number>();
    expect(new PiiMasker('mask', PII_ENTITIES).maskText(text, counts)).toBe('j***@e***.com paid with **** **** **** 1111 from DE** **** **** **** **** 00');
    expect(Object.fromEntries(counts)).toEqual({ email: 1, payment_card: 1, iban: 1 });
  });

  it('mask keeps only the prefix of an API key', () => {
    expect(new PiiMasker('mask', PII_ENTITIES).maskText('key AKIAIOSFODNN7EXAMPLE', new Map())).toBe('key AKIA***');
  });

  it('pseudonymize gives one token per value under a key, whatever its spelling, and another under another key', () => {
    const a = new PiiMasker('pseudonymize', PII_ENTITIES, 'key-one-0123456789');
    const token = a.maskText('jane.doe@example.com', new Map());
    expect(token).toMatch(/^email_[0-9a-f]{12}$/);
    expect(a.maskText('Jane.Doe@Example.com', new Map())).toBe(token);
    expect(a.maskText('john@example.com', new Map())).not.toBe(token);
    expect(new PiiMasker('pseudonymize', PII_ENTITIES, 'key-two-0123456789').maskText('jane.doe@example.com', new Map())).not.toBe(token);
    expect(a.maskText('+351 912 345 678', new Map())).toBe(a.maskText('+351912345678', new Map()));
  });

  it('masks a copy, keys included, reports the JSON paths changed, and leaves values without personal data as they were', () => {
    const value = { contact: { email: 'jane.doe@example.com', name: 'Jane' }, rows: [{ note: 'call 415-555-2671' }, { note: 'none' }], count: 3 };
    const masked = new PiiMasker('redact', PII_ENTITIES).mask(value, 'args');
    expect(masked.value).toEqual({ contact: { email: '[email]', name: 'Jane' }, rows: [{ note: 'call [phone]' }, { note: 'none' }], count: 3 });
    expect(masked.report).toEqual({ entities_detected: { email: 1, phone: 1 }, redactions: 2, fields: ['args.contact.email', 'args.rows[0].note'] });
    expect(value.contact.email).toBe('jane.doe@example.com');
    const byAddress = new PiiMasker('redact', PII_ENTITIES).mask({ 'jane.doe@example.com': 1, 'john@example.com': 2, '[email]': 3 }, 'args');
    expect(byAddress.value).toEqual({ '[email]~2': 1, '[email]~3': 2, '[email]': 3 });
    expect(byAddress.report?.fields).toEqual(['args.[email]~2 (key)', 'args.[email]~3 (key)']);
    const clean = { a: ['x', { b: 'y' }] };
    expect(new PiiMasker('redact', PII_ENTITIES).mask(clean, 'args')).toEqual({ value: clean, report: null });
  });
});

const PII_KEY = 'deployment-pii-key-0123456789abcdef';

function openWith(middleware: Record<string, unknown>, session: SessionOptions = {}, extra: AgentOptions = {}) {
  const home = tempDir();
  const ag = agent('acme/crm-bot', { home, middleware, ...extra });
  return ag.session({ ids: countingIds(), clock: steppingClock(), ...session });
}

const keyBroker = (key: string) => ({ resolve: (ref: string) => (ref === 'env:AURA_PII_KEY' ? key : undefined) });

describe('pii_mask in a session', () => {
  it('masks every value of the table in args, results and emitted payloads, and no written file holds a raw one', async () => {
    const session = openWith({ pii_mask: { strategy: 'mask', boundaries: ['tool.args', 'tool.result', 'emit'] } });
    const values = POSITIVES.map(([, value]) => value);
    let seen: unknown = null;
    const result = await session.tool('crm.update', { contacts: values.map((value) => ({ value })) }, (live) => {
      seen = live;
      return { echoed: values.join(' | '), by_value: Object.fromEntries(values.map((value, i) => [value, i])) };
    });
    session.emit('turn.end', { output: `Done for ${values.join(' and ')}` });
    const closed = await session.close();

    // The tool itself got the real arguments: it has to send the e-mail.
    expect(seen).toEqual({ contacts: values.map((value) => ({ value })) });
    // What the caller (the model's side) gets back is masked.
    for (const value of values) expect(JSON.stringify(result)).not.toContain(value);
    const files = [closed.log_path, closed.exports.summary, closed.exports.otel].filter((file): file is string => file !== undefined);
    expect(files).toHaveLength(3);
    for (const file of files) {
      const bytes = fs.readFileSync(file, 'utf8');
      for (const value of values) expect(bytes.includes(value), `${value} in ${path.basename(file)}`).toBe(false);
    }
    expect(closed.chain.hash_chain_valid).toBe(true);
  });

  it('records middleware.applied with types, counts, paths and the event masked, never a value, and the audit counts it', async () => {
    const session = openWith({ pii_mask: { strategy: 'redact' } });
    await session.tool('mail.send', { to: 'jane.doe@example.com', cc: ['ops@example.org'], body: 'card 4111 1111 1111 1111' }, () => ({ delivered_to: 'jane.doe@example.com' }));
    const closed = await session.close();
    const events = readTrail(closed.log_path).events;
    const applied = events.filter((e) => e.kind === 'middleware.applied');
    const intent = events.find((e) => e.kind === 'tool.intent');
    const toolResult = events.find((e) => e.kind === 'tool.result');
    expect(applied.map((e) => e.payload)).toEqual([
      { op: 'pii_mask', strategy: 'redact', boundary: 'tool.args', entities_detected: { email: 2, payment_card: 1 }, redactions: 3, fields: ['args.to', 'args.cc[0]', 'args.body'], for_event: intent?.event_id, tool: 'mail.send' },
      { op: 'pii_mask', strategy: 'redact', boundary: 'tool.result', entities_detected: { email: 1 }, redactions: 1, fields: ['result.delivered_to'], for_event: toolResult?.event_id, tool: 'mail.send' },
    ]);
    expect(toolResult?.payload['args']).toEqual({ to: '[email]', cc: ['[email]'], body: 'card [payment_card]' });
    const report = closed.audit_report;
    expect(report.scorecard.middleware).toEqual({ applied: 2, pii_redactions: 4 });
    const masked = report.findings.filter((f) => f.kind === 'PII_MASKED');
    expect(masked.map((f) => [f.severity, f['redactions'], f.event_ids])).toEqual([
      ['info', 3, [applied[0]?.event_id]],
      ['info', 1, [applied[1]?.event_id]],
    ]);
  });

  it('masks an emitted payload only with the emit boundary', async () => {
    const withEmit = openWith({ pii_mask: { boundaries: ['emit'] } });
    withEmit.emit('turn.start', { input: 'reach me at jane.doe@example.com' });
    withEmit.completeGoal({ sent_to: 'jane.doe@example.com' });
    const masked = readTrail((await withEmit.close()).log_path).events;
    expect(masked.find((e) => e.kind === 'turn.start')?.payload).toEqual({ input: 'reach me at j***@e***.com' });
    expect(masked.find((e) => e.kind === 'task.complete')?.payload).toEqual({ sent_to: 'j***@e***.com' });
    expect(masked.find((e) => e.kind === 'middleware.applied')?.payload).toMatchObject({ boundary: 'emit', fields: ['input'], redactions: 1 });

    const plain = openWith({ pii_mask: { boundaries: ['tool.args'] } });
    plain.emit('turn.start', { input: 'reach me at jane.doe@example.com' });
    const unmasked = readTrail((await plain.close()).log_path).events;
    expect(unmasked.find((e) => e.kind === 'turn.start')?.payload).toEqual({ input: 'reach me at jane.doe@example.com' });
    expect(unmasked.some((e) => e.kind === 'middleware.applied')).toBe(false);
  });

  it('points middleware.applied at the denial when policy stops a masked emitted event', async () => {
    const session = openWith({ pii_mask: { strategy: 'redact', boundaries: ['emit'] } }, {}, { rules: [{ type: 'deny_tools', tools: ['mail.*'] }] });
    const denied = await expectAuraRejection(async () => session.emit('tool.call', { tool: 'mail.send', args: { to: 'jane.doe@example.com' } }), PolicyDeniedError, 'POLICY_DENIED');
    const events = readTrail((await session.close()).log_path).events;
    const violation = events.find((e) => e.kind === 'constraint.violated');
    expect(violation?.event_id).toBe(denied.data?.event_id);
    expect(violation?.payload['event']).toEqual({ kind: 'tool.call', payload: { tool: 'mail.send', args: { to: '[email]' } } });
    expect(events.find((e) => e.kind === 'middleware.applied')?.payload).toMatchObject({ boundary: 'emit', fields: ['args.to'], for_event: violation?.event_id });
  });

  it('masks a tool error message and the values a policy message quotes, for the caller as on the trail', async () => {
    const session = openWith(
      { pii_mask: { strategy: 'redact' } },
      {},
      { capabilities: [{ id: 'crm', tool: 'crm.lookup', allowed: { email: 'ops@example.org' } }] },
    );
    await expect(session.tool('crm.lookup', { email: 'jane.doe@example.com' }, () => 1, { capabilityId: 'crm' })).rejects.toThrow(/scope mismatch: email="\[email\]"/);
    await expect(session.tool('mail.send', { to: 'x' }, () => { throw new Error('bounced', { cause: { to: 'jane.doe@example.com' } }); })).rejects.toMatchObject({ message: 'bounced', cause: { to: '[email]' } });
    await expect(session.tool('mail.send', { to: 'x' }, () => { throw new Error('bounced: jane.doe@example.com'); })).rejects.toThrow(/^bounced: \[email\]$/);
    const closed = await session.close();
    const text = fs.readFileSync(closed.log_path, 'utf8');
    expect(text).not.toContain('jane.doe@example.com');
    const events = readTrail(closed.log_path).events;
    expect(events.find((e) => e.kind === 'constraint.violated')?.payload['message']).toMatch(/scope mismatch: email="\[email\]"/);
    expect(events.filter((e) => e.kind === 'tool.error').at(-1)?.payload['error']).toEqual({ name: 'Error', message: 'bounced: [email]' });
  });

  it('binds an approval to the real arguments, with a digest the trail cannot be brute-forced from', async () => {
    const session = openWith({ pii_mask: { strategy: 'redact' } }, {}, { rules: [{ type: 'confirm_before', tools: ['mail.send'] }] });
    const held = await expectAuraRejection(() => session.tool('mail.send', { to: 'jane.doe@example.com' }, () => 'sent'), ApprovalRequiredError, 'APPROVAL_REQUIRED');
    session.approve(held.data?.request_id ?? '');
    // Another address redacts to the same '[email]', and still is another call.
    await expectAuraRejection(() => session.tool('mail.send', { to: 'john@example.com' }, () => 'sent'), ApprovalRequiredError, 'APPROVAL_REQUIRED');
    expect(await session.tool('mail.send', { to: 'jane.doe@example.com' }, () => 'sent')).toBe('sent');
    expect(held.data?.digest).not.toBe(sha256(canonicalJson({ args: { to: 'jane.doe@example.com' }, session_id: session.id, tool: 'mail.send' })));
    await session.close();
  });

  it('pseudonymizes to the same token in two sessions with one key, and to another with another key', async () => {
    const tokenOf = async (key: string): Promise<unknown> => {
      const session = openWith({ pii_mask: { strategy: 'pseudonymize', key: 'env:AURA_PII_KEY' } }, { secretBroker: keyBroker(key) });
      await session.tool('crm.lookup', { email: 'jane.doe@example.com' }, () => ({ ok: true }));
      const closed = await session.close();
      expect(fs.readFileSync(closed.log_path, 'utf8')).not.toContain(key);
      return (readTrail(closed.log_path).events.find((e) => e.kind === 'tool.call')?.payload['args'] as { email: unknown }).email;
    };
    const first = await tokenOf(PII_KEY);
    expect(first).toMatch(/^email_[0-9a-f]{12}$/);
    expect(await tokenOf(PII_KEY)).toBe(first);
    expect(await tokenOf('another-deployment-key-000000')).not.toBe(first);
  });

  it('refuses to open a pseudonymizing session whose key does not resolve, before any file is written', () => {
    const home = tempDir();
    const ag = agent('acme/crm-bot', { home, middleware: { pii_mask: { strategy: 'pseudonymize', key: 'env:AURA_PII_KEY_MISSING' } } });
    const error = expectAuraError(() => ag.session({ secretBroker: { resolve: () => undefined } }), SecretNotFoundError, 'SECRET_NOT_FOUND');
    expect(error.data).toEqual({ ref: 'env:AURA_PII_KEY_MISSING', capability_id: null, used_for: 'middleware.pii_mask.key' });
    expect(fs.existsSync(ag.config.paths.sessions)).toBe(false);
    // A session opens synchronously: a broker that answers later cannot supply the key in time.
    expectAuraError(() => ag.session({ secretBroker: { resolve: async () => PII_KEY } }), InvalidOptionError, 'INVALID_OPTION');
    expect(fs.existsSync(ag.config.paths.sessions)).toBe(false);
  });

  it('takes the key ref from the config key pii_key when the profile names none, and refuses a plaintext one without quoting it', async () => {
    const session = openWith({ pii_mask: { strategy: 'pseudonymize' } }, { secretBroker: keyBroker(PII_KEY) }, { overrides: { pii_key: 'env:AURA_PII_KEY' } });
    expect(await session.tool('crm.lookup', { email: 'x' }, () => ({ email: 'jane.doe@example.com' }))).toEqual({ email: new PiiMasker('pseudonymize', ['email'], PII_KEY).maskText('jane.doe@example.com', new Map()) });
    await session.close();
    const plaintext = 'hunter2-plaintext-key';
    const error = expectAuraError(() => agent('acme/crm-bot', { home: tempDir(), middleware: { pii_mask: { strategy: 'pseudonymize' } }, overrides: { pii_key: plaintext } }), InvalidOptionError, 'INVALID_OPTION');
    expect(error.message).not.toContain(plaintext);
    expect(JSON.stringify(error.data)).not.toContain(plaintext);
  });

  it('records the profile\'s middleware without the key itself in session.open', async () => {
    const session = openWith({ pii_mask: { strategy: 'pseudonymize', key: 'env:AURA_PII_KEY', entities: ['email'] } }, { secretBroker: keyBroker(PII_KEY) });
    const closed = await session.close();
    const open = readTrail(closed.log_path).events.find((e) => e.kind === 'session.open');
    expect(open?.payload['middleware']).toEqual({ pii_mask: { strategy: 'pseudonymize', entities: ['email'], boundaries: ['tool.args', 'tool.result'], key: 'env:AURA_PII_KEY' } });
  });

  it('leaves payloads alone in a session whose profile has no middleware', async () => {
    const home = tempDir();
    const session = agent('acme/plain', { home }).session();
    const result = await session.tool('crm.lookup', { email: 'jane.doe@example.com' }, () => ({ email: 'jane.doe@example.com' }));
    expect(result).toEqual({ email: 'jane.doe@example.com' });
    const events = readTrail((await session.close()).log_path).events;
    expect(events.some((e) => e.kind === 'middleware.applied')).toBe(false);
  });
});

describe('the middleware profile block', () => {
  const bad: [string, string, number, string, RegExp][] = [
    ['an unknown op', 'middleware:\n  pii_scrub: {}\n', 2, 'middleware.pii_scrub', /unknown middleware op/],
    ['an unknown strategy', 'middleware:\n  pii_mask:\n    strategy: scramble\n', 3, 'middleware.pii_mask.strategy', /redact, mask, pseudonymize/],
    ['an unknown entity', 'middleware:\n  pii_mask:\n    entities: [email, passport]\n', 3, 'middleware.pii_mask.entities[1]', /expected one of email/],
    ['an unknown boundary', 'middleware:\n  pii_mask:\n    boundaries: [tool.args, model]\n', 3, 'middleware.pii_mask.boundaries[1]', /tool.args, tool.result, emit/],
    ['a key in plaintext', 'middleware:\n  pii_mask:\n    strategy: pseudonymize\n    key: hunter2-super-secret\n', 4, 'middleware.pii_mask.key', /secret ref/],
    ['pseudonymize without a key here or in the config', 'middleware:\n  pii_mask:\n    strategy: pseudonymize\n', 2, 'middleware.pii_mask.key', /needs a key/],
    ['a typo in a key', 'middleware:\n  pii_mask:\n    stratgy: mask\n', 3, 'middleware.pii_mask.stratgy', /unknown key for pii_mask/],
  ];

  it.each(bad)('refuses %s with a ProfileError naming file, line and key', (_, text, line, key, message) => {
    expectProfileRefused(text, line, key, message);
  });
});
