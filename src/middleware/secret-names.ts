/**
 * Which names are a secret's: a key, a column's header, a variable, an option (`DB_PASSWORD`,
 * `apiKey`, `X-Auth-Token`, `--password`). Every rule of the redactor that finds a secret by its
 * name asks {@link isSecretLikeKey}.
 */

// Key names are compared on their letters and digits only, lower-cased, without a trailing
// number: `PassWord`, `pass_word`, `X-Api-Key`, `apIkey` and `token2` all reach the lists below.
// Aura's list (reference §11.6), plus what its §21.18 notes it misses and the names users expect.
const SECRET_KEYS: ReadonlySet<string> = new Set([
  'apikey', 'auth', 'authorization', 'bearer', 'cardnumber', 'clientsecret', 'connectionstring', 'cookie', 'credential', 'credentials',
  'cvc', 'cvv', 'dsn', 'jwt', 'mysqlpwd', 'otp', 'pan', 'passcode', 'passphrase', 'passwd', 'password', 'pin', 'privatekey', 'pwd', 'secret', 'setcookie',
  'sshkey', 'token', 'totp', 'secretstring', 'secretbinary', 'requirepass', 'masterauth', 'psk', 'authenticationstring',
  // Lists of them (`passwords: […]`, `api_keys`); never `tokens`, which counts.
  'apikeys', 'clientsecrets', 'passcodes', 'passphrases', 'passwords', 'privatekeys', 'secrets',
]);
// `…_token`, `…Secret`, `db_password`, `aws_access_key`, `basic_auth`, …; never `…_tokens` (counters).
const SECRET_SUFFIXES: readonly string[] = [
  'token', 'secret', 'password', 'passwd', 'passphrase', 'apikey', 'privatekey', 'secretkey', 'accesskey', 'sshkey', 'signingkey',
  'encryptionkey', 'credential', 'credentials', 'authorization', 'auth', 'cookie', 'passwordhash', 'passworddigest',
  'secrets', 'passwords', 'apikeys', 'privatekeys', 'secretkeys', 'accesskeys',
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
  // The shell's `PWD` is its folder (Mongo's `pwd` a password).
  const secret = key !== 'PWD' && (secretLetters(keyLetters(key)) || secretWords(key));
  if (verdicts.size < VERDICT_CACHE_LIMIT) verdicts.set(key, secret);
  return secret;
}

function secretLetters(letters: string): boolean {
  return SECRET_KEYS.has(letters) || SECRET_SUFFIXES.some((suffix) => letters.endsWith(suffix));
}

// A password's short names, as a key's last word: `DB_PASS`, `smtp.pass`, `LDAP_BIND_PW`, `MYSQL_PWD` (never `bypass`, nor `PWD`, the shell's folder).
const PASSWORD_WORDS: ReadonlySet<string> = new Set(['pass', 'pw', 'pwd']);
// What makes a `…_key` a secret's: `APP_KEY`, `secret_key_base`, `AccountKey`, `X-Master-Key`, `client-key-data` (never `primary_key`, `sort_key`, `session_key`).
const KEY_QUALIFIERS: ReadonlySet<string> = new Set([
  'secret', 'private', 'master', 'app', 'application', 'account', 'api', 'access', 'signing', 'hmac', 'jwt', 'client', 'storage', 'subscription',
  'encryption', 'tls', 'ssh', 'auth', 'sas', 'shared', 'license', 'webhook', 'consumer', 'unseal', 'decryption', 'crypt', 'cipher',
]);
// Words after the key that it still names: `SECRET_KEY_BASE`, `client-key-data`, `unseal_keys_b64`.
const KEY_TAILS: ReadonlySet<string> = new Set(['data', 'base', 'b64', 'base64', 'pem', 'hex']);

/**
 * True for a key whose words name a secret where its letters alone do not: a password's short
 * name as its last word, a qualified `key` (or any `UPPER_SNAKE_KEY`, as env vars name API keys),
 * `secret_id`; a version after it (`ses_smtp_password_v4`) is not its name.
 */
function secretWords(key: string): boolean {
  const words = key.split(/[^A-Za-z0-9]+|(?<=[a-z0-9])(?=[A-Z])/).filter((word) => word !== '').map((word) => word.toLowerCase());
  while (words.length > 1 && /^v?\d+$/.test(words.at(-1) as string)) words.pop();
  if (words.length < 1) return false;
  if (secretLetters(words.join(''))) return true;
  while (words.length > 1 && KEY_TAILS.has(words.at(-1) as string)) words.pop();
  const last = words.at(-1) as string;
  const before = words.slice(0, -1);
  if (PASSWORD_WORDS.has(last)) return last !== 'pwd' || before.length > 0;
  if (last === 'key' || last === 'keys') return before.some((word) => KEY_QUALIFIERS.has(word)) || (before.length > 0 && /^[A-Z0-9_]+$/.test(key));
  return last === 'id' && before.at(-1) === 'secret';
}

// The words a secret's name holds one of (`db_password`, `api_token`, `X-Auth`): which names are
// secrets' is then isSecretLikeKey's answer.
export const SECRET_WORDS = 'pass|pwd|pw|psk|secret|token|key|auth|cookie|credential|dsn|jwt|otp|pin|pan|cv[cv]';
