/**
 * The profile's `middleware` block and what a session makes of it at open:
 *
 * ```yaml
 * middleware:
 *   pii_mask:
 *     strategy: mask                 # redact | mask | pseudonymize (default mask)
 *     entities: [email, phone]       # default: all
 *     boundaries: [tool.args, tool.result]   # default; 'emit' = every host-emitted payload
 *     key: env:AURA_PII_KEY          # pseudonymize only: a secret ref, never the key
 * ```
 *
 * A profile without the block costs nothing: the session holds no masker and never walks a
 * payload twice.
 */

import { InvalidOptionError, SecretNotFoundError } from '../errors.js';
import { secretRefProblem, type SecretBroker } from '../policy/secrets.js';
import { profileError, type KeyPath, type ProfileSource } from '../policy/profile-source.js';
import { PII_ENTITIES, type PiiEntity } from './pii-detectors.js';
import { PII_STRATEGIES, PiiMasker, type PiiStrategy } from './pii-mask.js';

/** Where `pii_mask` applies: a guarded call's arguments, its result (and error), or every payload the host emits. */
export type PiiBoundary = 'tool.args' | 'tool.result' | 'emit';

/** The boundaries, in the profile's spelling. */
export const PII_BOUNDARIES: readonly PiiBoundary[] = ['tool.args', 'tool.result', 'emit'];

/** The middleware ops a sequencer step may name. */
export const MIDDLEWARE_OPS = ['pii_mask'] as const;

/** The declared `pii_mask` settings. */
export interface PiiMaskConfig {
  readonly strategy: PiiStrategy;
  readonly entities: readonly PiiEntity[];
  readonly boundaries: readonly PiiBoundary[];
  /** The secret ref of the pseudonymization key, or null. */
  readonly key: string | null;
}

/** The declared middleware of a profile. */
export interface MiddlewareConfig {
  readonly pii_mask: PiiMaskConfig | null;
}

/** What a profile without a `middleware` block declares. */
export const NO_MIDDLEWARE: MiddlewareConfig = { pii_mask: null };

/** The settings a sequencer step's `middleware: [pii_mask]` uses when the profile declares none. */
export const DEFAULT_PII_MASK: PiiMaskConfig = { strategy: 'mask', entities: PII_ENTITIES, boundaries: ['tool.args', 'tool.result'], key: null };

const PII_KEYS = ['strategy', 'entities', 'boundaries', 'key'];

/**
 * The config key `pii_key`: the secret ref of the pseudonymization key for every profile that
 * pseudonymizes without naming its own, so one deployment key can live outside the profiles.
 * @param schemes the schemes of secret refs the agent's broker resolves
 * @throws InvalidOptionError (never quoting the value: it may be the key itself) when it is not a ref
 */
export function configKeyRef(value: unknown, schemes: readonly string[]): string | null {
  if (value === undefined || value === null) return null;
  const problem = typeof value === 'string' ? secretRefProblem(value, schemes) : 'is not a string';
  if (problem !== null) throw new InvalidOptionError('pii_key', '(not shown)', `a secret ref such as env:AURA_PII_KEY, never the key itself (the value ${problem})`);
  return value as string;
}

/**
 * Parses the `middleware` block.
 * @param schemes the schemes of secret refs the agent's broker resolves
 * @param configKey the config's `pii_key` ref, used when `pseudonymize` names no key of its own.
 * @throws ProfileError naming the file, line and key of the first problem
 */
export function parseMiddleware(value: unknown, source: ProfileSource, keys: KeyPath, schemes: readonly string[], configKey: string | null = null): MiddlewareConfig {
  if (value === undefined || value === null) return NO_MIDDLEWARE;
  if (typeof value !== 'object' || Array.isArray(value)) throw profileError(source, keys, 'expected a mapping of middleware ops (pii_mask)');
  const block = value as Record<string, unknown>;
  for (const key of Object.keys(block)) {
    if (!(MIDDLEWARE_OPS as readonly string[]).includes(key)) throw profileError(source, [...keys, key], `unknown middleware op; expected one of ${MIDDLEWARE_OPS.join(', ')}`);
  }
  const pii = block['pii_mask'];
  return pii === undefined ? NO_MIDDLEWARE : { pii_mask: parsePiiMask(pii, source, [...keys, 'pii_mask'], schemes, configKey) };
}

