/**
 * Secrets in a profile: named by reference, never held. A reference is `<scheme>:<name>`
 * (`env:PAY_KEY`, `vault:payments/stripe#key`), and the scheme says which broker resolves it: the
 * built-in broker resolves `env:`, and a broker of your own declares its schemes in `schemes`.
 * Anything else in a secret field is taken for the secret itself and refused when the profile is
 * loaded, and so is any string of the profile, anywhere, that has the shape of a known credential.
 * Errors name the file, line and key, never the value.
 */

import { InvalidOptionError } from '../errors.js';
import { credentialShape } from '../middleware/credential-text.js';
import { profileError, type KeyPath, type ProfileSource } from './profile-source.js';

/** Resolves secret references. Return `undefined` (or throw) for one it cannot resolve. */
export interface SecretBroker {
  /**
   * The schemes it resolves, lower-case and without the colon (`['vault']` for `vault:…` refs).
   * Default `['env']`. A profile whose refs use another scheme is refused before anything runs.
   */
  readonly schemes?: readonly string[];
  resolve(ref: string): string | undefined | Promise<string | undefined>;
}

/** The scheme of the built-in broker: `env:NAME` is the environment variable NAME. */
export const ENV_SCHEME = 'env';

/** The built-in broker: `env:NAME` is the environment variable NAME. */
export class EnvSecretBroker implements SecretBroker {
  readonly schemes: readonly string[] = [ENV_SCHEME];

  constructor(private readonly env: Readonly<Record<string, string | undefined>> = process.env) {}

  resolve(ref: string): string | undefined {
    if (!ref.startsWith(`${ENV_SCHEME}:`)) return undefined;
    const value = this.env[ref.slice(ENV_SCHEME.length + 1)];
    return value === undefined || value === '' ? undefined : value;
  }
}

// RFC 3986 scheme syntax, lower-case only; the name after it has no white space or control character.
const SCHEME = /^[a-z][a-z0-9+.-]*$/;
// eslint-disable-next-line no-control-regex -- control characters are what the name may not hold
const REF = /^([a-z][a-z0-9+.-]*):([^\s\x00-\x1f\x7f]+)$/;

/**
 * The schemes a broker resolves (`['env']` for one that declares none).
 * @throws InvalidOptionError for a `schemes` that is not a list of lower-case schemes
 */
export function brokerSchemes(broker: SecretBroker | null | undefined): readonly string[] {
  const declared: unknown = broker?.schemes;
  if (declared === undefined) return [ENV_SCHEME];
  if (!Array.isArray(declared) || declared.length === 0 || !declared.every((scheme) => typeof scheme === 'string' && SCHEME.test(scheme))) {
    throw new InvalidOptionError('secretBroker.schemes', declared, 'a non-empty list of lower-case schemes without the colon, such as ["vault"]');
  }
  return declared as readonly string[];
}

/** The scheme of a well-formed ref, else null. */
export function refScheme(ref: string): string | null {
  return REF.exec(ref)?.[1] ?? null;
}

/**
 * What is wrong with `value` as a secret ref, or null when it is one that `schemes` cover. The
 * answer never quotes the value: a value that is not a ref may be the secret itself.
 */
export function secretRefProblem(value: string, schemes: readonly string[]): string | null {
  const shape = credentialShape(value);
  if (shape !== null) return `holds what looks like ${shape}: a profile names a secret by ref (env:NAME), never by value`;
  const scheme = refScheme(value);
  const known = schemes.map((s) => `${s}:`).join(', ');
  if (scheme === null) return `is not a secret ref (<scheme>:<name>, such as env:PAY_KEY; schemes here: ${known}): a value without a scheme is taken for a plaintext secret and refused`;
  if (!schemes.includes(scheme)) return `is a secret ref whose scheme no secret broker of this agent resolves (schemes here: ${known}); give agent() a secretBroker that declares it`;
  return null;
}


/**
 * Refuses a profile value that holds a known credential shape anywhere: in a string, or in a key.
 * A value that is not JSON (a cycle) is left to the check that refuses it with its path.
 * @throws ProfileError at the key (for a key, at its parent), never quoting the value
 */
export function refuseCredentials(value: unknown, source: ProfileSource, keys: KeyPath): void {
  walkForCredentials(value, source, [...keys], new Set());
}

function walkForCredentials(value: unknown, source: ProfileSource, keys: (string | number)[], enclosing: Set<object>): void {
  if (typeof value === 'string') {
    const shape = credentialShape(value);
    if (shape !== null) throw profileError(source, keys, `holds what looks like ${shape}: a profile names secrets by ref (env:NAME), never holds one`);
    return;
  }
  if (value === null || typeof value !== 'object' || enclosing.has(value)) return;
  enclosing.add(value);
  const entries: [string | number, unknown][] = Array.isArray(value) ? value.map((item, i) => [i, item]) : Object.entries(value);
  for (const [key, item] of entries) {
    const shape = typeof key === 'string' ? credentialShape(key) : null;
    if (shape !== null) throw profileError(source, keys, `has a key that looks like ${shape}: a profile names secrets by ref (env:NAME), never holds one`);
    keys.push(key);
    walkForCredentials(item, source, keys, enclosing);
    keys.pop();
  }
  enclosing.delete(value);
}
