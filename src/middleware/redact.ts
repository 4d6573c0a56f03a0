/**
 * Secret redaction, on every emit (reference §11.6): the value of a secret-like key, at any
 * depth, is recorded as `[redacted]`, and a secret value the session injected into a tool call is
 * scrubbed from every recorded string. It runs inside the canonical walk (spine/canonical.ts), so
 * it costs no second pass over the payload.
 */

/** The text that stands in for a redacted value. */
export const REDACTED = '[redacted]';

/** What the canonical walk asks of a redactor. */
export interface Redactor {
  /** True when the value under this key must not be recorded. */
  secretKey(key: string): boolean;
  /** The text with every known secret value replaced. */
  scrub(text: string): string;
}

// Aura's list, plus what its §21.18 notes it misses (camelCase, `x-api-key`, cookies).
const SECRET_KEYS = new Set([
  'api_key', 'apikey', 'password', 'passwd', 'passphrase', 'secret', 'secret_value', 'secret_key', 'private_key', 'authorization',
  'access_token', 'refresh_token', 'client_secret', 'card_number', 'cvv', 'pan', 'pin', 'credential', 'credentials', 'bearer',
  'auth_token', 'api_token', 'session_token', 'id_token', 'token', 'cookie', 'set_cookie', 'proxy_authorization',
]);
const SECRET_SUFFIXES = ['_token', '_secret', '_password', '_api_key', '_apikey', '_private_key', '_secret_key', '_access_key'];
// Counters, not credentials.
const KEEP_KEYS = new Set(['tokens', 'token_count', 'total_tokens', 'max_tokens', 'prompt_tokens', 'completion_tokens']);

// Keys repeat from event to event; the verdict of each is computed once.
const verdicts = new Map<string, boolean>();
const VERDICT_CACHE_LIMIT = 10_000;

/** True for a key whose value is a credential (`apiKey`, `X-Api-Key`, `db_password`, `token`, …). */
export function isSecretLikeKey(key: string): boolean {
  const known = verdicts.get(key);
  if (known !== undefined) return known;
  const normal = key
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .replaceAll('-', '_');
  const secret = !KEEP_KEYS.has(normal) && (SECRET_KEYS.has(normal) || SECRET_SUFFIXES.some((suffix) => normal.endsWith(suffix)));
  if (verdicts.size < VERDICT_CACHE_LIMIT) verdicts.set(key, secret);
  return secret;
}

// Shorter values would scrub ordinary words out of recorded text; Aura uses the same bound.
const MIN_SCRUB_LENGTH = 8;

/** The redactor of one session: secret-like keys, and the secret values it has injected so far. */
export class SessionRedactor implements Redactor {
  private secrets: string[] = [];

  secretKey(key: string): boolean {
    return isSecretLikeKey(key);
  }

  /** Remembers a value that must never be recorded (and its prefixed form, such as `Bearer …`). */
  addSecret(value: string): void {
    if (value.length < MIN_SCRUB_LENGTH || this.secrets.includes(value)) return;
    this.secrets = [...this.secrets, value].sort((a, b) => b.length - a.length);
  }

  scrub(text: string): string {
    let out = text;
    for (const secret of this.secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    return out;
  }
}
