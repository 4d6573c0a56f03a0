/**
 * Secret redaction, on every emit (reference §11.6): the value of a secret-like key, at any
 * depth, is recorded as `[redacted]`, and a secret value the session injected into a tool call is
 * scrubbed from every recorded string, object keys and ids included. It runs inside the canonical
 * walk (spine/canonical.ts), so it costs no second pass over the payload.
 */

/** The text that stands in for a redacted value. */
export const REDACTED = '[redacted]';

/** What the canonical walk asks of a redactor. */
export interface Redactor {
  /** True when the value under this key must not be recorded. */
  secretKey(key: string): boolean;
  /** The text with every known secret value replaced. */
  scrub(text: string): string;
  /** {@link scrub} for an object key: keys repeat from event to event, so the answer is kept. */
  scrubKey(key: string): string;
  /** True once there is a value to scrub (until then `scrub` changes nothing, and keys need no second look). */
  readonly scrubbing: boolean;
}

// Key names are compared on their letters and digits only, lower-cased, without a trailing
// number: `PassWord`, `pass_word`, `X-Api-Key`, `apIkey` and `token2` all reach the lists below.
// Aura's list (reference §11.6), plus what its §21.18 notes it misses and the names users expect.
const SECRET_KEYS: ReadonlySet<string> = new Set([
  'apikey', 'auth', 'authorization', 'bearer', 'cardnumber', 'clientsecret', 'connectionstring', 'cookie', 'credential', 'credentials',
  'cvc', 'cvv', 'dsn', 'jwt', 'otp', 'pan', 'passphrase', 'passwd', 'password', 'pin', 'privatekey', 'pwd', 'secret', 'setcookie',
  'sshkey', 'token', 'totp',
]);
// `…_token`, `…Secret`, `db_password`, `aws_access_key`, `basic_auth`, …; never `…_tokens` (counters).
const SECRET_SUFFIXES: readonly string[] = [
  'token', 'secret', 'password', 'passwd', 'passphrase', 'apikey', 'privatekey', 'secretkey', 'accesskey', 'sshkey', 'signingkey',
  'encryptionkey', 'credential', 'credentials', 'authorization', 'auth', 'cookie',
];

/** The form of a key the lists hold: letters and digits, lower-cased, without a trailing number. */
function keyLetters(key: string): string {
  return key.toLowerCase().replace(/[^a-z0-9]+/g, '').replace(/[0-9]+$/, '');
}

// Keys repeat from event to event; the verdict of each is computed once.
const verdicts = new Map<string, boolean>();
const VERDICT_CACHE_LIMIT = 10_000;

/**
 * True for a key whose value is a credential (`apiKey`, `X-Api-Key`, `PassWord`, `db_password`,
 * `token`, …). Counters keep their values: `tokens`, `total_tokens`, `max_tokens`, `token_count`.
 */
export function isSecretLikeKey(key: string): boolean {
  const known = verdicts.get(key);
  if (known !== undefined) return known;
  const letters = keyLetters(key);
  const secret = SECRET_KEYS.has(letters) || SECRET_SUFFIXES.some((suffix) => letters.endsWith(suffix));
  if (verdicts.size < VERDICT_CACHE_LIMIT) verdicts.set(key, secret);
  return secret;
}

// Shorter values would scrub ordinary words out of recorded text; Aura uses the same bound.
const MIN_SCRUB_LENGTH = 8;

// Keys whose scrubbed form is kept, per redactor (forgotten when a secret is added).
const KEY_CACHE_LIMIT = 10_000;

/** The redactor of one session: secret-like keys, and the secret values it has injected so far. */
export class SessionRedactor implements Redactor {
  private secrets: string[] = [];
  private readonly keys = new Map<string, string>();

  secretKey(key: string): boolean {
    return isSecretLikeKey(key);
  }

  get scrubbing(): boolean {
    return this.secrets.length > 0;
  }

  /** Remembers a value that must never be recorded (and its prefixed form, such as `Bearer …`). */
  addSecret(value: string): void {
    if (value.length < MIN_SCRUB_LENGTH || this.secrets.includes(value)) return;
    this.secrets = [...this.secrets, value].sort((a, b) => b.length - a.length);
    this.keys.clear();
  }

  scrubKey(key: string): string {
    let scrubbed = this.keys.get(key);
    if (scrubbed === undefined) {
      scrubbed = this.scrub(key);
      if (this.keys.size < KEY_CACHE_LIMIT) this.keys.set(key, scrubbed);
    }
    return scrubbed;
  }

  scrub(text: string): string {
    let out = text;
    for (const secret of this.secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    return out;
  }
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
