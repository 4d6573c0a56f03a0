/**
 * Redaction on every recorded event: the values of secret-like keys (matched on the key's letters,
 * whatever their case or separators), and every secret the session injected, wherever it is
 * recorded: in a string, an object key, a step id. The trail stays the text Python Aura hashes.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { redactCredentials } from '../../src/middleware/credential-text.js';
import { SessionRedactor } from '../../src/middleware/redact.js';
import { NonJsonValueError } from '../../src/errors.js';
import { printsSecret } from '../../src/middleware/printed-secrets.js';
import { isSecretLikeKey } from '../../src/middleware/secret-names.js';
import { agent } from '../../src/session/agent.js';
import type { SessionResult } from '../../src/session/session.js';
import { aura } from '../helpers/cli.js';
import { pythonVerify } from '../helpers/python.js';
import { countingIds, lines, steppingClock } from '../helpers/sessions.js';
import { tempDir } from '../helpers/temp.js';

/**
 * The bound of the linear-time tests: each pathological text below takes 5-200 ms alone, and a
 * search that went back over it would take seconds to minutes at these lengths. It leaves room for
 * a machine busy with the suite's other files (over 500 ms seen on two cores).
 */
const LINEAR_MS = 2_000;

const SECRET_KEYS = [
  'PassWord', 'ToKeN', 'apIkey', 'authorizatioN', 'access_key', 'AccessKey', 'aws_secret_access_key', 'pwd', 'auth', 'jwt', 'ssh_key', 'sshKey',
  'private_key', 'client_secret', 'X-Api-Key', 'X-Auth-Token', 'session_token', 'set-cookie', 'passphrase', 'otp', 'connection_string', 'DB_PASSWORD',
  'password2', 'basic_auth', 'Credentials', 'signing_key', 'pin', 'cvv', 'passwords', 'secrets', 'api_keys', 'clientSecrets', 'passcode', 'db_passwords',
  'password_hash', 'passwordDigest', 'authentication_string',
];
const KEPT_KEYS = [
  'tokens', 'total_tokens', 'max_tokens', 'prompt_tokens', 'completion_tokens', 'input_tokens', 'output_tokens', 'token_count', 'tokenCount',
  'max_tokens_per_step', 'cached_tokens', 'author', 'authority', 'auth_method', 'primary_key', 'sort_key', 'secret_name', 'token_type',
];

describe('secret-like keys', () => {
  it('match on the letters of the key, whatever the case or separators, and keep token counters', () => {
    expect(SECRET_KEYS.filter((key) => !isSecretLikeKey(key))).toEqual([]);
    expect(KEPT_KEYS.filter((key) => isSecretLikeKey(key))).toEqual([]);
  });

  it('are recorded as [redacted] at any depth; counters and look-alikes keep their values', async () => {
    const session = agent('acme/keys', { home: tempDir() }).session({ ids: countingIds(), clock: steppingClock() });
    const secrets = Object.fromEntries(SECRET_KEYS.map((key, i) => [key, `value-${i}-zzzzzzzz`]));
    const kept = Object.fromEntries(KEPT_KEYS.map((key, i) => [key, i]));
    session.emit('http.request', { headers: secrets, body: { nested: [{ ...secrets }] }, usage: kept });
    const payload = (JSON.parse(lines(session.files.trail).at(-1) ?? '{}') as { payload: Record<string, unknown> }).payload;
    const redacted = Object.fromEntries(SECRET_KEYS.map((key) => [key, '[redacted]']));
    expect(payload).toEqual({ headers: redacted, body: { nested: [redacted] }, usage: kept });
    const result = await session.close();
    expect(fs.readFileSync(result.log_path, 'utf8')).not.toMatch(/value-\d+-zzzzzzzz/);
  });
});

describe('a secret named beside its value', () => {
  it('is recorded as [redacted] in {name, value} objects and [name, value] pairs, in payloads and the identity on every line', async () => {
    const pw = 'Pair-Pw-0123456789';
    const ag = agent('acme/pairs', { home: tempDir(), ids: { env: [{ name: 'DB_PASSWORD', value: `${pw}-ids` }], tenant: 'acme' } });
    const session = ag.session({ ids: countingIds(), clock: steppingClock() });
    session.emit('deploy', {
      // A Kubernetes or ECS env list, an SSM parameter, a tag, a header list, Object.entries.
      env: [{ name: 'API_TOKEN', value: `${pw}-1` }, { name: 'LANG', value: 'C.UTF-8' }],
      parameter: { Name: 'DB_PASSWORD', Value: `${pw}-2`, Type: 'SecureString' },
      tag: { key: 'client_secret', value: { nested: `${pw}-3` } },
      headers: [['Authorization', `Token ${pw}-4`], ['Accept', 'text/html']],
      entries: Object.entries({ DB_PASSWORD: `${pw}-5`, user: 'bob' }),
      kept: [{ name: 'max_tokens', value: 100 }, { key: 'primary_key', value: 'id' }, ['password', 'a', 'b'], ['tokens', 7]],
      // What browser tools type into a field their other argument describes: Playwright's browser_type, Puppeteer's fill.
      typed: [{ element: 'Password textbox', ref: 'e12', text: `${pw}-6` }, { selector: 'input[name="api_key"]', value: `${pw}-7` }, { element: 'Search box', ref: 'e3', text: 'forgot password' }],
      // Playwright's browser_fill_form: a field named by its label.
      form: { fields: [{ name: 'Password (required)', type: 'textbox', ref: 'e4', value: `${pw}-18` }, { name: 'Email', type: 'textbox', ref: 'e5', value: 'bob@example.com' }] },
      // A browser's cookies, a value Terraform marks sensitive, a Kubernetes Secret's data.
      cookies: [{ name: 'sessionid', value: `${pw}-8`, domain: 'example.com', httpOnly: true, sameSite: 'Lax' }],
      output: { rds_master: { sensitive: true, value: `${pw}-9` }, region: { sensitive: false, value: 'eu-west-1' } },
      manifest: { kind: 'Secret', metadata: { name: 'db' }, data: { 'tls.key': `${pw}-10` } },
      configmap: { kind: 'ConfigMap', data: { LANG: 'C' } },
      // An argument after a secret-like option, whatever the list's length.
      argv: ['redis-server', '--requirepass', `${pw}-11`, '--port', '6379'],
      // `-p` as the command takes it: MySQL's attached, a registry login's next; any other command's is left alone.
      mysql: ['/usr/bin/mysql', '-u', 'root', `-p${pw}-19`, 'app'],
      login: ['docker', 'login', '-u', 'bob', '-p', `${pw}-20`, 'registry.example.com'],
      run: ['docker', 'run', '-p', '8080:80', 'nginx'],
      // Names of secrets that are words of the key: a short password name, a qualified key.
      variables: { DB_PASS: `${pw}-12`, LDAP_BIND_PW: `${pw}-13`, SECRET_KEY_BASE: `${pw}-14`, STRIPE_KEY: `${pw}-15`, AccountKey: `${pw}-16`, 'client-key-data': `${pw}-17`, PWD: '/home/bob', primary_key: 'id', session_key: 'nightly' },
      // Values no key makes a secret: flags, nothing, a schema describing the field.
      flags: { has_password: true, token: null, secret: false, properties: { password: { type: 'string', minLength: 8 } } },
    });
    const result = await session.close();
    const events = lines(result.log_path).map((line) => JSON.parse(line) as { kind: string; payload: Record<string, unknown>; agent_ids: { ids: Record<string, unknown> } });
    expect(events.find((e) => e.kind === 'deploy')?.payload).toEqual({
      env: [{ name: 'API_TOKEN', value: '[redacted]' }, { name: 'LANG', value: 'C.UTF-8' }],
      parameter: { Name: 'DB_PASSWORD', Value: '[redacted]', Type: 'SecureString' },
      tag: { key: 'client_secret', value: '[redacted]' },
      headers: [['Authorization', '[redacted]'], ['Accept', 'text/html']],
      entries: [['DB_PASSWORD', '[redacted]'], ['user', 'bob']],
      kept: [{ name: 'max_tokens', value: 100 }, { key: 'primary_key', value: 'id' }, ['password', 'a', 'b'], ['tokens', 7]],
      typed: [{ element: 'Password textbox', ref: 'e12', text: '[redacted]' }, { selector: 'input[name="api_key"]', value: '[redacted]' }, { element: 'Search box', ref: 'e3', text: 'forgot password' }],
      form: { fields: [{ name: 'Password (required)', type: 'textbox', ref: 'e4', value: '[redacted]' }, { name: 'Email', type: 'textbox', ref: 'e5', value: 'bob@example.com' }] },
      cookies: [{ name: 'sessionid', value: '[redacted]', domain: 'example.com', httpOnly: true, sameSite: 'Lax' }],
      output: { rds_master: { sensitive: true, value: '[redacted]' }, region: { sensitive: false, value: 'eu-west-1' } },
      manifest: { kind: 'Secret', metadata: { name: 'db' }, data: '[redacted]' },
      configmap: { kind: 'ConfigMap', data: { LANG: 'C' } },
      argv: ['redis-server', '--requirepass', '[redacted]', '--port', '6379'],
      mysql: ['/usr/bin/mysql', '-u', 'root', '[redacted]', 'app'],
      login: ['docker', 'login', '-u', 'bob', '-p', '[redacted]', 'registry.example.com'],
      run: ['docker', 'run', '-p', '8080:80', 'nginx'],
      variables: { DB_PASS: '[redacted]', LDAP_BIND_PW: '[redacted]', SECRET_KEY_BASE: '[redacted]', STRIPE_KEY: '[redacted]', AccountKey: '[redacted]', 'client-key-data': '[redacted]', PWD: '/home/bob', primary_key: 'id', session_key: 'nightly' },
      flags: { has_password: true, token: null, secret: false, properties: { password: { type: 'string', minLength: 8 } } },
    });
    expect(events.every((e) => JSON.stringify(e.agent_ids.ids['env']) === '[{"name":"DB_PASSWORD","value":"[redacted]"}]')).toBe(true);
    for (const file of [result.log_path, result.exports.summary ?? '', result.exports.otel ?? '']) expect(fs.readFileSync(file, 'utf8'), file).not.toContain(pw);
    expect(result.chain).toMatchObject({ hash_chain_valid: true, complete: true });
    expect(pythonVerify(result.log_path)).toMatchObject({ valid: true, events: events.length });
  });
});

