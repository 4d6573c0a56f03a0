/**
 * The egress half of a guarded tool call (reference §11.5): the live arguments the tool receives.
 * They start as a copy of the recorded arguments without any secret-like key (an agent-supplied
 * token is never a way in), then get the capability's secrets, resolved by the broker at the
 * moment of the call. The values are remembered so the redactor scrubs them from anything recorded.
 */

import { InvalidOptionError, SecretNotFoundError } from '../errors.js';
import { isSecretLikeKey } from '../middleware/secret-names.js';
import { setPath, type Capability } from '../policy/capabilities.js';
import { brokerSchemes, EnvSecretBroker, refScheme, type SecretBroker } from '../policy/secrets.js';

/** A deep copy of `value` without secret-like keys. */
export function withoutSecretKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutSecretKeys);
  if (value === null || typeof value !== 'object' || Object.getPrototypeOf(value) !== Object.prototype) return value;
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) if (!isSecretLikeKey(key)) copy[key] = withoutSecretKeys(item);
  return copy;
}

/** One secret written into the live arguments: its ref and target, never its value. */
export interface Injection {
  readonly secret_ref: string;
  readonly inject_as: string;
}

/**
 * Resolves the capability's secrets and writes them into `live`.
 * @param remember called with every value (and prefixed value) before it is written.
 * @throws SecretNotFoundError for the first ref the broker cannot resolve.
 */
export async function injectSecrets(
  capability: Capability,
  broker: SecretBroker | null,
  live: Record<string, unknown>,
  remember: (value: string) => void,
): Promise<Injection[]> {
  const injected: Injection[] = [];
  for (const target of capability.inject) {
    let value: string | undefined;
    try {
      value = broker === null ? undefined : await broker.resolve(target.ref);
    } catch {
      // A broker's own error text may quote what it looked up; the ref alone is reported.
      value = undefined;
    }
    if (typeof value !== 'string' || value === '') throw new SecretNotFoundError(target.ref, capability.id);
    remember(value);
    if (target.prefix !== '') remember(target.prefix + value);
    setPath(live, target.as, target.prefix + value);
    injected.push({ secret_ref: target.ref, inject_as: target.as });
  }
  return injected;
}

/**
 * The broker of a session: the one given (the session's, else the agent's), else the environment
 * when the profile names secrets, else none.
 * @throws InvalidOptionError, before anything is written, when the broker resolves no scheme of one of `refs`
 */
export function openBroker(given: SecretBroker | null | undefined, refs: readonly string[]): SecretBroker | null {
  if (given === undefined || given === null) return refs.length === 0 ? null : new EnvSecretBroker();
  const schemes = brokerSchemes(given);
  const unresolved = refs.find((ref) => !schemes.includes(refScheme(ref) ?? ''));
  if (unresolved !== undefined) throw new InvalidOptionError('secretBroker', `a broker of ${schemes.map((s) => `${s}:`).join(', ')} refs`, `a broker that declares the scheme of every secret ref the profile names, ${unresolved} among them`);
  return given;
}
