/**
 * What the canonical walk asks of a redactor, and what every redacting step writes: the text that
 * stands in for a value, and the rule that keeps rewritten keys apart. The redactor itself
 * (middleware/redact.ts) sits above the walk and implements {@link Redactor}.
 */

/** The text that stands in for a redacted value. */
export const REDACTED = '[redacted]';

/** What the canonical walk asks of a redactor. */
export interface Redactor {
  /** True when the value under this key must not be recorded. */
  secretKey(key: string): boolean;
  /** The text with every known secret value, and every credential it holds, replaced. */
  scrub(text: string): string;
  /** {@link scrub} for an object key: keys repeat from event to event, so the answer is kept. */
  scrubKey(key: string): string;
  /** The key of `record` holding a value its `name` (or `key`) member names as a secret's (`{name: 'DB_PASSWORD', value: …}`), or null. */
  namedSecretKey(record: Readonly<Record<string, unknown>>, keys: readonly string[]): string | null;
  /**
   * The indexes of `array` that hold a secret's value, or null: the value of a `[name, value]`
   * pair whose name is a secret's (`['DB_PASSWORD', …]`, as `Object.entries` gives it), and each
   * argument after a secret-like option in an argument list (`['--password', …]`).
   */
  secretItems(array: readonly unknown[]): ReadonlySet<number> | null;
  /** True for a value no key makes a secret: a boolean, null, a JSON Schema's description of a field (`{type: 'string', description: …}`). */
  keepsValue(value: unknown): boolean;
}

/**
 * `name`, or `name~2`, `name~3`, …: the first that is not `taken`. Keys rewritten alike (two
 * masked e-mails, two keys holding a secret) stay apart, so no entry is lost.
 */
export function freeKey(name: string, taken: (candidate: string) => boolean): string {
  let candidate = name;
  for (let n = 2; taken(candidate); n++) candidate = `${name}~${n}`;
  return candidate;
}
