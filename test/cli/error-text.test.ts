/**
 * What the command line says of an error: the credentials it quotes redacted, and aura's words
 * after a path that ends in a secret's name (`/etc/passwd: it is a folder`) kept.
 */

import { describe, expect, it } from 'vitest';
import { errorText, quotedTexts, redactedMessage } from '../../src/cli/error-text.js';
import { InvalidOptionError, InvalidSessionIdError, NotFoundError, ReadError } from '../../src/errors.js';

describe('an error message redacted for the command line', () => {
  it("keeps aura's words after a quoted path named like a secret", () => {
    const cases = [
      { error: new InvalidSessionIdError('../../etc/passwd', "expected 'aura_sess_' followed by 12 lowercase hex digits"), said: `invalid session id "../../etc/passwd": expected 'aura_sess_' followed by 12 lowercase hex digits` },
      { error: new ReadError('/home/u/.config/token', Object.assign(new Error('denied'), { code: 'EACCES' })), said: 'cannot read /home/u/.config/token: permission denied (EACCES)' },
      { error: new NotFoundError('trail', 'C:\\keys\\api_key'), said: 'trail not found: C:\\keys\\api_key' },
      { error: new NotFoundError('trail', "/tmp/$&/$'/token"), said: "trail not found: /tmp/$&/$'/token" },
    ];
    for (const { error, said } of cases) expect(errorText(error)).toBe(said);
  });

  it('still redacts what a quoted text or the words around it give a secret', () => {
    const cases = [
      // the quoted path is the value of a secret's option
      { message: 'invalid --password "/srv/hunter2-pw": expected a file', quoted: ['--password', '/srv/hunter2-pw'], said: 'invalid --password "[redacted]": expected a file' },
      // a secret inside the quoted path
      { message: 'trail not found: /tmp/OPENAI_API_KEY=sk-proj-Zx8Zx8Zx8Zx8Zx8Zx8/t.jsonl', quoted: ['/tmp/OPENAI_API_KEY=sk-proj-Zx8Zx8Zx8Zx8Zx8Zx8/t.jsonl'], said: 'trail not found: /tmp/OPENAI_API_KEY=[redacted]/t.jsonl' },
      { message: 'trail not found: https://deploy:hunter2-pass-77@example.com/t.jsonl', quoted: ['https://deploy:hunter2-pass-77@example.com/t.jsonl'], said: 'trail not found: https://deploy:[redacted]@example.com/t.jsonl' },
      // an option's name or a key is never held apart from its value
      { message: 'invalid --token "abc123xyz": expected a word', quoted: ['--token', 'abc123xyz'], said: 'invalid --token "[redacted]": expected a word' },
      // what the message says beyond its quoted path is read as before
      { message: '/x/config.yaml:3: password: hunter2 is not a mapping', quoted: ['/x/config.yaml'], said: '/x/config.yaml:3: password: [redacted] is not a mapping' },
      // a quoted text inside a longer word is not taken apart from it
      { message: 'cannot read a/pass: a/password: hunter2', quoted: ['a/pass'], said: 'cannot read a/pass: a/password: [redacted]' },
    ];
    for (const { message, quoted, said } of cases) expect(redactedMessage(message, quoted), message).toBe(said);
  });

  it("quotes an AuraError's data texts and a system error's path", () => {
    expect(quotedTexts(new InvalidOptionError('--limit', 'abc', 'a number'))).toEqual(['--limit', 'abc']);
    expect(quotedTexts(new NotFoundError('trail', '/x/y.jsonl'))).toEqual(['/x/y.jsonl']);
    expect(quotedTexts(Object.assign(new Error('no'), { code: 'ENOENT', syscall: 'open', path: '/x/token' }))).toEqual(['/x/token']);
    expect(quotedTexts('not an error')).toEqual([]);
  });
});