describe('an injected secret', () => {
  const SECRET = 'pay-key-91d2c7e0b3a4f5';

  async function sessionWithSecretEverywhere(): Promise<{ home: string; result: SessionResult }> {
    const home = tempDir();
    const ag = agent('acme/pay', { home, capabilities: [{ id: 'c1', tool: 'pay', secret: 'env:PAY_KEY', inject_as: 'api_key' }] });
    const session = ag.session({ ids: countingIds(), clock: steppingClock(), secretBroker: { resolve: (ref) => (ref === 'env:PAY_KEY' ? SECRET : undefined) } });
    // The session learns the secret when it first injects it; from then on it records it nowhere.
    await session.tool('pay', { amount: 1 }, () => 'ok', { capabilityId: 'c1' });
    await session.tool(
      'pay',
      { amount: 10 },
      (live) => {
        const key = String(live['api_key']);
        // The secret as a key, beside a key that is already what it would be rewritten to, and inside a longer key.
        return { [key]: true, '[redacted]': 'was here first', [`prefix-${key}`]: { [key]: 1 }, echo: key };
      },
      { capabilityId: 'c1', stepId: `step-${SECRET}` },
    );
    session.emit('note', { text: 'after' }, { stepId: SECRET });
    return { home, result: await session.close() };
  }

  it('is scrubbed from keys and step ids too, keeping every entry apart, in the text Python Aura hashes', async () => {
    const { result } = await sessionWithSecretEverywhere();
    const events = lines(result.log_path).map((line) => JSON.parse(line) as { kind: string; step_id: string | null; payload: Record<string, unknown> });
    const toolResult = events.findLast((e) => e.kind === 'tool.result');
    expect(toolResult?.payload['result']).toEqual({ '[redacted]': 'was here first', '[redacted]~2': true, echo: '[redacted]', 'prefix-[redacted]': { '[redacted]': 1 } });
    expect(toolResult?.step_id).toBe('step-[redacted]');
    expect(events.find((e) => e.kind === 'note')?.step_id).toBe('[redacted]');
    expect(result.chain).toMatchObject({ hash_chain_valid: true, complete: true });
    expect(pythonVerify(result.log_path)).toMatchObject({ valid: true, events: events.length });
  });

  it('records the same object the same way every time (the rewritten keys have a stable order)', async () => {
    const texts: string[] = [];
    for (let run = 0; run < 2; run++) {
      const { result } = await sessionWithSecretEverywhere();
      const line = lines(result.log_path).findLast((l) => l.includes('"tool.result"')) ?? '';
      texts.push(line.slice(line.indexOf('"payload"'), line.indexOf('"telemetry"')));
    }
    expect(texts[0]).not.toBe('');
    expect(texts[1]).toBe(texts[0]);
  });

  it('is scrubbed in hex and in base64 (standard and URL-safe), alone or at any place inside an encoded blob, in the trail and in what the caller gets', async () => {
    const session = agent('acme/pay', { home: tempDir(), capabilities: [{ id: 'c1', tool: 'pay', secret: 'env:PAY_KEY', inject_as: 'api_key' }] })
      .session({ ids: countingIds(), clock: steppingClock(), secretBroker: { resolve: () => SECRET } });
    const encodings = (key: string): Record<string, string> => ({
      hex: Buffer.from(key).toString('hex'),
      HEX: Buffer.from(key).toString('hex').toUpperCase(),
      b64: Buffer.from(key).toString('base64'),
      // At each of the three alignments, inside longer encoded bytes.
      blob0: Buffer.from(`{"k":"${key}"}`).toString('base64'),
      blob1: Buffer.from(`{"ke":"${key}", "n": 1}`).toString('base64url'),
      blob2: Buffer.from(`{"key":"${key}", "n": 12}`).toString('base64'),
    });
    const answer = await session.tool('pay', { amount: 1 }, (live) => encodings(String(live['api_key'])), { capabilityId: 'c1' });
    const sent = encodings(SECRET);
    const result = await session.close();
    const trail = fs.readFileSync(result.log_path, 'utf8');
    for (const [name, text] of Object.entries(sent)) {
      expect(answer[name], name).not.toBe(text);
      expect(answer[name], name).toContain('[redacted]');
      expect(trail, name).not.toContain(text);
    }
    // What is left of a blob is only what its other bytes made.
    expect(trail).not.toContain(Buffer.from(SECRET).toString('base64').slice(0, 12));
  });

  it('is scrubbed in the forms a tool writes it back in (inside JSON text, in a URL, trimmed), and the caller never gets it back', async () => {
    // A password with a quote and a backslash, as a vault hands it over: with its line end.
    const secret = 'pa"ss\\word-9Zx-long\n';
    const session = agent('acme/pay', { home: tempDir(), capabilities: [{ id: 'c1', tool: 'pay', secret: 'env:PAY_KEY', inject_as: 'api_key' }] })
      .session({ ids: countingIds(), clock: steppingClock(), secretBroker: { resolve: () => secret } });
    const answer = await session.tool('pay', { amount: 1 }, (live) => {
      const key = String(live['api_key']);
      return { body: JSON.stringify({ key }), url: `https://pay.example.com/v1?k=${encodeURIComponent(key)}`, trimmed: `key ${key.trim()} rejected`, [key.trim()]: 1, list: [key] };
    }, { capabilityId: 'c1' });
    expect(answer).toEqual({ body: '{"key":"[redacted]"}', url: 'https://pay.example.com/v1?k=[redacted]', trimmed: 'key [redacted] rejected', '[redacted]': 1, list: ['[redacted]'] });
    const failure = await session.tool('pay', { amount: 2 }, (live) => {
      throw new Error(`declined for key ${String(live['api_key']).trim()}`);
    }, { capabilityId: 'c1' }).catch((error: unknown) => error as Error);
    expect(failure.message).toBe('declined for key [redacted]');
    expect(failure.stack).not.toContain('9Zx');
    const result = await session.close();
    expect(fs.readFileSync(result.log_path, 'utf8')).not.toContain('9Zx');
    expect(result.chain).toMatchObject({ hash_chain_valid: true, complete: true });
  });

  /** What a tool given `secret` answers (`answer(secret)`), what its caller gets, and what the trail records of it. */
  async function answered(secret: string, answer: (key: string) => Record<string, string>): Promise<{ given: Record<string, string>; got: Record<string, string>; recorded: unknown; trail: string }> {
    const session = agent('acme/pay', { home: tempDir(), capabilities: [{ id: 'c1', tool: 'pay', secret: 'env:PAY_KEY', inject_as: 'api_key' }] })
      .session({ ids: countingIds(), clock: steppingClock(), secretBroker: { resolve: () => secret } });
    const got = await session.tool('pay', { amount: 1 }, (live) => answer(String(live['api_key'])), { capabilityId: 'c1' });
    const result = await session.close();
    const events = lines(result.log_path).map((line) => JSON.parse(line) as { kind: string; payload: Record<string, unknown> });
    expect(result.chain).toMatchObject({ hash_chain_valid: true, complete: true });
    return { given: answer(secret), got, recorded: events.find((e) => e.kind === 'tool.result')?.payload['result'], trail: fs.readFileSync(result.log_path, 'utf8') };
  }

  // Each character but a letter, a digit or one of `kept` as %XX of its UTF-8 bytes, as URL encoders write text.
  const percentEncoded = (text: string, kept: string, space = '%20'): string =>
    Array.from(text, (char) => (/[A-Za-z0-9]/.test(char) || kept.includes(char) ? char : char === ' ' ? space : Array.from(Buffer.from(char), (byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join(''))).join('');
  const unicodeEscaped = (text: string, chars: RegExp, upper: boolean): string =>
    text.replace(chars, (char) => `\\u${(upper ? char.charCodeAt(0).toString(16).toUpperCase() : char.charCodeAt(0).toString(16)).padStart(4, '0')}`);

  it('is scrubbed written in another case (upper, lower, some letters changed), in the trail and in what the caller gets', async () => {
    const secret = 'qT7mWz42LkRb9sVn';
    const { given, got, recorded, trail } = await answered(secret, (key) => ({ upper: `KEY ${key.toUpperCase()} OK`, lower: key.toLowerCase(), some: `[${key.replace(/[a-m]/g, (c) => c.toUpperCase())}]` }));
    expect(given.upper).toBe('KEY QT7MWZ42LKRB9SVN OK');
    expect(got).toEqual({ upper: 'KEY [redacted] OK', lower: '[redacted]', some: '[[redacted]]' });
    expect(recorded).toEqual(got);
    for (const form of [secret, secret.toUpperCase(), secret.toLowerCase()]) expect(trail).not.toContain(form);
  });

  it('is scrubbed however a URL, a form, JSON text or HTML escapes it (whichever characters the encoder keeps, in either case), in the trail and in what the caller gets', async () => {
    // A base64-alphabet key, as AWS's secret keys are, with the characters encoders disagree on; it
    // starts as JSON's escape of a line break does after a backslash.
    const secret = "n8Vt/3Rk+Lm9/Zx2 Wp7!~'(é)*&=";
    const escaped = (key: string): Record<string, string> => ({
      quote: percentEncoded(key, '_.-~/'), // Python's urllib.parse.quote
      quotePlus: percentEncoded(key, '_.-~', '+'), // urlencode, quote_plus
      searchParams: new URLSearchParams({ q: key }).toString().slice(2),
      phpUrlencode: percentEncoded(key, '-_.', '+'),
      rawurlencode: percentEncoded(key, '-_.~'),
      goPathEscape: percentEncoded(key, "-._~!$&'()*+,;=:@"),
      encodeURI: encodeURI(key),
      lowercase: encodeURIComponent(key).replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase()),
      phpJson: JSON.stringify(key).slice(1, -1).replace(/\//g, '\\/'),
      dotnetJson: unicodeEscaped(JSON.stringify(key).slice(1, -1), /[+'&<>]|[^\x20-\x7e]/g, true),
      pythonJson: unicodeEscaped(JSON.stringify(key).slice(1, -1), /[^\x20-\x7e]/g, false),
      pythonHtml: key.replace(/&/g, '&amp;').replace(/'/g, '&#x27;'),
      phpHtml: key.replace(/&/g, '&amp;').replace(/'/g, '&#039;'),
    });
    const { given, got, recorded, trail } = await answered(secret, (key) => ({
      ...Object.fromEntries(Object.entries(escaped(key)).map(([name, text]) => [name, `GET https://api.example.com/v1?q=${text}&n=1`])),
      // Raw after a backslash, where reading escapes would misread it.
      path: `C:\\keys\\${key}`,
      // Strings that only share its start are no form of it.
      start: `${secret.slice(0, 14)}Yk2/other-tail`,
      startEscaped: `q=${encodeURIComponent(secret.slice(0, -1))}`,
    }));
    for (const name of Object.keys(escaped(secret))) {
      // Each encoder escapes some of it.
      expect(given[name], name).not.toContain(secret);
      expect(got[name], name).toBe('GET https://api.example.com/v1?q=[redacted]&n=1');
      expect(trail, name).not.toContain(escaped(secret)[name]);
    }
    expect(got['path']).toBe('C:\\keys\\[redacted]');
    expect(got['start']).toBe(given['start']);
    expect(got['startEscaped']).toBe(given['startEscaped']);
    expect(recorded).toEqual(got);
  });

  it('is scrubbed in base64 and hex laid out over lines (MIME, PEM, CRLF, indented, inside JSON text) or in groups (colons, spaces), each line kept; base64 of another value is kept', async () => {
    // A 100-character key: its base64 runs over two or three lines.
    const secret = Buffer.from(Array.from({ length: 75 }, (_, i) => (i * 97 + 31) % 256)).toString('base64');
    const base64 = (text: string, url = false): string => Buffer.from(text).toString(url ? 'base64url' : 'base64');
    const wrapped = (text: string, width: number, newline = '\n'): string => (text.match(new RegExp(`.{1,${width}}`, 'g')) ?? []).join(newline);
    const hex = (text: string): string => Buffer.from(text).toString('hex');
    // The text each encoding lays the key out in, and what comes before the key in the bytes it encodes.
    const laidOut = (key: string): Record<string, readonly [string, string]> => ({
      mime: [wrapped(base64(`prefix text: ${key} trailing`), 76), 'prefix text: '],
      pem: [`${wrapped(base64(`xxxxx${key}`), 64)}\n`, 'xxxxx'],
      crlf: [wrapped(base64(`hello ${key}`), 76, '\r\n'), 'hello '],
      url: [wrapped(base64(`id=${key}&n=2`, true), 76), 'id='],
      indented: [`data: |\n${wrapped(base64(`user:${key}`), 60).replace(/^/gm, '    ')}\n`, 'user:'],
      json: [JSON.stringify({ body: wrapped(base64(`hello ${key}`), 76) }), 'hello '],
      hexColons: [hex(key).toUpperCase().replace(/(..)(?!$)/g, '$1:'), ''],
      hexdump: [wrapped(hex(`abc${key}`).replace(/(..)(?!$)/g, '$1 '), 48), 'abc'],
      hexWrapped: [wrapped(hex(key), 60), ''],
    });
    const { given, got, recorded } = await answered(secret, (key) => ({
      ...Object.fromEntries(Object.entries(laidOut(key)).map(([name, [text]]) => [name, text])),
      // A value that shares only the key's first half.
      other: wrapped(base64(`prefix text: ${key.slice(0, 50)}${'Q'.repeat(50)} trailing`), 76),
    }));
    const flat = (text: string): string => text.replace(/[\s:]|\\[rn]/g, '');
    const breaks = (text: string): string[] => text.match(/\r\n|\n|\\n/g) ?? [];
    for (const [name, [text, before]] of Object.entries(laidOut(secret))) {
      const at = Buffer.byteLength(before);
      // The characters made of the key's bits alone.
      const own = name.startsWith('hex') ? flat(text).toLowerCase().slice(at * 2, (at + 100) * 2) : flat(text).slice(Math.ceil((at * 8) / 6), Math.floor(((at + 100) * 8) / 6));
      expect(own.length, name).toBeGreaterThan(100);
      const left = flat(got[name] ?? '').toLowerCase();
      for (let i = 0; i + 12 <= own.length; i++) expect(left.includes(own.slice(i, i + 12).toLowerCase()), `${name}: ${own.slice(i, i + 12)}`).toBe(false);
      expect(got[name], name).toContain('[redacted]');
      expect(breaks(got[name] ?? ''), name).toEqual(breaks(text));
    }
    expect(got['indented']?.split('\n').slice(1, -1).every((line) => line.startsWith('    ') && line.trim() !== '')).toBe(true);
    expect(got['other']).toBe(given['other']);
    expect(recorded).toEqual(got);
  });

  it('shorter than 8 characters is left as it is, in every form: it would scrub ordinary words and ids', async () => {
    const { given, got } = await answered('Kx9-Tq2\n', (key) => ({ text: `key ${key.trim()}`, hex: Buffer.from(key.trim()).toString('hex'), base64: Buffer.from(`user:${key.trim()}`).toString('base64') }));
    expect(got).toEqual(given);
  });

  it('is looked for in time linear in the length of the text, pathological texts included', () => {
    const redactor = new SessionRedactor();
    const secret = "n8Vt/3Rk+Lm9/Zx2 Wp7!~'(é)*&=";
    redactor.addSecret(secret);
    const base64 = Buffer.from(secret).toString('base64');
    const texts: readonly (readonly [string, string])[] = [
      ['percent signs', '%'.repeat(200_000)],
      ['escapes of its first character', '%6E'.repeat(60_000)],
      ['all of it but its last character, again and again', secret.slice(0, -1).repeat(7_000)],
      ['its start, percent-encoded, again and again', encodeURIComponent(secret.slice(0, 20)).repeat(6_000)],
      ['all of it, percent-encoded, again and again', encodeURIComponent(secret).repeat(4_000)],
      ['all of it in base64, again and again, over lines', Buffer.from(secret.repeat(5_000)).toString('base64').replace(/(.{76})/g, '$1\n')],
      ['the start of its base64 over many lines', `${base64.slice(0, 24)}\n`.repeat(8_000)],
      ['the start of its hex, spaced, again and again', Buffer.from(secret.slice(0, 12)).toString('hex').replace(/(..)/g, '$1 ').repeat(5_000)],
      ['hex digits between long runs of spaces', `6e${' '.repeat(100_000)}38${' '.repeat(100_000)}56`],
      ['colons', ':'.repeat(200_000)],
      ['escaped line breaks', '\\n'.repeat(100_000)],
      ['backslashes', '\\'.repeat(200_000)],
      ['ampersands and hashes', '&#'.repeat(100_000)],
    ];
    for (const [name, text] of texts) {
      const started = performance.now();
      redactor.scrub(text);
      redactor.withoutInjected(text);
      expect(performance.now() - started, name).toBeLessThan(LINEAR_MS);
    }
  });

  it('reaches no file or output: trail, summary, spans, logs --json, report show --json, the report page', async () => {
    const { home, result } = await sessionWithSecretEverywhere();
    const page = path.join(home, 'report.html');
    const outputs = [
      aura(['logs', result.session_id, '--json'], { home }),
      aura(['report', 'show', result.session_id, '--json'], { home }),
      aura(['report', 'html', result.session_id, '-o', page], { home }),
    ];
    for (const run of outputs) expect(run.status === 0 || run.status === 1, run.stderr).toBe(true);
    const texts = [
      ...[result.log_path, result.exports.summary ?? '', result.exports.otel ?? '', page].map((file) => [file, fs.readFileSync(file, 'utf8')]),
      ...outputs.map((run, i) => [`output ${i}`, run.stdout + run.stderr]),
    ];
    for (const [where, text] of texts) expect(text?.includes(SECRET), where).toBe(false);
  });

  it('is cleared from what a relay passes on whole, or the value is not passed on: too deep, or not plain data', () => {
    const redactor = new SessionRedactor();
    let deep: unknown = SECRET;
    for (let i = 0; i < 600; i++) deep = [deep];
    const message = { method: 'notifications/message', params: { data: `key ${SECRET}`, level: 'info' } };
    // Nothing injected yet: handed on as it is, the very value.
    expect(redactor.withoutInjectedWhole(message)).toBe(message);
    expect(redactor.withoutInjectedWhole(deep)).toBe(deep);
    redactor.addSecret(SECRET);
    expect(redactor.withoutInjectedWhole(message)).toEqual({ method: 'notifications/message', params: { data: 'key [redacted]', level: 'info' } });
    expect(redactor.withoutInjectedWhole({ plain: 'words', n: 1 })).toEqual({ plain: 'words', n: 1 });
    expect(redactor.withoutInjectedWhole({ echo: deep })).toBeUndefined();
    expect(redactor.withoutInjectedWhole({ at: new Date(0) })).toBeUndefined();
    // The walk that need not be whole hands them back.
    expect(redactor.withoutInjected(deep)).toBe(deep);
  });

  it('is scrubbed whole from the pieces of a text cut where it may begin: the piece ends before it', () => {
    const redactor = new SessionRedactor();
    expect(redactor.scrubStart(`xx ${SECRET.slice(0, 6)}`)).toEqual({ scrubbed: `xx ${SECRET.slice(0, 6)}`, rest: '' });
    redactor.addSecret(SECRET);
    expect(redactor.scrubStart(`xx ${SECRET.slice(0, 6)}`)).toEqual({ scrubbed: 'xx ', rest: SECRET.slice(0, 6) });
    expect(redactor.scrubStart(`${SECRET} and ${SECRET.slice(0, 3)}`)).toEqual({ scrubbed: '[redacted] and ', rest: SECRET.slice(0, 3) });
    expect(redactor.scrubStart(`${SECRET} token=ghp_${'x9'.repeat(18)} ok`)).toEqual({ scrubbed: '[redacted] token=[redacted] ok', rest: '' });
    // Its encodings too: its base64 cut short.
    const encoded = Buffer.from(SECRET).toString('base64');
    expect(redactor.scrubStart(`auth ${encoded.slice(0, 10)}`)).toEqual({ scrubbed: 'auth ', rest: encoded.slice(0, 10) });
  });
});

describe('credentials in text', () => {
  const OPENAI = `sk-proj-${'A1b2'.repeat(10)}`;
  const GITHUB = `ghp_${'x9'.repeat(18)}`;
  const JWT = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U';
  // [as given, as recorded]
  const REDACTED_TEXTS: readonly (readonly [string, string])[] = [
    [`OPENAI_API_KEY=${OPENAI}\nDB_PASSWORD=hunter2hunter2\nDEBUG=true`, 'OPENAI_API_KEY=[redacted]\nDB_PASSWORD=[redacted]\nDEBUG=true'],
    [`git push https://${GITHUB}@github.com/acme/x AKIAIOSFODNN7EXAMPLE`, 'git push https://[redacted]@github.com/acme/x [redacted]'],
    ['curl -H "Authorization: Bearer abcdefghijklmnopqrstuvwxyz" https://api.example.com', 'curl -H "Authorization: Bearer [redacted]" https://api.example.com'],
    ['curl -H "Authorization: Bearer short" -H \'X-Api-Key: 12345\' https://x', 'curl -H "Authorization: [redacted]" -H \'X-Api-Key: [redacted]\' https://x'],
    ['{"password": "two words", "user": "bob", "max_tokens": 100}', '{"password": "[redacted]", "user": "bob", "max_tokens": 100}'],
    ['psql postgres://admin:pa55word@db.example.com/app', 'psql postgres://admin:[redacted]@db.example.com/app'],
    ['mysql --password=topsecret -u root', 'mysql --password=[redacted] -u root'],
    ['https://x.example.com/cb?access_token=abc123&state=ok', 'https://x.example.com/cb?access_token=[redacted]&state=ok'],
    ['export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', 'export AWS_SECRET_ACCESS_KEY=[redacted]'],
    ['db:\n  password: s3cret\n  host: db', 'db:\n  password: [redacted]\n  host: db'],
    ['key file:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----\nend', 'key file:\n[redacted]\nend'],
    ['cut short: -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk', 'cut short: [redacted]'],
    [`session ${JWT}`, 'session [redacted]'],
    // A key's prefix marks it inside a path or an id too.
    [`GET https://api.example.com/v1/keys/${OPENAI}/usage for step-${GITHUB}`, 'GET https://api.example.com/v1/keys/[redacted]/usage for step-[redacted]'],
    ['mysql -u root --password Pw-Text-01 app --api-token "two words"', 'mysql -u root --password [redacted] app --api-token "[redacted]"'],
    ['curl -u admin:Pw-Text-02 https://x.example.com', 'curl -u admin:[redacted] https://x.example.com'],
    ['redis://:Pw-Text-08@cache:6379/0 and postgres://app:Pw@Text-09@db/app', 'redis://:[redacted]@cache:6379/0 and postgres://app:[redacted]@db/app'],
    ['BEARER abcdefghijklmnopqrstuvwxyz', 'BEARER [redacted]'],
    ['cannot reach: credentials: http://user:Pw-Text-10@127.0.0.1:1/mcp', 'cannot reach: credentials: http://user:[redacted]@127.0.0.1:1/mcp'],
  ];
  // Text that names secrets without holding one, and look-alikes of what is taken.
  const KEPT_TEXTS = [
    'PASSWORD=$DB_PASSWORD ./run.sh',
    'TOKEN=${GITHUB_TOKEN} make',
    'token_count=3 total_tokens: 5 max_tokens=100',
    'password: null, auth: true',
    'keyboard: qwerty; monkey=1; author: ann',
    'see https://example.com/docs?page=2',
    '2026-12-03T18:21:06.635906+00:00',
    'sk-short and ghp_short',
    'the store postgres://someone:***@db.example.com/aura; password=***',
    'a risk-assessment-framework-for-2024 and desk_live_reports_of_the_week',
    'mysql --password-file /run/db.pw --tokens 5 -u root; git commit --author ann; curl -u admin:*** https://x',
    'token_count: 3 of 5\nmax_tokens: 100 per call',
    '<key>name</key><password/><token>\n</token><password>${DB_PASSWORD}</password>',
    'ALTER ROLE r PASSWORD NULL; the bug was identified by ann',
    'notes: |\n  the password field is required\npassword: |\ntoken: >-\n  $API_TOKEN',
    '- name: DB_PASSWORD\n  valueFrom:\n    secretKeyRef: {name: db, key: password}\n- name: max_tokens\n  value: 100\n- name: API_TOKEN\n  value: $API_TOKEN',
    '- value: /root\n  name: HOME\n<key>password</key><true/><key>note</key><string>the password field is required</string>',
    'DB_PASSWORD=\nexport API_TOKEN=${API_TOKEN} # from the vault\nthe password field is required',
    'CREATE USER u IDENTIFIED BY :new_pw; ALTER USER u IDENTIFIED BY &pw; ALTER USER u IDENTIFIED EXTERNALLY; the user was identified by badge',
    'Name=HOME,Value=/root Key=region,Value=eu {"name": "max_tokens", "value": 100} Name=DB_PASSWORD,Value=$DB_PASSWORD',
    'mysql -u root -p app; mkdir -p /tmp/x && tar -pxvf a.tar; docker run -p 8080:80 nginx; ssh -p 22 host; docker login -u bob --password-stdin r',
    'sqlplus / as sysdba; sqlplus scott/$DB_PASSWORD@db\nconnect to/from the api/v1 endpoint',
    'npm config set registry https://registry.example.com; echo done | grep x; openssl enc -pass env:PW; keytool -storepass:env PW; redis-cli -a $REDIS_PW; gh secret set A --body "$A"',
    'docker run -d --name mongo -p 27017:27017 mongo:7; find /var/lib/mysql -name "*.err" -print; find /etc/mysql -perm -o+w; ssh -p 22 host',
    'expdp parfile=/home/oracle/exp_full.par; sqlldr control=/u01/load/emp.ctl; rman cmdfile=/u01/scripts/backup.rman; target 80/20 split\nConnect I/O as shown in figure 3.',
    'auth:\n  headers:\n    - name: X-Tenant\n      value: acme\ntoken:\n  type: jwt\n  claims:\n    - name: aud\n      value: api.example.com',
    '<input type="password" name="password" value="{{ form.password }}">',
    'if (token == null) return; if (password === "") fail(); assert password == expected',
    'ENV PATH /usr/local/bin\nOLDPWD=/home/bob\nthe password field of a machine learning form',
    // (A line that is JSON by itself goes through the rules for values: here the object is text.)
    'settings {"api_key": {"id": 7}}\nsecrets:\n  DB_PASSWORD:\n    description: kept in the vault\n    value: $DB_PASSWORD',
    // Code that reads a secret from elsewhere, on one line and among others.
    'let password = prompt("Password:"); const token = await getToken(); api_key = os.getenv("API_KEY")',
    'interface Config { apiKey: string; token?: string }\npassword: Optional[str] = None\nPASSWORD = os.environ["DB_PASSWORD"]\ndb_password: process.env.DB_PASSWORD,\npw = getpass.getpass("Password: ")\ntoken = env(\'API_TOKEN\')',
    'tokens.map(token => token.trim()); tokens.map(token => "Bearer " + token); token = os.getenv("TOKEN")  # from the env',
    "tokens.forEach(token => revoke(token)); 'password' => $db_password, 'api_key' => $config->api_key\npassword: ${{ secrets.DB_PASSWORD }}",
    "await page.fill('#email', 'bob@example.com'); await page.fill('#search', 'password reset'); page.getByLabel('Email').fill('bob@example.com')",
    '/// <param name="password">The user\'s password.</param>\n<data name="Password" xml:space="preserve"><value>Mot de passe</value></data><xs:element name="password">x y</xs:element>',
    '<string name="prompt_password">Password</string><a id="forgot-password" href="/reset">Forgot your password?</a><button name="reset_password">Reset password</button><div className="secret">Top secret</div>',
  ];

  function recorded(given: readonly string[]): { result: Promise<SessionResult>; seen: string[] } {
    const session = agent('acme/text', { home: tempDir() }).session({ ids: countingIds(), clock: steppingClock() });
    const seen: string[] = [];
    const done = (async () => {
      // The tool gets what it was given; the trail holds it redacted, in the arguments and the result alike.
      await session.tool('shell', { commands: given }, (live) => {
        seen.push(...(live['commands'] as string[]));
        return { output: given };
      });
      return session.close();
    })();
    return { result: done, seen };
  }

  /** Records the texts as a tool's arguments and result, and checks both hold them as expected and the trail none of the secrets. */
  async function expectRecordedAs(texts: readonly (readonly [string, string])[], secrets: readonly string[]): Promise<void> {
    const given = texts.map(([text]) => text);
    const run = recorded(given);
    const result = await run.result;
    expect(run.seen).toEqual(given);
    const events = lines(result.log_path).map((line) => JSON.parse(line) as { kind: string; payload: Record<string, unknown> });
    const expected = texts.map(([, text]) => text);
    expect((events.find((e) => e.kind === 'tool.call')?.payload['args'] as { commands: string[] }).commands).toEqual(expected);
    expect((events.find((e) => e.kind === 'tool.result')?.payload['result'] as { output: string[] }).output).toEqual(expected);
    const trail = fs.readFileSync(result.log_path, 'utf8');
    for (const secret of secrets) expect(trail.includes(secret), secret).toBe(false);
    expect(result.chain).toMatchObject({ hash_chain_valid: true, complete: true });
    expect(pythonVerify(result.log_path)).toMatchObject({ valid: true, events: events.length });
  }

  it('are [redacted] each time a session records the same text again, and a secret injected since is scrubbed from it too', () => {
    const redactor = new SessionRedactor();
    const long = `${'word '.repeat(60)}DB_PASSWORD=hunter2hunter2`;
    for (let i = 0; i < 3; i++) {
      expect(redactor.scrub('DB_PASSWORD=hunter2hunter2')).toBe('DB_PASSWORD=[redacted]');
      expect(redactor.scrub(long)).toBe(`${'word '.repeat(60)}DB_PASSWORD=[redacted]`);
    }
    // Words of aura's own that pass the credential gate (`pass`, `token`), read once and then kept.
    expect(redactor.scrub('constraint.passed by max_tokens_per_step: held-value-1234')).toBe('constraint.passed by max_tokens_per_step: held-value-1234');
    redactor.addSecret('held-value-1234');
    expect(redactor.scrub('constraint.passed by max_tokens_per_step: held-value-1234')).toBe('constraint.passed by max_tokens_per_step: [redacted]');
  });

  it('are [redacted] the same way whether a session kept the text, dropped it for newer ones, or never kept it', () => {
    const redactor = new SessionRedactor();
    const texts = ['DB_PASSWORD=hunter2hunter2', `Authorization: Bearer ${OPENAI}`, '/workspace/src/module_1.ts', 'inspect the module'];
    const expected = texts.map((text) => redactCredentials(text));
    expect(expected.slice(0, 2)).toEqual(['DB_PASSWORD=[redacted]', 'Authorization: Bearer [redacted]']);
    let other = 0;
    // Other texts in between, credentials among them: after 1,500 the texts are kept as older ones, after 2,500 no longer.
    for (const between of [0, 0, 1_500, 2_500, 0]) {
      for (let i = 0; i < between; i++, other++) expect(redactor.scrub(other % 100 === 0 ? `api_key=k${other}-abcdefgh` : `/workspace/file_${other}.ts`)).toBe(other % 100 === 0 ? 'api_key=[redacted]' : `/workspace/file_${other}.ts`);
      expect(texts.map((text) => redactor.scrub(text))).toEqual(expected);
    }
  });

  it('are recorded as [redacted] in every string, the name, scheme word and URL around them kept; the tool gets them as given', async () => {
    await expectRecordedAs(REDACTED_TEXTS, [OPENAI, GITHUB, JWT, 'hunter2hunter2', 'AKIAIOSFODNN7EXAMPLE', 'pa55word', 'topsecret', 'abc123', 'wJalrXUtnFEMI', 's3cret', 'MIIEowIBAAKCAQEA', 'b3BlbnNzaC1rZXk', 'Pw-Text', 'Text-09']);
  });

  it('in headers whole, in key blocks and token shapes of more vendors, in webhook and signed URLs, are [redacted]', async () => {
    await expectRecordedAs([
      ["curl -H 'Cookie: _ga=1; sessionid=Hdr-Pw-01' -H \"Authorization: Bot Hdr-Pw-02\" https://x", "curl -H 'Cookie: [redacted]' -H \"Authorization: [redacted]\" https://x"],
      ['-----BEGIN PGP PRIVATE KEY BLOCK-----\nHdr-Pw-03\n-----END PGP PRIVATE KEY BLOCK-----\nok', '[redacted]\nok'],
      [`npm_${'A'.repeat(36)} hf_${'B'.repeat(34)} glpat-${'C'.repeat(20)} hvs.${'D'.repeat(24)}`, '[redacted] [redacted] [redacted] [redacted]'],
      ['https://hooks.slack.com/services/T0/B0/HdrPw04 https://discord.com/api/webhooks/123/HdrPw05', 'https://hooks.slack.com/services/[redacted] https://discord.com/api/webhooks/123/[redacted]'],
      ['https://b.s3.amazonaws.com/k?X-Amz-Signature=HdrPw06&x=1 https://a.blob.core.windows.net/c?sv=2020&sig=HdrPw07', 'https://b.s3.amazonaws.com/k?X-Amz-Signature=[redacted]&x=1 https://a.blob.core.windows.net/c?sv=2020&sig=[redacted]'],
    ], ['Hdr-Pw', 'HdrPw', 'A'.repeat(36), 'B'.repeat(34), 'C'.repeat(20), 'D'.repeat(24)]);
  });

  it('given to a secret-like name that starts a line (YAML, headers, env files) are [redacted] to the line\'s end, spaces and all, its break kept', async () => {
    await expectRecordedAs([
      ['db:\n  password: correct horse battery staple\n  host: db', 'db:\n  password: [redacted]\n  host: db'],
      ['password: two words\r\nuser: bob', 'password: [redacted]\r\nuser: bob'],
      ['env:\n  - api_token: Yaml Pw 01 # rotated\n  - name: x', 'env:\n  - api_token: [redacted]\n  - name: x'],
      ['Set-Cookie: sid=Yaml-Pw-02 a; Path=/; HttpOnly', 'Set-Cookie: [redacted]; Path=/; HttpOnly'],
      ['A_TOKEN=Env Pw 01 here\nDEBUG=true', 'A_TOKEN=[redacted]\nDEBUG=true'],
      ['  export DB_PASSWORD=Env Pw 02 # rotated\r\nexport DB_PASSWORD="Env Pw 03 quoted"', '  export DB_PASSWORD=[redacted]\r\nexport DB_PASSWORD="[redacted]"'],
      ['- API_KEY = Env Pw 04\naccess_token=Env-Pw-05&state=ok', '- API_KEY = [redacted]\naccess_token=[redacted]&state=ok'],
      // Named in words, as tools print what they made; a table's row, as Vault prints one.
      ['Unseal Key 1: Env-Pw-06\nInitial Root Token: Env-Pw-07\nAPI Key: Env Pw 08\nPrimary key: id', 'Unseal Key 1: [redacted]\nInitial Root Token: [redacted]\nAPI Key: [redacted]\nPrimary key: id'],
      ['Key         Value\n---         -----\npassword    Env-Pw-09\nusername    bob', 'Key         Value\n---         -----\npassword    [redacted]\nusername    bob'],
    ], ['horse', 'battery', 'staple', 'two words', 'Yaml Pw', 'Yaml-Pw', 'Env Pw', 'Env-Pw']);
  });

  it('given to a secret-like name before a command on one line are [redacted], the command kept readable', async () => {
    await expectRecordedAs([
      ['PGPASSWORD=Cmd-Pw-01 psql -h db -c "select 1"', 'PGPASSWORD=[redacted] psql -h db -c "select 1"'],
      ['export API_TOKEN=Cmd-Pw-02 && ./deploy.sh --env prod', 'export API_TOKEN=[redacted] && ./deploy.sh --env prod'],
      // A scheme word goes with the credential after it, at a line's start or within it.
      ['API_TOKEN=Token Cmd-Pw-03 ./run.sh', 'API_TOKEN=[redacted] ./run.sh'],
      ['env API_TOKEN=Token Cmd-Pw-04 ./run.sh', 'env API_TOKEN=[redacted] ./run.sh'],
    ], ['Cmd-Pw']);
  });

  it('given to a secret-like name in code (PHP, Ruby and Perl arrows, Go\'s :=, a call that holds it) are [redacted], whole', async () => {
    await expectRecordedAs([
      ["$config = ['api_key' => 'Code-Pw-01', 'db' => 'app']; :api_token => \"Code-Pw-02\"", "$config = ['api_key' => '[redacted]', 'db' => 'app']; :api_token => \"[redacted]\""],
      ['password := "Code-Pw-03"', 'password := "[redacted]"'],
      // A call's arguments go with it: text in them may be the secret, a reader's default too.
      ['token = SecretStr("Code Pw 04")\n  const password = new Secret("Code-Pw-05", 2);', 'token = [redacted]\n  const password = [redacted];'],
      ['api_key = os.getenv("API_KEY", "Code-Pw-06")', 'api_key = [redacted]'],
      ['password = new SecretStr("Code Pw 07")', 'password = [redacted]'],
      // On one line, a spaced `=` is code's, and its value runs on: a fallback after a reader too.
      ['token = os.getenv("API_TOKEN") or "Code-Pw-08"', 'token = [redacted]'],
      // A declared type goes with the name; the value is what follows its `=`.
      ['const password: string = "Code-Pw-09";\nx\n  api_key: Optional[str] = "Code-Pw-10"\nlet db_password: Secret<string> = "Code-Pw-11"', 'const password: string = "[redacted]";\nx\n  api_key: Optional[str] = "[redacted]"\nlet db_password: Secret<string> = "[redacted]"'],
      // Go: a conversion, a call inside a call.
      ['db_password := []byte("Code-Pw-12")\ntoken := base64.StdEncoding.EncodeToString([]byte("user:Code-Pw-13"))', 'db_password := [redacted]\ntoken := [redacted]'],
      // A word with parentheses is a password, not a call; a quote that reopens the string holds a value.
      ['DB_PASSWORD=Summer(2024)\nredis_password: hunter(42) x\nsh -c \'PGPASSWORD=\'Code-Pw-14\' psql -h db\'', 'DB_PASSWORD=[redacted]\nredis_password: [redacted]\nsh -c \'PGPASSWORD=\'[redacted]\' psql -h db\''],
      ["'password' => env('DB_PASSWORD', 'Code-Pw-15'),\ndefine('DB_PASSWORD', 'Code-Pw-16');", "'password' => [redacted],\ndefine('DB_PASSWORD', '[redacted]');"],
      // A shell string reopened before a value that starts with punctuation.
      ["sh -c 'DB_PASSWORD='!Code-Pw-17' run'", "sh -c 'DB_PASSWORD='[redacted]' run'"],
      // What a reader falls back on, wherever the name stands.
      ['const token = process.env.API_TOKEN ?? "Code-Pw-18"; $password = getenv(\'P\') ?: \'Code-Pw-19\'; Client(api_key=K or "Code-Pw-20")', 'const token = [redacted]; $password = [redacted]; Client(api_key=[redacted])'],
      // A variable's default is a value: `${NAME:-…}`, Spring's `${NAME:…}`.
      ['POSTGRES_PASSWORD: ${POSTGRES_PASSWORD:-Code-Pw-21}\npassword=${DB_PASSWORD:Code-Pw-22}', 'POSTGRES_PASSWORD: [redacted]\npassword=[redacted]'],
      // Set through a subscript.
      ["app.config['SECRET_KEY'] = 'Code-Pw-23'; $db['default']['password'] = 'Code-Pw-24'; os.environ[\"DB_PASSWORD\"] = \"Code-Pw-25\"; config[:api_key] = \"Code-Pw-26\"", "app.config['SECRET_KEY'] = '[redacted]'; $db['default']['password'] = '[redacted]'; os.environ[\"DB_PASSWORD\"] = \"[redacted]\"; config[:api_key] = \"[redacted]\""],
      ["define( 'DB_PASSWORD', getenv_docker('WORDPRESS_DB_PASSWORD', 'Code-Pw-27') );\n'password' => Hash::make('Code-Pw-28'),\n'api_key' => $crypt->decrypt('Code-Pw-29')\n'token' => 'Code-Pw-30' # prod", "define( 'DB_PASSWORD', [redacted] );\n'password' => [redacted],\n'api_key' => [redacted]\n'token' => '[redacted]' # prod"],
      ['const API_KEY: &str = "Code-Pw-31";\ndef f(password: str="Code-Pw-32")', 'const API_KEY: &str = "[redacted]";\ndef f(password: str="[redacted]")'],
      // A template literal; Make's `?=` and `+=`; PowerShell's plain-text secure string; a Terraform variable's default.
      ['const password = `Code-Pw-33`;\nx = 1; DB_PASSWORD ?= Code-Pw-34\nAPI_TOKEN += Code-Pw-35', 'const password = `[redacted]`;\nx = 1; DB_PASSWORD ?= [redacted]\nAPI_TOKEN += [redacted]'],
      ['$p = ConvertTo-SecureString -String Code-Pw-36 -AsPlainText -Force', '$p = ConvertTo-SecureString -String [redacted] -AsPlainText -Force'],
      // SQL Server's tools, ssh-keygen, HTTPie, Windows' net user, chpasswd, Go's MySQL DSN, wpa_supplicant.
      ["sqlcmd -S db -U sa -P 'Code-Pw-42' -Q \"select 1\"; ssh-keygen -t ed25519 -N \"Code-Pw-43\" -f k; http -a bob:Code-Pw-44 GET https://x", "sqlcmd -S db -U sa -P '[redacted]' -Q \"select 1\"; ssh-keygen -t ed25519 -N \"[redacted]\" -f k; http -a bob:[redacted] GET https://x"],
      ["net user bob Code-Pw-45 /add\necho 'bob:Code-Pw-46' | chpasswd\ndsn := \"root:Code-Pw-47@tcp(127.0.0.1:3306)/app\"\n  psk=\"Code-Pw-48\"", "net user bob [redacted] /add\necho '[redacted]' | chpasswd\ndsn := \"root:[redacted]@tcp(127.0.0.1:3306)/app\"\n  psk=\"[redacted]\""],
      // Typed into a field the code names, as browser automation writes it; stored by keyring.
      [`await page.fill('input[name="password"]', 'Code-Pw-38'); await page.getByLabel('API key').fill("Code-Pw-39");\ndriver.find_element(By.ID, "password").send_keys("Code-Pw-40")\nkeyring.set_password("svc", "bob", "Code-Pw-41")`, `await page.fill('input[name="password"]', '[redacted]'); await page.getByLabel('API key').fill("[redacted]");\ndriver.find_element(By.ID, "password").send_keys("[redacted]")\nkeyring.set_password("svc", "bob", "[redacted]")`],
      ['variable "db_password" {\n  type      = string\n  default   = "Code-Pw-37"\n  sensitive = true\n}\nvariable "region" { default = "eu-west-1" }', 'variable "db_password" {\n  type      = string\n  default   = "[redacted]"\n  sensitive = true\n}\nvariable "region" { default = "eu-west-1" }'],
    ], ['Code-Pw', 'Code Pw', 'Summer(2024)', 'hunter(42)']);
  });

  it('in a YAML block scalar of a secret-like name are [redacted] line by line, its header, indents and line breaks kept', async () => {
    await expectRecordedAs([
      ['db:\n  password: |\n    Block-Pw-01 line one\n\n    Block-Pw-02\n  host: db', 'db:\n  password: |\n    [redacted]\n\n    [redacted]\n  host: db'],
      ['- api_token: >- # folded\r\n  Block Pw 03\r\n  Block Pw 04\r\n- name: x', '- api_token: >- # folded\r\n  [redacted]\r\n  [redacted]\r\n- name: x'],
    ], ['Block-Pw', 'Block Pw']);
  });

  it('named on the line above or below their value (an env list as Kubernetes and CI files write it, a property list, Hadoop XML) are [redacted]', async () => {
    await expectRecordedAs([
      ['env:\n  - name: DB_PASSWORD\n    value: Pair-Pw-01\n  - name: HOME\n    value: /root', 'env:\n  - name: DB_PASSWORD\n    value: [redacted]\n  - name: HOME\n    value: /root'],
      ["- name: API_TOKEN\n  value: \"Pair Pw 02\"\n- Key: client_secret\n  Value: 'Pair Pw''03'", "- name: API_TOKEN\n  value: \"[redacted]\"\n- Key: client_secret\n  Value: '[redacted]'"],
      ['- value: Pair-Pw-04 two\n  name: DB_PASSWORD', '- value: [redacted]\n  name: DB_PASSWORD'],
      ['- name: DB_PASSWORD\n  value: |\n    Pair-Pw-05\n- name: HOME', '- name: DB_PASSWORD\n  value: |\n    [redacted]\n- name: HOME'],
      [JSON.stringify([{ name: 'DB_PASSWORD', value: 'Pair-Pw-06' }], null, 2), JSON.stringify([{ name: 'DB_PASSWORD', value: '[redacted]' }], null, 2)],
      [
        '<dict>\n\t<key>password</key>\n\t<string>Pair-Pw-07</string>\n\t<key>user</key>\n\t<string>bob</string>\n</dict>',
        '<dict>\n\t<key>password</key>\n\t<string>[redacted]</string>\n\t<key>user</key>\n\t<string>bob</string>\n</dict>',
      ],
      ['<property>\n  <name>fs.s3a.secret.key</name>\n  <value>Pair-Pw-08</value>\n</property>', '<property>\n  <name>fs.s3a.secret.key</name>\n  <value>[redacted]</value>\n</property>'],
      // redis-cli's numbered reply items: a name, then its value.
      ['1) "dbfilename"\n2) "dump.rdb"\n3) "requirepass"\n4) "Pair-Pw-09"\n', '1) "dbfilename"\n2) "dump.rdb"\n3) "requirepass"\n4) "[redacted]"\n'],
    ], ['Pair-Pw', 'Pair Pw']);
  });

  it("that are a password's hash (/etc/shadow, .htpasswd, a users table, LDAP, Django) are [redacted]; a shell's $1$2 is kept", async () => {
    const yescrypt = '$y$j9T$F5Jx5fExrKuPp53xLKQ..1$X3DX6M94c7o.9agCG9G317fhZg9SqC.5i5rd.RhAtQ7';
    const sha512 = '$6$rounds=5000$usesomesillystri$D4IrlXatmP7rx3P3InaxBeoomnAihCKRVQP22JZ6EY47Wc6BkroIuUUBOov1i.S5KPgErtP/EN5mcO.ChWQW21';
    const apr1 = '$apr1$8sH2k1xQ$Zq8vLm3Xw9Kp2Rt7abcdeF';
    const bcrypt = '$2y$10$abcdefghijklmnopqrstuu5Q3u6VfF4Wq8GmJ3Ew0DqN3a7WoNwfq';
    const argon2 = '$argon2id$v=19$m=65536,t=3,p=4$c29tZXNhbHQ$RdescudvJCsgt3ub+b+dWRWJTmaaJObG';
    const django = 'pbkdf2_sha256$260000$abcdefghijklmnop$dGhpcyBpcyBhIGhhc2ggb2YgYSBwYXNzd29yZA==';
    const ssha = '{SSHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g5NDVh';
    await expectRecordedAs([
      [`root:${yescrypt}:19000:0:99999:7:::\nalice:${sha512}:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n`, 'root:[redacted]:19000:0:99999:7:::\nalice:[redacted]:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n'],
      [`admin:${apr1}\n`, 'admin:[redacted]\n'],
      [`id,email,password_hash\n1,a@x.com,${bcrypt}\n`, 'id,email,password_hash\n1,a@x.com,[redacted]\n'],
      [`hash=${argon2} django=${django}`, 'hash=[redacted] django=[redacted]'],
      [`userPassword: ${ssha}`, 'userPassword: [redacted]'],
      // LDIF gives a value holding other than plain text as base64, after two colons.
      [`dn: uid=alice,dc=x\nuserPassword:: ${Buffer.from(ssha).toString('base64')}\nmail: a@x.com`, 'dn: uid=alice,dc=x\nuserPassword:: [redacted]\nmail: a@x.com'],
      // Werkzeug's (Flask's) hashes, and Django's wrapping another scheme's.
      ['pbkdf2:sha256:600000$abcdEFGH$0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef', '[redacted]'],
      ['scrypt:32768:8:1$abcdEFGHijkl$0123456789abcdef0123456789abcdef0123456789abcdef', '[redacted]'],
      [`bcrypt_sha256$${bcrypt}`, 'bcrypt_sha256$[redacted]'],
      ['echo "$1$2$3$4$5$6$7$8$9$10$11$12"; awk \'{print $1$2}\' f; it costs $5$ or $6$', 'echo "$1$2$3$4$5$6$7$8$9$10$11$12"; awk \'{print $1$2}\' f; it costs $5$ or $6$'],
    ], [yescrypt.slice(8), sha512.slice(20), apr1.slice(6), bcrypt.slice(7), argon2.slice(30), django.slice(15), ssha.slice(6)]);
  });

  it('named in a field beside their value on one line (AWS parameters, JSON text), or given as a field of their own below the name (GitLab CI), are [redacted]', async () => {
    await expectRecordedAs([
      ['aws ssm put-parameter --cli-input Name=DB_PASSWORD,Value=Line-Pw-01 --overwrite', 'aws ssm put-parameter --cli-input Name=DB_PASSWORD,Value=[redacted] --overwrite'],
      ['--parameter-overrides ParameterKey=DbPassword,ParameterValue=Line-Pw-02 ParameterKey=Env,ParameterValue=prod', '--parameter-overrides ParameterKey=DbPassword,ParameterValue=[redacted] ParameterKey=Env,ParameterValue=prod'],
      ['[{"ParameterKey": "DbPassword", "ParameterValue": "Line Pw 03"}, {"key":"HOME","value":"/root"}]', '[{"ParameterKey": "DbPassword", "ParameterValue": "[redacted]"}, {"key":"HOME","value":"/root"}]'],
      ['{"value": "Line-Pw-04", "key": "API_TOKEN"} and Value=Line-Pw-05,Name=client_secret', '{"value": "[redacted]", "key": "API_TOKEN"} and Value=[redacted],Name=client_secret'],
      ['{\\"key\\":\\"DB_PASSWORD\\",\\"value\\":\\"Line-Pw-06\\"}', '{\\"key\\":\\"DB_PASSWORD\\",\\"value\\":\\"[redacted]\\"}'],
      ['{"DB_PASSWORD": {"value": "Line-Pw-07", "masked": true}, "api_token": {value: Line-Pw-08}}', '{"DB_PASSWORD": {"value": "[redacted]", "masked": true}, "api_token": {value: [redacted]}}'],
      [
        'variables:\n  API_TOKEN:\n    description: the deploy token\n    value: "Line-Pw-09"\n  HOME:\n    value: /root',
        'variables:\n  API_TOKEN:\n    description: the deploy token\n    value: "[redacted]"\n  HOME:\n    value: /root',
      ],
      ['variables:\n  DB_PASSWORD:\n    description: db\n\n    value: |\n      Line-Pw-10\n  HOME: /root', 'variables:\n  DB_PASSWORD:\n    description: db\n\n    value: |\n      [redacted]\n  HOME: /root'],
      ['[{"name":"DB_PASSWORD","slotSetting":false,"value":"Line-Pw-11"}]', '[{"name":"DB_PASSWORD","slotSetting":false,"value":"[redacted]"}]'],
      ['{"Parameter": {"Name": "/prod/db/password", "Type": "SecureString", "Value": "Line-Pw-12"}}', '{"Parameter": {"Name": "/prod/db/password", "Type": "SecureString", "Value": "[redacted]"}}'],
      ['{"value":"Line-Pw-13","type":"string","name":"db_password"}', '{"value":"[redacted]","type":"string","name":"db_password"}'],
      ['DB_PASSWORD: { description: "db", value: "Line-Pw-14" }', 'DB_PASSWORD: { description: "db", value: "[redacted]" }'],
      // Pretty-printed, as `aws ssm get-parameter` prints it.
      [
        JSON.stringify({ Parameter: { Name: '/prod/db/password', Type: 'SecureString', Value: 'Line-Pw-15' } }, null, 2),
        JSON.stringify({ Parameter: { Name: '/prod/db/password', Type: 'SecureString', Value: '[redacted]' } }, null, 2),
      ],
      [JSON.stringify({ DB_PASSWORD: { value: 'Line-Pw-16', masked: true } }, null, 2), JSON.stringify({ DB_PASSWORD: { value: '[redacted]', masked: true } }, null, 2)],
      ['DB_PASSWORD: {description: Database password, value: Line-Pw-17}', 'DB_PASSWORD: {description: Database password, value: [redacted]}'],
      ['- name: DB_PASSWORD\n  # rotated monthly\n\n  value: Line-Pw-18', '- name: DB_PASSWORD\n  # rotated monthly\n\n  value: [redacted]'],
      // An object or a list among the fields between the name and its value, on one line or pretty-printed.
      ['{"name": "DB_PASSWORD", "meta": {"rotated": true}, "tags": ["db"], "value": "Line-Pw-19"}', '{"name": "DB_PASSWORD", "meta": {"rotated": true}, "tags": ["db"], "value": "[redacted]"}'],
      [
        JSON.stringify({ name: 'DB_PASSWORD', meta: { rotated: true }, value: 'Line-Pw-20' }, null, 2),
        JSON.stringify({ name: 'DB_PASSWORD', meta: { rotated: true }, value: '[redacted]' }, null, 2),
      ],
    ], ['Line-Pw', 'Line Pw']);
  });

  it('given to commands as arguments no name marks (mysql -p, registry logins, sshpass, mongosh, redis-cli, LDAP, smbclient, gh secret set, OpenSSL and keytool, --password-stdin, config set, Oracle logons) are [redacted], the command kept', async () => {
    await expectRecordedAs([
      ['mysql -h db -uroot -pArg-Pw-01 app', 'mysql -h db -uroot -p[redacted] app'],
      ["mysqldump -u root -p'Arg Pw 02' --all-databases > all.sql", "mysqldump -u root -p'[redacted]' --all-databases > all.sql"],
      ['docker login -u bob -p Arg-Pw-03 registry.example.com && podman login -p Arg-Pw-04 -u ann quay.io', 'docker login -u bob -p [redacted] registry.example.com && podman login -p [redacted] -u ann quay.io'],
      ['sshpass -p Arg-Pw-05 ssh deploy@host', 'sshpass -p [redacted] ssh deploy@host'],
      ['sqlplus -s scott/Arg-Pw-06@//db:1521/ORCL @run.sql; expdp system/"Arg Pw 07"@orcl', 'sqlplus -s scott/[redacted]@//db:1521/ORCL @run.sql; expdp system/"[redacted]"@orcl'],
      ['CONNECT scott/Arg-Pw-08@orcl\nconn sys/Arg-Pw-09 as sysdba', 'CONNECT scott/[redacted]@orcl\nconn sys/[redacted] as sysdba'],
      ['az login --service-principal -u app -p Arg-Pw-10 --tenant t; mongosh -u bob -p Arg-Pw-11 db', 'az login --service-principal -u app -p [redacted] --tenant t; mongosh -u bob -p [redacted] db'],
      ['redis-cli -h cache -a Arg-Pw-12 ping && ldapsearch -x -D cn=admin -w Arg-Pw-13 -b dc=x', 'redis-cli -h cache -a [redacted] ping && ldapsearch -x -D cn=admin -w [redacted] -b dc=x'],
      ['smbclient //srv/share -U bob%Arg-Pw-14 -c ls', 'smbclient //srv/share -U bob%[redacted] -c ls'],
      ['gh secret set API_TOKEN --body Arg-Pw-15 --repo acme/x', 'gh secret set API_TOKEN --body [redacted] --repo acme/x'],
      ['openssl pkcs12 -export -passout pass:Arg-Pw-16 -out a.p12; keytool -genkey -storepass Arg-Pw-17 -keypass Arg-Pw-18', 'openssl pkcs12 -export -passout pass:[redacted] -out a.p12; keytool -genkey -storepass [redacted] -keypass [redacted]'],
      ["echo 'Arg Pw 19' | docker login -u bob --password-stdin registry", "echo '[redacted]' | docker login -u bob --password-stdin registry"],
      ['aws configure set aws_secret_access_key Arg-Pw-20 --profile ci; yarn config set npmAuthToken Arg-Pw-21', 'aws configure set aws_secret_access_key [redacted] --profile ci; yarn config set npmAuthToken [redacted]'],
      // A one-line assignment's value is its first word whole, a `;` or `|` in it too.
      ['DB_PASSWORD=Arg-Pw-22;Val-23 && export API_TOKEN=Arg-Pw-24|Val-25', 'DB_PASSWORD=[redacted] && export API_TOKEN=[redacted]'],
      ['smbclient //srv/share -U "alice%Arg-Pw-26" && smbclient //s/x -U \'CORP\\bob%Arg-Pw-27\'', 'smbclient //srv/share -U "alice%[redacted]" && smbclient //s/x -U \'CORP\\bob%[redacted]\''],
      ['openssl pkcs12 -export -passout "pass:Arg-Pw-28" -out a.p12; openssl enc -aes-256-cbc -k Arg-Pw-29 -in a', 'openssl pkcs12 -export -passout "pass:[redacted]" -out a.p12; openssl enc -aes-256-cbc -k [redacted] -in a'],
      ['sqlplus -s "sys/Arg-Pw-30 as sysdba"; sqlplus \'sys/Arg-Pw-31@orcl as sysdba\'', 'sqlplus -s "sys/[redacted] as sysdba"; sqlplus \'sys/[redacted]@orcl as sysdba\''],
      ['rman target sys/Arg-Pw-32@prod catalog rman/Arg-Pw-33@rcat; sqlldr control=load.ctl userid=scott/Arg-Pw-34@orcl', 'rman target sys/[redacted]@prod catalog rman/[redacted]@rcat; sqlldr control=load.ctl userid=scott/[redacted]@orcl'],
      ['SQL> conn scott/Arg-Pw-35@orcl', 'SQL> conn scott/[redacted]@orcl'],
      ["printf '%s' 'Arg-Pw-36' | docker login -u bob --password-stdin r; docker login -u bob --password-stdin r <<< 'Arg-Pw-37'", "printf '%s' '[redacted]' | docker login -u bob --password-stdin r; docker login -u bob --password-stdin r <<< '[redacted]'"],
      ['echo -n "Arg-Pw-38" | gh secret set DB_PASSWORD; gh secret set API_TOKEN -bArg-Pw-39', 'echo -n "[redacted]" | gh secret set DB_PASSWORD; gh secret set API_TOKEN -b[redacted]'],
      ['aws configure --profile prod set aws_secret_access_key Arg-Pw-40', 'aws configure --profile prod set aws_secret_access_key [redacted]'],
      ['keytool -storepasswd -storepass Arg-Pw-41 -new Arg-Pw-42; ldappasswd -x -D cn=admin -w Arg-Pw-43 -a Arg-Pw-44 -s Arg-Pw-45 uid=bob', 'keytool -storepasswd -storepass [redacted] -new [redacted]; ldappasswd -x -D cn=admin -w [redacted] -a [redacted] -s [redacted] uid=bob'],
      ['aws ssm put-parameter --name DB_PASSWORD --type SecureString --value Arg-Pw-46; redis-cli -h cache AUTH default Arg-Pw-47', 'aws ssm put-parameter --name DB_PASSWORD --type SecureString --value [redacted]; redis-cli -h cache AUTH default [redacted]'],
      ['docker exec db mysql -uroot -pArg-Pw-48 app', 'docker exec db mysql -uroot -p[redacted] app'],
      ['aws ssm put-parameter --value Arg-Pw-49 --type SecureString --name DB_PASSWORD; redis-cli --pass Arg-Pw-50 ping', 'aws ssm put-parameter --value [redacted] --type SecureString --name DB_PASSWORD; redis-cli --pass [redacted] ping'],
      ['MYSQL_PWD=Arg-Pw-51 mysql -u root', 'MYSQL_PWD=[redacted] mysql -u root'],
      ['FROM node:22\nENV DB_PASSWORD Arg-Pw-52\nENV API_TOKEN "Arg Pw 53"\nENV HOME /root', 'FROM node:22\nENV DB_PASSWORD [redacted]\nENV API_TOKEN "[redacted]"\nENV HOME /root'],
      ['machine api.example.com login me password Arg-Pw-54\nmachine git.example.com\n  login bob\n  password Arg-Pw-55', 'machine api.example.com login me password [redacted]\nmachine git.example.com\n  login bob\n  password [redacted]'],
    ], ['Arg-Pw', 'Arg Pw', 'Val-2']);
  });

  it('in a secret-like XML element are [redacted], its tags kept', async () => {
    await expectRecordedAs([
      [
        '<cfg><password>Xml-Pw-01</password><apiKey>Xml-Pw-02</apiKey><client_secret>Xml-Pw-03</client_secret><user>bob</user></cfg>',
        '<cfg><password>[redacted]</password><apiKey>[redacted]</apiKey><client_secret>[redacted]</client_secret><user>bob</user></cfg>',
      ],
      ['<ns:Password enc="no"><![CDATA[Xml]]Pw-04 & "q"]]></ns:Password><key>name</key>', '<ns:Password enc="no">[redacted]</ns:Password><key>name</key>'],
      // An attribute names the secret the element's text holds.
      [
        '<properties><entry key="db.password">Xml-Pw-05</entry><entry type="s" key=\'api.token\'><![CDATA[Xml-Pw-06]]></entry><entry key="db.user">bob</entry></properties>',
        '<properties><entry key="db.password">[redacted]</entry><entry type="s" key=\'api.token\'>[redacted]</entry><entry key="db.user">bob</entry></properties>',
      ],
      ['<Parameter Name="DbPassword">Xml-Pw-07</Parameter><sys:String x:Key="ApiKey">Xml-Pw-08</sys:String>', '<Parameter Name="DbPassword">[redacted]</Parameter><sys:String x:Key="ApiKey">[redacted]</sys:String>'],
      ['<setting name="ApiKey" serializeAs="String"><value>Xml-Pw-09</value></setting><setting name="Password"><value type="string">Xml-Pw-10</value></setting>', '<setting name="ApiKey" serializeAs="String"><value>[redacted]</value></setting><setting name="Password"><value type="string">[redacted]</value></setting>'],
    ], ['Xml-Pw', 'Xml]]Pw']);
  });

  it('in JSON text held in a JSON string, at any depth of escaping, are [redacted], the fields around them kept', async () => {
    // A value with a quote and a backslash in it, in JSON text held in a string, then in another.
    const once = JSON.stringify(JSON.stringify({ password: 'Esc-Pw-02 "quoted" \\', user: 'bob' }));
    const twice = JSON.stringify(once);
    const redacted = JSON.stringify(JSON.stringify({ password: '[redacted]', user: 'bob' }));
    await expectRecordedAs([
      ['{\\"password\\":\\"Esc-Pw-01\\"}', '{\\"password\\":\\"[redacted]\\"}'],
      [once, redacted],
      [twice, JSON.stringify(redacted)],
      ['cut: {\\"api_key\\":\\"Esc-Pw-03', 'cut: {\\"api_key\\":\\"[redacted]'],
      // A model's tool call, its arguments JSON text: what a browser tool types into a described field.
      [JSON.stringify({ name: 'browser_type', arguments: JSON.stringify({ element: 'Password textbox', ref: 'e3', text: 'Esc-Pw-04' }) }), JSON.stringify({ name: 'browser_type', arguments: JSON.stringify({ element: 'Password textbox', ref: 'e3', text: '[redacted]' }) })],
      [JSON.stringify({ selector: '#password', value: 'Esc-Pw-05' }), JSON.stringify({ selector: '#password', value: '[redacted]' })],
    ], ['Esc-Pw']);
  });

  it('in a table under a column a secret names (psql, MySQL, Markdown, CSV, TSV, psql expanded records) are [redacted], the table kept', async () => {
    await expectRecordedAs([
      [' id | username | password\n----+----------+------------------\n  1 | alice    | Tbl-Pw-01\n  2 | bob      | Tbl-Pw-02\n  3 | carol    | \n(3 rows)\n', ' id | username | password\n----+----------+------------------\n  1 | alice    | [redacted]\n  2 | bob      | [redacted]\n  3 | carol    | \n(3 rows)\n'],
      ['+----+-------+-----------+---------+\n| id | user  | api_token | note    |\n+----+-------+-----------+---------+\n|  1 | alice | Tbl-Pw-03 | kept a  |\n|  2 | bob   | NULL      | kept b  |\n+----+-------+-----------+---------+', '+----+-------+-----------+---------+\n| id | user  | api_token | note    |\n+----+-------+-----------+---------+\n|  1 | alice | [redacted] | kept a  |\n|  2 | bob   | NULL      | kept b  |\n+----+-------+-----------+---------+'],
      ['| Name | Secret Key |\n|------|:----------:|\n| prod | Tbl-Pw-04 |\n\nAfter | the table', '| Name | Secret Key |\n|------|:----------:|\n| prod | [redacted] |\n\nAfter | the table'],
      ['user,email,password,role\nalice,a@x.com,Tbl-Pw-05,admin\nbob,"b, c",  "Tbl-Pw-06 ""q""",user\n', 'user,email,password,role\nalice,a@x.com,[redacted],admin\nbob,"b, c",  "[redacted]",user\n'],
      ['name\tDB_PASSWORD\nweb\tTbl-Pw-07\r\n', 'name\tDB_PASSWORD\nweb\t[redacted]\r\n'],
      ['-[ RECORD 1 ]-----------\nid       | 1\npassword | Tbl-Pw-08\n-[ RECORD 2 ]-----------\nid       | 2\npassword | Tbl-Pw-09\n', '-[ RECORD 1 ]-----------\nid       | 1\npassword | [redacted]\n-[ RECORD 2 ]-----------\nid       | 2\npassword | [redacted]\n'],
      // A NULL in the first or last column (psql prints nothing there), a table of names and values, a table over CRLF lines.
      [' id |  email  | api_token \n----+---------+-----------\n  1 | a@x.com | \n    | b@x.com | Tbl-Pw-10\n', ' id |  email  | api_token \n----+---------+-----------\n  1 | a@x.com | \n    | b@x.com | [redacted]\n'],
      ['   option_name   |  option_value\n-----------------+---------------\n mailserver_pass | Tbl-Pw-11\n siteurl         | https://x.com\n', '   option_name   |  option_value\n-----------------+---------------\n mailserver_pass | [redacted]\n siteurl         | https://x.com\n'],
      ['+----+-----------+\r\n| id | password  |\r\n+----+-----------+\r\n|  1 | Tbl-Pw-12 |\r\n+----+-----------+\r\n', '+----+-----------+\r\n| id | password  |\r\n+----+-----------+\r\n|  1 | [redacted] |\r\n+----+-----------+\r\n'],
      // Tables with no secret's column, docs' tables, rows of another table, pipelines, prose with commas and bars: as they were.
      [' id | tokens_used\n----+------------\n  1 | 120\n', ' id | tokens_used\n----+------------\n  1 | 120\n'],
      ['| Pin | Function |\n|-----|----------|\n| 1   | 3.3V     |\n| 2   | GPIO2 SDA |', '| Pin | Function |\n|-----|----------|\n| 1   | 3.3V     |\n| 2   | GPIO2 SDA |'],
      ['| Secret | Required |\n|---|---|\n| `AWS_ACCESS_KEY_ID` | Yes |', '| Secret | Required |\n|---|---|\n| `AWS_ACCESS_KEY_ID` | Yes |'],
      ['| password | string | Database password |\n| port | number | Database port |', '| password | string | Database password |\n| port | number | Database port |'],
      ['kubectl get secrets | grep token\nkubectl get pods | grep web\nps aux | grep node', 'kubectl get secrets | grep token\nkubectl get pods | grep web\nps aux | grep node'],
      ['fields:\npassword,string,true\nemail,string,false', 'fields:\npassword,string,true\nemail,string,false'],
      ['The key, as I said, is in the vault.\nAlice, Bob and Carol have it.', 'The key, as I said, is in the vault.\nAlice, Bob and Carol have it.'],
    ], ['Tbl-Pw']);
  });

  it('in a box-drawn or fixed-width table under a column a secret names (DuckDB, sqlite3 -box and -column, rich, tabulate, sqlcmd, PowerShell) are [redacted], the table kept', async () => {
    const duckdb = '┌───────┬──────────┬────────────┐\n│  id   │ username │  password  │\n│ int32 │ varchar  │  varchar   │\n├───────┼──────────┼────────────┤\n│     1 │ alice    │ Box-Pw-01  │\n│     2 │ bob      │ NULL       │\n└───────┴──────────┴────────────┘';
    const rich = '┏━━━━┳━━━━━━━━━━━┓\n┃ id ┃ api_token ┃\n┡━━━━╇━━━━━━━━━━━┩\n│ 1  │ Box-Pw-02 │\n└────┴───────────┘';
    const tabulate = '╒══════╤═══════════╕\n│ user │ secret    │\n╞══════╪═══════════╡\n│ a    │ Box-Pw-03 │\n├──────┼───────────┤\n│ b    │ Box-Pw-04 │\n╘══════╧═══════════╛';
    const sqlite = 'id  username  password\n--  --------  ---------\n1   alice     Box-Pw-05\n2   bob       Box-Pw-06\n';
    const sqlcmd = 'id          api_key\n----------- ----------\n          1 Box-Pw-07\n\n(1 rows affected)\n';
    const powershell = 'Name                           Value\n----                           -----\nDB_PASSWORD                    Box-Pw-08\nPATH                           C:\\Windows\n';
    // A file tree, a table with no secret's column, columns whose gaps a line crosses: as they were.
    const tree = 'src\n├── password.ts\n│   └── token.ts\n└── index.ts';
    const plain = '┌────┬────────┐\n│ id │ tokens │\n├────┼────────┤\n│ 1  │ 120    │\n└────┴────────┘';
    const prose = 'name  password\n----  --------\nThe next line of prose is not a row of it';
    await expectRecordedAs([
      [duckdb, duckdb.replace('Box-Pw-01', '[redacted]')],
      [rich, rich.replace('Box-Pw-02', '[redacted]')],
      [tabulate, tabulate.replace('Box-Pw-03', '[redacted]').replace('Box-Pw-04', '[redacted]')],
      [sqlite, sqlite.replace('Box-Pw-05', '[redacted]').replace('Box-Pw-06', '[redacted]')],
      [sqlcmd, sqlcmd.replace('Box-Pw-07', '[redacted]')],
      [powershell, powershell.replace('Box-Pw-08', '[redacted]')],
      [tree, tree],
      [plain, plain],
      [prose, prose],
    ], ['Box-Pw']);
  });

  it('in tables as tools really print them (columns left out or unnamed, tables back to back, Polars, a bar in a cell, grid rules, numbered lines) are [redacted]; help text, flags and versions are kept', async () => {
    const elided = '┌───────┬───┬────────────┐\n│  id   │ … │  password  │\n│ int32 │   │  varchar   │\n├───────┼───┼────────────┤\n│     1 │ … │ Real-Pw-01 │\n└───────┴───┴────────────┘';
    const pandas = '|    |   id | password   |\n|---:|-----:|:-----------|\n|  0 |    1 | Real-Pw-02 |';
    const unnamed = '      id  password\n--  ----  ----------\n 0     1  Real-Pw-03\n';
    const counted = '| count(*) | api_key    |\n|----------|------------|\n| 3        | Real-Pw-04 |';
    const backToBack = '┌──────┬───────┐\n│ key  │ value │\n├──────┼───────┤\n│ mode │ prod  │\n└──────┴───────┘\n┌──────────┬────────────┐\n│ username │ password   │\n├──────────┼────────────┤\n│ alice    │ Real-Pw-05 │\n└──────────┴────────────┘';
    const markdownPair = '| key | value |\n|-----|-------|\n| mode | prod |\n| username | password |\n|---|---|\n| alice | Real-Pw-06 |';
    const polars = 'shape: (1, 2)\n┌─────┬────────────┐\n│ id  ┆ password   │\n│ --- ┆ ---        │\n│ i64 ┆ str        │\n╞═════╪════════════╡\n│ 1   ┆ Real-Pw-07 │\n└─────┴────────────┘';
    const spaced = '┌────┬─────────────────────┬──────┐\n│ id │ card_number         │ cvv  │\n├────┼─────────────────────┼──────┤\n│ 1  │ 4111 1111 1111 1111 │ 737  │\n└────┴─────────────────────┴──────┘';
    const barInCell = '┌────┬────────────┬───────┐\n│ id │ password   │ roles │\n├────┼────────────┼───────┤\n│ 1  │ Real-Pw-08 │ a|b   │\n│ 2  │ Real-Pw-09 │ admin │\n└────┴────────────┴───────┘';
    const grid = '+------+-------------+\n|   id | password    |\n+======+=============+\n|    1 | Real-Pw-10  |\n+------+-------------+';
    const expanded = '─[ RECORD 1 ]──────\nid       │ 1\npassword │ Real-Pw-11\n';
    const numbered = '     1\t| id | password   |\n     2\t|----|------------|\n     3\t| 1  | Real-Pw-12 |';
    const read = '     7→user,password\n     8→alice,Real-Pw-13';
    // A fixed-width table's cell of words (a help text's, a note) is not a secret.
    const help = 'user   password      note\n-----  ------------  ----\nalice  (not set)     new\n';
    const flags = 'name                 setting\n-------------------  -------\nrequire_auth         true\n';
    const footer = 'id password\n-- ---------\n 1 NULL\n(1 row)\n';
    const pip = 'Package        Version\n-------------- -------\ngoogle-auth    2.23.0\ntiktoken       0.5.1\n';
    await expectRecordedAs([
      [elided, elided.replace('Real-Pw-01', '[redacted]')],
      [pandas, pandas.replace('Real-Pw-02', '[redacted]')],
      [unnamed, unnamed.replace('Real-Pw-03', '[redacted]')],
      [counted, counted.replace('Real-Pw-04', '[redacted]')],
      [backToBack, backToBack.replace('Real-Pw-05', '[redacted]')],
      [markdownPair, markdownPair.replace('Real-Pw-06', '[redacted]')],
      [polars, polars.replace('Real-Pw-07', '[redacted]').replace('┆ str', '┆ [redacted]')],
      [spaced, spaced.replace('4111 1111 1111 1111', '[redacted]').replace('737', '[redacted]')],
      [barInCell, barInCell.replace('Real-Pw-08', '[redacted]').replace('Real-Pw-09', '[redacted]')],
      [grid, grid.replace('Real-Pw-10', '[redacted]')],
      [expanded, expanded.replace('Real-Pw-11', '[redacted]')],
      [numbered, numbered.replace('Real-Pw-12', '[redacted]')],
      [read, read.replace('Real-Pw-13', '[redacted]')],
      [help, help],
      [flags, flags],
      [footer, footer],
      [pip, pip],
    ], ['Real-Pw', '4111 1111']);
  });

  it("in tables whose header is no line of its own or whose rows are out of line (ClickHouse's border, rich's bar-less styles, sqlcmd -W, psql -A, a CSV of semicolons) are [redacted]", async () => {
    const clickhouse = '┌─id─┬─name──┬─password───┐\n│  1 │ alice │ Real-Pw-21 │\n│  2 │ bob   │ Real-Pw-22 │\n└────┴───────┴────────────┘';
    const rich = '                 Users\n  id   name    password\n ━━━━━━━━━━━━━━━━━━━━━━━━━━━━\n  1    alice   Real-Pw-23\n  2    bob     Real-Pw-24\n';
    const trimmed = 'id name password\n-- ---- --------\n1 alice Real-Pw-25\n2 bob Real-Pw-26\n\n(2 rows affected)';
    const unaligned = 'id|name|password\n1|alice|Real-Pw-27\n(1 row)';
    // The server's messages psql prints before its rows, as a tool that reads both streams gets them.
    const notice = 'NOTICE:  relation "users" already exists, skipping\nid|name|password\n1|alice|Real-Pw-31\n2|bob|Real Pw 32\n(2 rows)';
    const warning = 'psql:seed.sql:3: WARNING:  there is no transaction in progress\nid|api_token\n1|Real-Pw-33\n(1 row)';
    // Prose over bars is no server's message: not read as a header.
    const prose = 'Note: the columns are\nuser|password\nalice|bob';
    const semicolons = 'id;name;password\n1;alice;"Real-Pw-28"\n2;bob;Real-Pw-29';
    // A heading over a line of dashes names no column: its text is kept.
    const heading = 'Password rules\n--------------\nUse at least twelve characters.';
    // A row of a trimmed table that is not one word a column ends it: the note after it is kept.
    const note = 'name password\n---- --------\nalice Real-Pw-30\nrotated on Monday by ops\n';
    await expectRecordedAs([
      [clickhouse, clickhouse.replace('Real-Pw-21', '[redacted]').replace('Real-Pw-22', '[redacted]')],
      [rich, rich.replace('Real-Pw-23', '[redacted]').replace('Real-Pw-24', '[redacted]')],
      [trimmed, trimmed.replace('Real-Pw-25', '[redacted]').replace('Real-Pw-26', '[redacted]')],
      [unaligned, unaligned.replace('Real-Pw-27', '[redacted]')],
      [notice, notice.replace('Real-Pw-31', '[redacted]').replace('Real Pw 32', '[redacted]')],
      [warning, warning.replace('Real-Pw-33', '[redacted]')],
      [prose, prose],
      [semicolons, semicolons.replace('Real-Pw-28', '[redacted]').replace('Real-Pw-29', '[redacted]')],
      [heading, heading],
      [note, note.replace('Real-Pw-30', '[redacted]')],
    ], ['Real-Pw', 'Real Pw']);
  });

  it('of words, under a column a secret names in a fixed-width or bar-less table (rich, sqlite3 -column, sqlcmd, sqlcmd -W), are [redacted] whole; a placeholder is kept', async () => {
    // As rich prints them: a title over a blank line, a cell of words last, one centred under its name, one wrapped over lines.
    const rich = '                Users                 \n                                      \n  id   name    password               \n ────────────────────────────────────── \n  1    alice   Sp-Pw-41 two Sp-Pw-42  \n  2    bob     Sp-Pw-43               \n                                      \n';
    const centred = '                             \n  id     password     name   \n ─────────────────────────── \n   1   Sp-Pw-44 two   alice  \n  22     Sp-Pw-45     bob    \n                             \n';
    const wrapped = '                              \n  id   name    password       \n ──────────────────────────── \n  1    alice   Sp-Pw-46 and   \n               a Sp-Pw-47     \n               tail           \n                              \n';
    const sqlite = 'id  username  password\n--  --------  -----------------\n1   alice     Sp-Pw-48 Sp-Pw-49\n2   bob       (not set)\n';
    const sqlcmd = 'id          password\n----------- -----------------\n          1 Sp-Pw-50 Sp-Pw-51\n\n(1 rows affected)\n';
    // sqlcmd -W trims its cells: which words are the secret's is not known, so every word it may hold goes, a name's too.
    const trimmed = 'id name password\n-- ---- --------\n1 alice Sp-Pw-52 two\n2 bob Sp-Pw-53\n\n(2 rows affected)';
    const middle = 'id name password role\n-- ---- -------- ----\n1 Ann Lee Sp-Pw-54 admin\n2 bob Sp-Pw-55 user\n';
    const last = 'id password\n-- --------\n1 Sp-Pw-56 two\n\n(1 rows affected)\n';
    await expectRecordedAs([
      [rich, rich.replace('Sp-Pw-41 two Sp-Pw-42', '[redacted]').replace('Sp-Pw-43', '[redacted]')],
      [centred, centred.replace('Sp-Pw-44 two', '[redacted]').replace('Sp-Pw-45', '[redacted]')],
      [wrapped, wrapped.replace('Sp-Pw-46 and', '[redacted]').replace('a Sp-Pw-47', '[redacted]').replace('tail', '[redacted]')],
      [sqlite, sqlite.replace('Sp-Pw-48 Sp-Pw-49', '[redacted]')],
      [sqlcmd, sqlcmd.replace('Sp-Pw-50 Sp-Pw-51', '[redacted]')],
      [trimmed, trimmed.replace('Sp-Pw-52 two', '[redacted]').replace('Sp-Pw-53', '[redacted]')],
      [middle, middle.replace('Lee Sp-Pw-54', '[redacted]').replace('Sp-Pw-55', '[redacted]')],
      [last, last.replace('Sp-Pw-56 two', '[redacted]')],
    ], ['Sp-Pw']);
  });

  it('in a .pgpass entry a command writes are [redacted], its host, port, database and user kept', async () => {
    const echo = 'echo "db.internal:5432:*:app:Real-Pw-31" >> ~/.pgpass && chmod 600 ~/.pgpass';
    const printf = "printf '%s\\n' '*:*:orders:svc:Real\\:Pw-32' > \"$HOME/.pgpass\"";
    // Without the file's name, colons are no entry: a time stays as it is; nor is a MAC address, with it.
    const clock = 'started at 10:30:45:12:00';
    const mac = 'no .pgpass on 00:11:22:33:44:55';
    // A password may hold spaces: in quotes it runs to the closing one, bare to a shell's operator, on a line of its own (the file as a tool writes it) to the line's end.
    const quoted = "echo 'db.internal:5432:*:app:Real Pw 33 | x' >> ~/.pgpass";
    const bare = 'echo db.internal:5432:*:app:Real Pw 34 >> ~/.pgpass';
    const file = '# ~/.pgpass\ndb.internal:5432:*:app:Real Pw & 35\n*:*:*:postgres:Real\\:Pw 36  \n';
    const markdown = 'Add `db.internal:5432:*:app:Real Pw 37` to your `~/.pgpass`.';
    await expectRecordedAs([
      [echo, echo.replace('Real-Pw-31', '[redacted]')],
      [printf, printf.replace('Real\\:Pw-32', '[redacted]')],
      [quoted, quoted.replace('Real Pw 33 | x', '[redacted]')],
      [bare, bare.replace('Real Pw 34', '[redacted]')],
      [file, file.replace('Real Pw & 35', '[redacted]').replace('Real\\:Pw 36', '[redacted]')],
      [markdown, markdown.replace('Real Pw 37', '[redacted]')],
      [clock, clock],
      [mac, mac],
    ], ['Real-Pw', 'Real\\:Pw', 'Real Pw', 'Pw 3']);
  });

  it("of a Kubernetes Secret, as YAML or JSON prints it, are [redacted] whatever their keys are called; a ConfigMap's are kept", async () => {
    const single = 'apiVersion: v1\ndata:\n  api-url: aHR0cHM6Ly9LOHMtUHctMDE=\n  db.conn: "K8s-Pw-02"\nkind: Secret\nmetadata:\n  name: app\n  namespace: prod\ntype: Opaque\n';
    const list = 'apiVersion: v1\nitems:\n- apiVersion: v1\n  data:\n    ca.crt: K8s-Pw-03\n  stringData:\n    config.yaml: |\n      url: K8s-Pw-04\n      mode: K8s-Pw-05\n  kind: Secret\n  metadata:\n    name: x\nkind: List\n';
    const json = JSON.stringify({ apiVersion: 'v1', data: { 'db-conn': 'K8s-Pw-06' }, kind: 'Secret', metadata: { name: 'app' } }, null, 2);
    const configMap = 'apiVersion: v1\ndata:\n  log-level: debug\nkind: ConfigMap\n';
    // A chart's manifest: a ConfigMap's data beside a Secret's is kept.
    const manifest = `${configMap}---\napiVersion: v1\nkind: Secret\nstringData:\n  db-url: K8s-Pw-07\n`;
    const raw = JSON.stringify({ kind: 'SecretList', items: [{ metadata: { name: 'a' }, data: { 'db-conn': 'K8s-Pw-08' }, type: 'Opaque' }, { metadata: { name: 'b' }, data: { 'tls.key': 'K8s-Pw-09' }, type: 'kubernetes.io/tls' }] });
    await expectRecordedAs([
      [single, 'apiVersion: v1\ndata:\n  api-url: [redacted]\n  db.conn: [redacted]\nkind: Secret\nmetadata:\n  name: app\n  namespace: prod\ntype: Opaque\n'],
      [list, 'apiVersion: v1\nitems:\n- apiVersion: v1\n  data:\n    ca.crt: [redacted]\n  stringData:\n    config.yaml: |\n      url: [redacted]\n      mode: [redacted]\n  kind: Secret\n  metadata:\n    name: x\nkind: List\n'],
      [json, json.replace('K8s-Pw-06', '[redacted]')],
      [configMap, configMap],
      [manifest, `${configMap}---\napiVersion: v1\nkind: Secret\nstringData:\n  db-url: [redacted]\n`],
      // The API server's list: its items carry no kind, their type names them.
      [raw, raw.replace('K8s-Pw-08', '[redacted]').replace('K8s-Pw-09', '[redacted]')],
    ], ['K8s-Pw', 'aHR0cHM6Ly9LOHMtUHctMDE=']);
  });

  it('in JSON text, by the rules for values (a cookie, a sensitive value, an argument after --requirepass), are [redacted], the text kept as written', async () => {
    const cookies = '[{"name": "sessionid", "value": "Obj-Pw-01", "domain": ".x.com", "httpOnly": true, "sameSite": "Lax"}]';
    const terraform = '{\n  "outputs": {\n    "db_conn": {\n      "sensitive": true,\n      "value": "Obj-Pw-02"\n    }\n  }\n}';
    const args = '{"command": ["redis-server", "--requirepass", "Obj-Pw-03"], "ok": 1}';
    // A value written with an escape is replaced whole, where it stands.
    const escaped = '{"name":"sid","value":"Obj-Pw-04\\u00e9","httpOnly":true}';
    const plain = '{ "tokens" :  12, "key_count": 3 }';
    // Only the value at the secret's place: the same word elsewhere, as a key or a list's item, is kept.
    const placed = '{"keywords": ["web", "dark"], "theme": "dark", "dark": 1, "cookies": [{"name": "sid", "value": "dark", "httpOnly": true}]}';
    // A number a secret-like key holds, beside a sensitive value: both, and the text stays JSON.
    const numbered = '{"db_url": {"sensitive": true, "value": "Obj-Pw-05"}, "admin_pw": 123456}';
    // A table a command printed, in its JSON answer.
    const printed = JSON.stringify({ stdout: ' id | password\n----+----------\n  1 | Obj-Pw-06\n(1 row)\n', exit_code: 0 });
    const deep = `${'['.repeat(2_000)}"token"${']'.repeat(2_000)}`;
    // Terraform's state: the attributes its sensitive_attributes names, whatever they are called.
    const state = JSON.stringify({ resources: [{ type: 'random_string', instances: [{ attributes: { result: 'Obj-Pw-09', length: 16 }, sensitive_attributes: [[{ type: 'get_attr', value: 'result' }]] }] }] }, null, 2);
    // `terraform show -json`: the values its sensitive_values marks.
    const shown = JSON.stringify({ values: { root_module: { resources: [{ type: 'random_password', values: { result: 'Obj-Pw-12', length: 16 }, sensitive_values: { result: true } }] } } }, null, 2);
    // JSON Lines: a value a line.
    const lines = '{"name":"sid","value":"Obj-Pw-07","httpOnly":true}\n{"name":"theme","value":"dark"}\n{"sensitive":true,"value":"Obj-Pw-08"}';
    // JSON Lines with a note after them, as a tool cuts its output.
    const cut = '{"name":"sid","value":"Obj-Pw-10","httpOnly":true}\n{"name":"sid2","value":"Obj-Pw-11","httpOnly":true}\n[output truncated]';
    await expectRecordedAs([
      [cookies, cookies.replace('Obj-Pw-01', '[redacted]')],
      [terraform, terraform.replace('Obj-Pw-02', '[redacted]')],
      [args, args.replace('Obj-Pw-03', '[redacted]')],
      [escaped, '{"name":"sid","value":"[redacted]","httpOnly":true}'],
      [plain, plain],
      [placed, placed.replace('"value": "dark"', '"value": "[redacted]"')],
      [numbered, '{"db_url": {"sensitive": true, "value": "[redacted]"}, "admin_pw": "[redacted]"}'],
      [printed, printed.replace('Obj-Pw-06', '[redacted]')],
      [deep, deep],
      [lines, lines.replace('Obj-Pw-07', '[redacted]').replace('Obj-Pw-08', '[redacted]')],
      [state, state.replace('Obj-Pw-09', '[redacted]')],
      [shown, shown.replace('Obj-Pw-12', '[redacted]')],
      [cut, cut.replace('Obj-Pw-10', '[redacted]').replace('Obj-Pw-11', '[redacted]')],
    ], ['Obj-Pw']);
  });

  it('in base64 of a text a tool read (a file, as GitHub gives one) are [redacted] in the text, encoded again with its lines; other base64 and hex are kept', async () => {
    const file = 'DB_HOST=db.internal\nDB_PASSWORD=B64-Pw-01\nAPI_KEY=B64-Pw-02-abcdefgh\nDEBUG=true\n';
    const wrapped = (text: string): string => `${(Buffer.from(text).toString('base64').match(/.{1,60}/g) ?? []).join('\n')}\n`;
    const redacted = 'DB_HOST=db.internal\nDB_PASSWORD=[redacted]\nAPI_KEY=[redacted]\nDEBUG=true\n';
    const binary = Buffer.from(Array.from({ length: 90 }, (_, i) => (i * 37 + 11) % 256)).toString('base64');
    const contents = JSON.stringify({ name: '.env', encoding: 'base64', content: wrapped(file) });
    // GitLab's files API: one line, no padding when the file's length is a multiple of three; its object says it is base64.
    const unpadded = `${file}###\n`;
    const gitlab = JSON.stringify({ file_name: '.env', encoding: 'base64', content: Buffer.from(unpadded).toString('base64') });
    expect(Buffer.from(unpadded).toString('base64')).not.toMatch(/=$/);
    // Where the base64 of the file starts to differ from the redacted one's: the secret's own.
    const secretPart = (given: string, kept: string): string => {
      const from = [...given].findIndex((char, i) => char !== kept[i]);
      return given.slice(from, from + 12);
    };
    await expectRecordedAs([
      [wrapped(file), wrapped(redacted)],
      [Buffer.from(file).toString('base64'), Buffer.from(redacted).toString('base64')],
      [contents, JSON.stringify({ name: '.env', encoding: 'base64', content: wrapped(redacted) })],
      [binary, binary],
      [gitlab, JSON.stringify({ file_name: '.env', encoding: 'base64', content: Buffer.from(`${redacted}###\n`).toString('base64') })],
      // Looks like base64 and is not: the patterns still read it.
      ['AKIAIOSFODNN7EXAMPLE\nwJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY\n', '[redacted]\nwJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY\n'],
      ['9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08', '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08'],
    ], ['B64-Pw', secretPart(wrapped(file), wrapped(redacted))]);
  });

  it('given on the line after a backslash that continues it are [redacted], the backslash kept', async () => {
    await expectRecordedAs([
      ['export API_TOKEN=\\\n  Cont-Pw-01\nnext', 'export API_TOKEN=\\\n  [redacted]\nnext'],
      ['DB_PASSWORD= \\\r\n"Cont Pw 02" ./run', 'DB_PASSWORD= \\\r\n"[redacted]" ./run'],
    ], ['Cont-Pw', 'Cont Pw']);
  });

  it('set as a password by SQL are [redacted] in their quotes, or unquoted as Oracle takes them', async () => {
    await expectRecordedAs([
      ['CREATE USER scott IDENTIFIED BY Tgr1tiger;\nalter user "Scott" identified by Tgr2pw replace Tgr3old account unlock', 'CREATE USER scott IDENTIFIED BY [redacted];\nalter user "Scott" identified by [redacted] replace [redacted] account unlock'],
      ['CREATE USER x IDENTIFIED BY "Tgr 4 Quoted"', 'CREATE USER x IDENTIFIED BY "[redacted]"'],
      ["CREATE DATABASE LINK l CONNECT TO u IDENTIFIED BY Tgr5pw USING 'db'", "CREATE DATABASE LINK l CONNECT TO u IDENTIFIED BY [redacted] USING 'db'"],
      ["ALTER USER 'u'@'%' IDENTIFIED BY 'Tgr6new' REPLACE 'Tgr7old'; ALTER USER u IDENTIFIED BY VALUES 'S:Tgr8hash'", "ALTER USER 'u'@'%' IDENTIFIED BY '[redacted]' REPLACE '[redacted]'; ALTER USER u IDENTIFIED BY VALUES '[redacted]'"],
      ["ALTER USER bob WITH PASSWORD 'Sql-Pw-01'", "ALTER USER bob WITH PASSWORD '[redacted]'"],
      ["CREATE ROLE r LOGIN ENCRYPTED PASSWORD 'Sql-Pw-02';", "CREATE ROLE r LOGIN ENCRYPTED PASSWORD '[redacted]';"],
      ["CREATE USER 'u'@'%' IDENTIFIED BY 'Sql-Pw-03'", "CREATE USER 'u'@'%' IDENTIFIED BY '[redacted]'"],
      ['ALTER USER u IDENTIFIED WITH caching_sha2_password BY "Sql-Pw-04"', 'ALTER USER u IDENTIFIED WITH caching_sha2_password BY "[redacted]"'],
      ["SET PASSWORD FOR 'u'@'%' = 'Sql-Pw-05'; ALTER ROLE r PASSWORD 'Sql''Pw-06'", "SET PASSWORD FOR 'u'@'%' = '[redacted]'; ALTER ROLE r PASSWORD '[redacted]'"],
    ], ['Sql-Pw', "Sql''Pw", 'Tgr']);
  });

  it('are recorded as [redacted] in object keys too, keys that come out alike kept apart, ordinary keys as they are', async () => {
    const session = agent('acme/keys', { home: tempDir() }).session({ ids: countingIds(), clock: steppingClock() });
    // A map keyed by token (a tool's answer listing keys and their scopes), and headers captured as keys.
    session.emit('tool.result', { result: { [OPENAI]: { scope: 'read' }, [GITHUB]: { scope: 'repo' }, [`Bearer ${'Q'.repeat(20)}`]: true, path: '/etc/hosts', max_tokens: 5 } });
    const result = await session.close();
    const trail = fs.readFileSync(result.log_path, 'utf8');
    for (const secret of [OPENAI, GITHUB, 'Q'.repeat(20)]) expect(trail.includes(secret), secret).toBe(false);
    const event = lines(result.log_path).map((line) => JSON.parse(line) as { kind: string; payload: { result?: Record<string, unknown> } }).find((e) => e.kind === 'tool.result');
    // Apart by the code-point order of the keys as given: `ghp_…` before `sk-…`.
    expect(event?.payload.result).toEqual({ 'Bearer [redacted]': true, '[redacted]': { scope: 'repo' }, '[redacted]~2': { scope: 'read' }, max_tokens: 5, path: '/etc/hosts' });
    expect(result.chain).toMatchObject({ hash_chain_valid: true, complete: true });
    expect(pythonVerify(result.log_path)).toMatchObject({ valid: true });
  });

  // Texts that make a pattern try again from each place of a long run, 100 kB each: one whose time
  // grew with the square of its length took seconds.
  const PATHOLOGICAL_TEXTS: readonly (readonly [string, string])[] = [
    ['a value naming a variable, then spaces before a line break, in an XML element', `<password>$${' '.repeat(100_000)}\nx</password>`],
    ['block scalar headers', 'password: |\n'.repeat(8_000)],
    ['a block scalar header, then spaces', `password: | #${' '.repeat(100_000)}\nx`],
    ['a block scalar of blank and indented lines', `token: >-\n${'  x\n \n'.repeat(16_000)}`],
    ['names without values', '- name: DB_PASSWORD\n'.repeat(5_000)],
    ['a name, then a value line of spaces', `- name: DB_PASSWORD\n${' '.repeat(100_000)}x`],
    ['a value, then spaces before a line break', `- value: a${' '.repeat(100_000)}\nfoo`],
    ['a quoted value, then spaces', `- value: "a"${' '.repeat(100_000)}z\n  name: DB_PASSWORD`],
    ['property list keys left open', '<key>password'.repeat(8_000)],
    ['property list values left open', '<key>password</key><string>'.repeat(4_000)],
    ['an env value of spaces', `A_TOKEN=${' '.repeat(100_000)}\n`],
    ['export, then spaces', `export${' '.repeat(100_000)}DB_PASSWORD`],
    ['base64 characters, then one that is not', `${'a'.repeat(100_000)}!`],
    ['rows of a secret column', `password | x\n${'password | x\n'.repeat(8_000)}`],
    ['expanded records', `-[ RECORD 1 ]-\n${'password | x\n'.repeat(8_000)}`],
    ['a Secret with many keys', `kind: Secret\ndata:\n${'  k: v\n'.repeat(16_000)}`],
    ['bars without a table', `password ${'| '.repeat(50_000)}`],
    ['a CSV with a secret in every column', `${'pw,'.repeat(20_000)}pw\n${'x,'.repeat(20_000)}x`],
    ['JSON text of many pairs', JSON.stringify(Array.from({ length: 10_000 }, (_, i) => ['pin', `p${i}`]))],
    ['JSON text of many cookies', JSON.stringify(Array.from({ length: 4_000 }, (_, i) => ({ name: `c${i}`, value: `v${i}`, httpOnly: true })))],
    ['an env value of names left without values', `A_TOKEN=x${'&a'.repeat(50_000)}`],
    ['users created without a password', `${'CREATE USER '.repeat(8_000)}identified`],
    ['a user, then spaces', `CREATE USER x${' '.repeat(100_000)}IDENTIFIED`],
    ['a password replaced, then REPLACE again and again', `CREATE USER u IDENTIFIED BY p${' REPLACE'.repeat(12_000)}`],
    ['name fields naming secrets, without values', 'Name=DB_PASSWORD,'.repeat(6_000)],
    ['value fields, then no name', `Value=x,${'Value=x, '.repeat(10_000)}`],
    ['secret-like names ending lines, without values below', '  DB_PASSWORD:\n    description: x\n'.repeat(4_000)],
    ['a MySQL command of many arguments and no password', `mysql${' -u'.repeat(40_000)}`],
    ['many MySQL commands without a password', 'mysql -u root '.repeat(8_000)],
    ['logins of many arguments and no password', `docker login${' -u x'.repeat(20_000)}`],
    ['Oracle tools, then no logon', `${'sqlplus -s '.repeat(8_000)}x`],
    ['config set and options, then no value', `config set${' --a'.repeat(25_000)}`],
    ['echoes piped on, with no --password-stdin', 'echo x | cat '.repeat(8_000)],
    ['a redis-cli of many arguments and no password', `redis-cli${' -h x'.repeat(20_000)}`],
    ['a name field naming a secret, then spaces', `Name=DB_PASSWORD${' '.repeat(100_000)}x`],
    ['a value field, then spaces', `Value=x${' '.repeat(100_000)}y`],
    ['secret-like names above deeply indented lines, none of them a value', `DB_PASSWORD:\n${`${' '.repeat(30)}x\n`.repeat(9)}`.repeat(300)],
    ['a name field naming a secret, then letters', `Name=token${'a'.repeat(100_000)}`],
    ['value fields, one after another', `token ${'Value=x='.repeat(12_000)}`],
    ['one-line assignments after a late line break', `${'x'.repeat(50_000)}\n${'token=a\n'.repeat(6_000)}`],
    ['a secret word before a run of dashed words', `key ${'a-'.repeat(50_000)}`],
    ['ldappasswd and many -s', `ldappasswd${' -s x'.repeat(20_000)}`],
    ['fields of an object under a secret-like name, and no value', `token: {${'a: b, '.repeat(16_000)}`],
    ['token-like words after dashes', 'eyJ-'.repeat(25_000)],
    ['--password-stdin again and again, no here-string', '--password-stdin '.repeat(6_000)],
    ['name fields naming secrets, each with a long field after', `,Name=password${'a'.repeat(242)}`.repeat(400)],
    ['machine, then spaces before a password', `machine${' '.repeat(100_000)}password x`],
    ['an ENV of a secret-like name, then spaces', `ENV DB_PASSWORD${' '.repeat(100_000)}x`],
    ['a --value, then many options and no name', `--value x${' --a b'.repeat(15_000)}`],
    ['an assignment of parentheses left open', `token = ${'('.repeat(100_000)}`],
    ['an assignment of a call left open', `token = a(${'a'.repeat(100_000)}`],
    ['an assignment of a call of prompts left open', `token = prompt(${'"a:" '.repeat(25_000)}`],
    ['an assignment of many calls', `token = ${'f(x)'.repeat(25_000)}`],
    ['arrows without values', `'password' =>`.repeat(8_000)],
    ['an element of many attributes, none naming a secret', `<e${' a="1"'.repeat(15_000)}>`],
    ['an element of many attributes, each naming a secret', `<e${' key="password"'.repeat(7_000)}>`],
    ['a name with a long declared type and no value', `password: ${'a'.repeat(100_000)}`],
    ['a call with new before a long word', `token = new ${'a'.repeat(100_000)}`],
    ['calls inside a call left open', `token = f(${'(x)'.repeat(30_000)}`],
    ['fallbacks, one after another', `token = a${' ?? a'.repeat(20_000)}`],
    ['fallbacks of quotes left open', `token = a${' ?? "'.repeat(25_000)}`],
    ['subscripts naming secrets, without values', "x['password'] ".repeat(8_000)],
    ['shell strings reopened again and again', "'DB_PASSWORD='".repeat(8_000)],
    ['value children left open', '<entry key="password"><value '.repeat(5_000)],
    ['a method chain after a variable', `password: $a${'->b'.repeat(30_000)}x`],
    ['Terraform variables naming secrets, without defaults', 'variable "db_password" {\n  type = string\n'.repeat(3_000)],
    ['template literals left open', 'token = `'.repeat(12_000)],
    ['fills of secret fields, without values', ".fill('password', ".repeat(6_000)],
    ['labels of secret fields, then fills left open', "('password').fill(".repeat(5_000)],
    ['an Authorization header, then spaces', `Authorization: ${' '.repeat(100_000)}`],
    ['Cookie headers on one line', 'cookie: '.repeat(12_500)],
    ['webhook paths again and again', 'hooks.slack.com/services/'.repeat(4_000)],
    ['sqlcmd of many arguments and no password', `sqlcmd${' -S x'.repeat(20_000)}`],
    ['net user again and again', 'net user a '.repeat(9_000)],
    ['user and password pairs without a DSN after', `${'a:b@'.repeat(25_000)}tcp(`],
    ['described fields without a value', '{"element": "password", '.repeat(5_000)],
    ['words naming a secret, then spaces', `api key${' '.repeat(100_000)}`],
    ['elements an attribute names a secret, never closed', '<entry key="password">x'.repeat(5_000)],
    ['name fields, each with an object left open after', '{"name": "DB_PASSWORD", "a": {'.repeat(4_000)],
    ['an environment lookup, then letters', `token = process.env.${'a'.repeat(100_000)}`],
    ['a quoted name, then spaces before its colon and quote', `"password${' '.repeat(100_000)}:"`],
    ['quoted names and colons, again and again', `"${'password:'.repeat(10_000)}"`],
    ['a box-drawn table of many rows', `┌──┬──┐\n│ id │ password │\n├──┼──┤\n${'│ 1 │ x │\n'.repeat(8_000)}`],
    ['box-drawn headers, each with no rule after', '│ id │ password │\n'.repeat(8_000)],
    ['a fixed-width table of many columns', `${'pw '.repeat(20_000)}\n${'-- '.repeat(20_000)}\n${'xx '.repeat(20_000)}`],
    ['fixed-width rules, one after another', 'password token\n-------- -----\n'.repeat(6_000)],
    ['JSON lines that are not JSON', '{"password": [}\n'.repeat(8_000)],
    ["a hash's scheme, then a long salt", `$6$${'a'.repeat(100_000)}`],
    ['hash schemes again and again', '$6$a$'.repeat(20_000)],
    ['Argon2 parameters again and again', '$argon2id$v=19$m=1,t=1,p=1$'.repeat(4_000)],
    ['reply items naming secrets, without values', '1) "password"\n'.repeat(8_000)],
    ['a wide fixed-width rule, then many short rows', `${'pw '.repeat(12_000)}\n${'-- '.repeat(12_000)}\n${'x\n'.repeat(20_000)}`],
    ['a box header, then a long line of spaces', `│ id │ password │\n${' '.repeat(100_000)}`],
    ['a box header, a line of types, then a long line of spaces', `│ id │ password │\n│ int │ text │\n${' '.repeat(100_000)}x`],
    ['a bar header, then spaces before a letter', `a | password\n${' '.repeat(100_000)}x`],
    ['a long run of dashes that is no rule', `a | password\n${'-'.repeat(100_000)}x`],
    ["a psql record's header, then a long run of dashes", `-[ RECORD 1 ]${'-'.repeat(100_000)}x\npassword | x`],
    ["a Secret's entry whose value holds a long run of spaces", `kind: Secret\ndata:\n  k: a${' '.repeat(100_000)}b`],
    ['an LDIF base64 value that does not end as one', `userPassword:: ${'A'.repeat(100_000)}!`],
    ['LDIF names with options, again and again', `password${';x'.repeat(50_000)}::`],
    ['a named top border never closed', `┌─password${'─'.repeat(100_000)}x\n│ x │`],
    ['a header of names one space apart over a whole rule', `${'password '.repeat(10_000)}\n${'━'.repeat(100)}\n${'x '.repeat(10_000)}`],
    ['a trimmed table, then many rows of words', `id password\n-- --------\n${'1 x\n'.repeat(20_000)}`],
    ['a .pgpass entry never ended', `pgpass ${'a:1:'.repeat(25_000)}`],
    ['a query string after a .pgpass name', `pgpass ${'k=v&'.repeat(25_000)}`],
    ['equals signs after a .pgpass name', `pgpass ${'=a'.repeat(50_000)}`],
    ['colons and escapes after a .pgpass name', `pgpass ${'\\:'.repeat(50_000)}`],
    ['semicolon rows under a secret header', `id;password\n${'1;"x'.repeat(20_000)}`],
    ['a trimmed table, then many rows of more words than columns', `id password\n-- --------\n${'1 x y\n'.repeat(20_000)}`],
    ['a rule under names, then many rows out of line', `  id   password\n ━━━━━━━━━━━━━\n${'   1   a b c d\n'.repeat(10_000)}`],
    ['server messages over bar lines', 'NOTICE:  x\na|password\n'.repeat(8_000)],
    ['a .pgpass entry in quotes never closed, of many words', `pgpass '${'a:1:b:c:d '.repeat(12_000)}`],
    ['a .pgpass entry, then many words and a colon', `pgpass a:1:b:c:d${' x'.repeat(50_000)}:`],
    ['a .pgpass entry on its own line, then many words and a colon', `pgpass\na:1:b:c:d${' x'.repeat(50_000)}:`],
  ];

  it('are found in time linear in the length of the text, pathological texts included', () => {
    for (const [name, text] of PATHOLOGICAL_TEXTS) {
      const started = performance.now();
      redactCredentials(text);
      expect(performance.now() - started, name).toBeLessThan(LINEAR_MS);
    }
  });

  it('leave text that only names a secret, or looks like one, as it is', async () => {
    const result = await recorded(KEPT_TEXTS).result;
    const call = lines(result.log_path).map((line) => JSON.parse(line) as { kind: string; payload: { args?: { commands: string[] } } }).find((e) => e.kind === 'tool.call');
    expect(call?.payload.args?.commands).toEqual(KEPT_TEXTS);
  });
});

describe('a secret a command prints', () => {
  it('is known by the command: a secret-printing tool, or a secret named to printenv, echo, heroku, terraform or pulumi', () => {
    const printing = [
      'printenv DB_PASSWORD',
      'printenv HOME API_TOKEN',
      'echo "$HOME" && echo ${STRIPE_SECRET_KEY}',
      "printf '%s' \"$GITHUB_TOKEN\"",
      'gcloud secrets versions access latest --secret=db',
      'aws ssm get-parameter --name /prod/db --with-decryption --query Parameter.Value --output text',
      'aws ecr get-login-password --region eu-west-1',
      'vault kv get -field=password secret/db',
      'op read op://vault/db/password',
      'security find-generic-password -s github -w',
      "kubectl get secret db -o jsonpath='{.data.password}' | base64 -d",
      'gh auth token',
      'heroku config:get DATABASE_PASSWORD -a app',
      'terraform output -raw db_password',
      'pulumi config get dbPassword',
      'Write-Output $env:DB_PASSWORD',
      'echo %DB_PASSWORD%',
      `python3 -c "import os; print(os.environ['DB_PASSWORD'])"`,
      'node -e "console.log(process.env.API_TOKEN)"',
      'cat /run/secrets/db_password',
      'kubectl get secret db -o json | jq -r .data.password | base64 -d',
      'security find-generic-password -ws github',
      'redis-cli -h cache CONFIG GET requirepass',
      'cat < ~/.pgpass',
      'grep orders ~/.pgpass',
      "awk -F: '{print $5}' ~/.pgpass",
      'base64 ~/.pgpass',
      'cat "$PGPASSFILE"',
      'cat /run//secrets/db_password',
    ];
    const other = ['ls -la', 'echo $HOME', 'printenv PATH', 'vault kv get secret/db', 'kubectl get secrets', 'echo password', 'terraform output -raw db_host', 'cat README.md', 'ls -l ~/.pgpass', 'cat pgpass-howto.md'];
    expect(printing.filter((command) => !printsSecret({ command }))).toEqual([]);
    expect(other.filter((command) => printsSecret({ command }))).toEqual([]);
    // An argument list, as a tool's exec takes one.
    expect(printsSecret({ argv: ['gcloud', 'secrets', 'versions', 'access', 'latest'] })).toBe(true);
    expect(printsSecret({ argv: ['ls', '-la'] })).toBe(false);
    // Only the fields that hold a command: a file's content or a search's query may quote one.
    expect(printsSecret({ path: 'login.sh', content: 'echo "$REGISTRY_TOKEN" | docker login' })).toBe(false);
    expect(printsSecret({ query: 'gh auth token' })).toBe(false);
  });

  it('is looked for in time linear in the length of the command', () => {
    const commands = ['vault read '.repeat(10_000), `echo ${'$HOME '.repeat(20_000)}`, 'security find-generic-password '.repeat(4_000), 'kubectl get secret '.repeat(6_000), `printenv ${'A_B '.repeat(30_000)}`, 'node '.repeat(20_000), 'kubectl get secret | '.repeat(5_000), 'cat '.repeat(25_000)];
    for (const command of commands) {
      const started = performance.now();
      printsSecret({ command });
      expect(performance.now() - started, command.slice(0, 20)).toBeLessThan(LINEAR_MS);
    }
  });

  it('is recorded without its text, given to the caller as printed, and scrubbed from every later record; other answers are kept', async () => {
    const session = agent('acme/printed', { home: tempDir() }).session({ ids: countingIds(), clock: steppingClock() });
    const printed = 'Printed-Pw-0001';
    const given = await session.tool('shell', { command: 'printenv DB_PASSWORD' }, () => ({ stdout: `${printed}\n`, stderr: '', exit_code: 0 }));
    await session.tool('gcloud', { argv: ['gcloud', 'secrets', 'versions', 'access', 'latest', '--secret=api'] }, () => ({ content: [{ type: 'text', text: 'Printed-Pw-0002' }] }));
    await session.tool('shell', { command: 'ls' }, () => ({ stdout: 'notes.txt\n', exit_code: 0 }));
    // As a Claude Code hook records a call and its answer: one event.
    session.emit('tool.result', { tool: 'Bash', args: { command: 'echo $API_TOKEN' }, result: { stdout: 'Printed-Pw-0003\n', stderr: '', interrupted: false } });
    // Printed in quotes, the value is learnt without them; a long answer (a listing after it) teaches no value.
    await session.tool('shell', { command: 'terraform output db_password' }, () => '"Printed-Pw-0004"\n');
    await session.tool('shell', { command: 'printenv DB_PASSWORD; ls' }, () => 'Printed-Pw-0005\nnotes-one.txt\nnotes-two.txt\nnotes-three.txt\nnotes-four.txt\n');
    session.emit('model.call', { messages: [{ role: 'tool', content: `the password is ${printed}; the key Printed-Pw-0002, the token Printed-Pw-0003, the output Printed-Pw-0004; see notes-one.txt` }] });
    // A cycle in a printed answer is refused as any payload's is, at once; the session goes on.
    const cycle: Record<string, unknown> = {};
    cycle['a'] = cycle;
    cycle['b'] = cycle;
    expect(() => session.emit('tool.result', { tool: 'Bash', args: { command: 'printenv DB_PASSWORD' }, result: cycle })).toThrow(NonJsonValueError);
    const result = await session.close();
    expect(given).toEqual({ stdout: `${printed}\n`, stderr: '', exit_code: 0 });
    const events = lines(result.log_path).map((line) => JSON.parse(line) as { kind: string; payload: Record<string, unknown> });
    expect(events.filter((e) => e.kind === 'tool.result').map((e) => e.payload['result'])).toEqual([
      { stdout: '[redacted]', stderr: '', exit_code: 0 },
      { content: [{ type: 'text', text: '[redacted]' }] },
      { stdout: 'notes.txt\n', exit_code: 0 },
      { stdout: '[redacted]', stderr: '', interrupted: false },
      '[redacted]',
      '[redacted]',
    ]);
    expect(events.find((e) => e.kind === 'model.call')?.payload['messages']).toEqual([{ role: 'tool', content: 'the password is [redacted]; the key [redacted], the token [redacted], the output [redacted]; see notes-one.txt' }]);
    for (const file of [result.log_path, result.exports.summary ?? '', result.exports.otel ?? '']) expect(fs.readFileSync(file, 'utf8'), file).not.toMatch(/Printed-Pw/);
    expect(result.chain).toMatchObject({ hash_chain_valid: true, complete: true });
    expect(pythonVerify(result.log_path)).toMatchObject({ valid: true, events: events.length });
  });

  it('is a file whose whole content is a secret (.pgpass, /run/secrets) when a command or a file tool reads it: recorded without its text', async () => {
    const session = agent('acme/printed', { home: tempDir() }).session({ ids: countingIds(), clock: steppingClock() });
    const entry = 'db.internal:5432:*:app:Printed-Pw-0011';
    await session.tool('shell', { command: 'head -n 1 ~/.pgpass' }, () => ({ stdout: `${entry}\n`, exit_code: 0 }));
    await session.tool('read_file', { path: '/home/app/.pgpass' }, () => ({ content: [{ type: 'text', text: `${entry}\n*:*:*:postgres:Printed-Pw-0012\n*:*:*:ops:Printed Pw\\:0014 x\n` }] }));
    // As a Claude Code hook records its Read tool.
    session.emit('tool.result', { tool: 'Read', args: { file_path: '/run/secrets/api_token' }, result: { type: 'text', file: { filePath: '/run/secrets/api_token', content: 'Printed-Pw-0013' } } });
    await session.tool('read_file', { path: '/home/app/.pgpass.md' }, () => 'how to write a .pgpass');
    // A password of spaces and escaped colons, as the file writes it and as it is.
    session.emit('model.call', { messages: [{ role: 'tool', content: 'the password is Printed-Pw-0011, the token Printed-Pw-0013, the ops one Printed Pw\\:0014 x, read Printed Pw:0014 x' }] });
    const result = await session.close();
    const events = lines(result.log_path).map((line) => JSON.parse(line) as { kind: string; payload: Record<string, unknown> });
    expect(events.filter((e) => e.kind === 'tool.result').map((e) => e.payload['result'])).toEqual([
      { stdout: '[redacted]', exit_code: 0 },
      { content: [{ type: 'text', text: '[redacted]' }] },
      { type: 'text', file: { filePath: '[redacted]', content: '[redacted]' } },
      'how to write a .pgpass',
    ]);
    expect(events.find((e) => e.kind === 'model.call')?.payload['messages']).toEqual([{ role: 'tool', content: 'the password is [redacted], the token [redacted], the ops one [redacted], read [redacted]' }]);
    for (const file of [result.log_path, result.exports.summary ?? '', result.exports.otel ?? '']) expect(fs.readFileSync(file, 'utf8'), file).not.toMatch(/Printed[- ]Pw/);
  });
});

describe("the agent's identity on every line", () => {
  it('is recorded as a payload is: a secret-like id and a credential in a name are [redacted], on every line and in the summary', async () => {
    const password = 'Hunter2Hunter2xyz';
    const ag = agent('acme/bot', { home: tempDir(), ids: { db: { password }, tenant: 'acme' }, name: `bot (db password=${password})`, policyVersion: `v1 token=${password}` });
    const session = ag.session({ ids: countingIds(), clock: steppingClock(), operator: { subject: 'ann', name: 'Ann' } });
    session.emit('note', { text: 'hello' });
    const result = await session.close();
    const events = lines(result.log_path).map((line) => JSON.parse(line) as { agent_ids: { ids?: Record<string, unknown>; name?: string } });
    expect(events.every((e) => (e.agent_ids.ids?.['db'] as { password?: string } | undefined)?.password === '[redacted]')).toBe(true);
    expect(events.at(-1)?.agent_ids.ids?.['tenant']).toBe('acme');
    expect(events.at(-1)?.agent_ids.name).toBe('bot (db password=[redacted])');
    for (const file of [result.log_path, result.exports.summary ?? '', result.exports.otel ?? '']) expect(fs.readFileSync(file, 'utf8'), file).not.toContain(password);
    expect(result.chain).toMatchObject({ hash_chain_valid: true, complete: true });
    expect(pythonVerify(result.log_path)).toMatchObject({ valid: true, events: events.length });
  });
});