function parsePiiMask(value: unknown, source: ProfileSource, keys: KeyPath, schemes: readonly string[], configKey: string | null): PiiMaskConfig {
  if (value === null || value === true) return DEFAULT_PII_MASK;
  if (typeof value !== 'object' || Array.isArray(value)) throw profileError(source, keys, 'expected a mapping with strategy, entities, boundaries, key');
  const entry = value as Record<string, unknown>;
  for (const key of Object.keys(entry)) if (!PII_KEYS.includes(key)) throw profileError(source, [...keys, key], `unknown key for pii_mask; expected one of ${PII_KEYS.join(', ')}`);
  const strategy = entry['strategy'] ?? 'mask';
  if (!(PII_STRATEGIES as readonly unknown[]).includes(strategy)) throw profileError(source, [...keys, 'strategy'], `expected one of ${PII_STRATEGIES.join(', ')}`);
  const entities = listOf(entry['entities'], PII_ENTITIES, source, [...keys, 'entities']);
  const boundaries = listOf(entry['boundaries'], DEFAULT_PII_MASK.boundaries, source, [...keys, 'boundaries'], PII_BOUNDARIES);
  const declared = entry['key'] ?? null;
  if (declared !== null) {
    const problem = typeof declared === 'string' ? secretRefProblem(declared, schemes) : 'is not a string';
    if (problem !== null) throw profileError(source, [...keys, 'key'], `expected a secret ref such as env:AURA_PII_KEY, never the key itself: the value ${problem}`);
    if (strategy !== 'pseudonymize') throw profileError(source, [...keys, 'key'], 'a key is only used by strategy pseudonymize');
  }
  const key = strategy === 'pseudonymize' ? ((declared as string | null) ?? configKey) : null;
  if (strategy === 'pseudonymize' && key === null) throw profileError(source, [...keys, 'key'], 'strategy pseudonymize needs a key: a secret ref such as env:AURA_PII_KEY, here or as the config key pii_key');
  return { strategy: strategy as PiiStrategy, entities, boundaries, key };
}

function listOf<T extends string>(value: unknown, fallback: readonly T[], source: ProfileSource, keys: KeyPath, allowed: readonly T[] = fallback): readonly T[] {
  if (value === undefined || value === null) return fallback;
  if (!Array.isArray(value)) throw profileError(source, keys, `expected a list of ${allowed.join(', ')}`);
  value.forEach((item, i) => {
    if (!(allowed as readonly unknown[]).includes(item)) throw profileError(source, [...keys, i], `expected one of ${allowed.join(', ')}`);
  });
  return [...new Set(value as T[])];
}

/** The masking a session applies: a masker, and where the profile asked for it. */
export interface SessionPii {
  readonly masker: PiiMasker;
  readonly boundaries: ReadonlySet<PiiBoundary>;
}

/**
 * The session's masking, with the pseudonymization key resolved now: a key that is missing fails
 * the session at open, not at the first value it would have masked.
 * @param config the profile's settings, or the step default when only sequencer steps ask for it.
 * @param remember called with the key, so the session scrubs it from anything recorded.
 * @throws SecretNotFoundError (`data.used_for` = `middleware.pii_mask.key`), InvalidOptionError for a broker that answers asynchronously
 */
export function openPiiMasking(config: PiiMaskConfig, broker: SecretBroker | null, remember: (secret: string) => void): SessionPii {
  let key: string | null = null;
  if (config.key !== null) {
    let resolved: unknown;
    try {
      resolved = broker?.resolve(config.key);
    } catch {
      // A broker's own error text may quote what it looked up; the ref alone is reported.
      resolved = undefined;
    }
    if (resolved instanceof Promise) {
      resolved.catch(() => undefined);
      throw new InvalidOptionError('secretBroker', 'a broker answering with a promise', 'a broker that resolves the pii_mask key synchronously (a session opens synchronously)');
    }
    if (typeof resolved !== 'string' || resolved === '') throw new SecretNotFoundError(config.key, null, 'middleware.pii_mask.key');
    key = resolved;
    remember(key);
  }
  return { masker: new PiiMasker(config.strategy, config.entities, key), boundaries: new Set(config.boundaries) };
}
