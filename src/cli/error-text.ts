/**
 * An error's message as the command line says it: a credential it quotes is not repeated, and
 * aura's own words around what it quotes stay readable.
 */

import { AuraError } from '../errors.js';
import { redactCredentials } from '../middleware/credential-text.js';

/**
 * The texts an error quotes from outside: an AuraError's data strings (a path, a session id, a
 * store's name), a system error's path. A message is read with them held apart (see
 * {@link redactedMessage}).
 */
export function quotedTexts(error: unknown): string[] {
  if (error instanceof AuraError) {
    const data: unknown = error.data;
    return data !== null && typeof data === 'object' ? Object.values(data).filter((value): value is string => typeof value === 'string') : [];
  }
  const path = (error as NodeJS.ErrnoException | null)?.path;
  return typeof path === 'string' ? [path] : [];
}

/**
 * `message` with credentials redacted. A path it quotes (one of `quoted` with a `/` or `\\` in it)
 * is redacted alone, and stands in the rest of the message as a word of no meaning while that is:
 * read with the words after it, a path that ends in a secret's name (`cannot read /etc/passwd: it
 * is a folder`) takes them for its value. Its file's name names no value of the message; an
 * option's name (`--password "…"`) or a key does, and stays in place. A path the rest of the
 * message gives a secret's place stays redacted. Only a whole path is held apart, never one inside
 * another word.
 */
export function redactedMessage(message: string, quoted: readonly string[]): string {
  const texts = [...new Set(quoted)].filter((text) => /[\\/]/.test(text)).sort((a, b) => b.length - a.length);
  const held: string[] = [];
  let rest = message;
  for (const text of texts) {
    const whole = new RegExp(`(?<![\\w.-])${escapeRegExp(text)}(?![\\w-])`, 'g');
    if (!whole.test(rest)) continue;
    rest = rest.replace(whole, placeholder(held.length));
    held.push(text);
  }
  let redacted = redactCredentials(rest);
  // Put back through a function: a path may hold `$&` or `$'`, which a replacement text would expand.
  held.forEach((text, i) => (redacted = redacted.replaceAll(placeholder(i), () => redactCredentials(text))));
  return redacted;
}

// A word no credential pattern reads as a name or takes apart, and no message holds.
function placeholder(i: number): string {
  return `AuraQuoted${i}x${'Q'.repeat(8)}`;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** What `error` says, as {@link redactedMessage} redacts it. */
export function errorText(error: unknown): string {
  return redactedMessage(error instanceof Error ? error.message : String(error), quotedTexts(error));
}
