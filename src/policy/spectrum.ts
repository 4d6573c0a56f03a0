/**
 * Spectrum levels (reference §9): how much a profile enforces rather than only audits.
 * `low` records capability misses without stopping the call; `mid` (the default) enforces the
 * declared rules; `high` adds an allow list of the declared skills and capability tools, wires the
 * schema refs and requires a verified operator; `full` adds that every tool call belongs to a step.
 */

import { profileError, type KeyPath, type ProfileSource } from './profile-source.js';

/** A spectrum level. */
export type SpectrumLevel = 'low' | 'mid' | 'high' | 'full';

/** The levels, lowest first. */
export const SPECTRUM_LEVELS: readonly SpectrumLevel[] = ['low', 'mid', 'high', 'full'];

/** A parsed `spectrum` block. */
export interface Spectrum {
  readonly level: SpectrumLevel;
  /** Declared services (`audit` is always implicit and left out). */
  readonly services: readonly string[];
  readonly servicesDeclared: boolean;
  readonly identity_required: boolean | null;
  readonly schema_enforcement: boolean;
  readonly strict_services: boolean;
  readonly service_config: Readonly<Record<string, unknown>>;
}

/** How the spectrum's services were wired (the `services_activation` block of `session.open`). */
export interface ServiceActivation {
  readonly activated: readonly string[];
  readonly skipped_explicit: readonly string[];
  readonly unknown: readonly string[];
}

const SPECTRUM_KEYS: readonly string[] = ['level', 'services', 'output', 'budgets', 'identity_required', 'service_config', 'strict_services', 'schema_enforcement'];

// What a `spectrum` value must be, said when it is not a mapping (`spectrum: high`).
const SPECTRUM_EXPECTED = `expected a mapping with the keys ${SPECTRUM_KEYS.join(', ')} (for a level alone: spectrum: {level: high})`;
const COATS: Readonly<Record<SpectrumLevel, string>> = { low: 'loose', mid: 'tight', high: 'tight', full: 'tailored' };
const DEFAULT_SERVICES: Readonly<Record<SpectrumLevel, readonly string[]>> = { low: [], mid: [], high: ['monitor'], full: ['monitor', 'break'] };

/**
 * Parses a profile's `spectrum` block; null when there is none (then `mid` semantics).
 * @throws ProfileError for an unknown key or level
 */
export function parseSpectrum(value: unknown, source: ProfileSource, keys: KeyPath): Spectrum | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) throw profileError(source, keys, SPECTRUM_EXPECTED);
  const block = value as Record<string, unknown>;
  for (const key of Object.keys(block)) if (!SPECTRUM_KEYS.includes(key)) throw profileError(source, [...keys, key], `unknown spectrum key; expected ${SPECTRUM_KEYS.join(', ')}`);
  const rawLevel = block['level'] ?? 'mid';
  const level = typeof rawLevel === 'string' ? rawLevel.toLowerCase() : rawLevel;
  if (!(SPECTRUM_LEVELS as readonly unknown[]).includes(level)) throw profileError(source, [...keys, 'level'], `expected one of ${SPECTRUM_LEVELS.join(', ')}`);
  const services = block['services'];
  if (services !== undefined && (!Array.isArray(services) || services.some((s) => typeof s !== 'string'))) throw profileError(source, [...keys, 'services'], 'expected a list of service names');
  for (const flag of ['identity_required', 'schema_enforcement', 'strict_services']) {
    if (block[flag] !== undefined && typeof block[flag] !== 'boolean') throw profileError(source, [...keys, flag], 'expected true or false');
  }
  const declared = services === undefined ? DEFAULT_SERVICES[level as SpectrumLevel] : (services as string[]);
  return {
    level: level as SpectrumLevel,
    services: [...new Set(declared.map((s) => s.trim().toLowerCase().replaceAll('-', '_')).filter((s) => s !== 'audit'))],
    servicesDeclared: services !== undefined,
    identity_required: typeof block['identity_required'] === 'boolean' ? block['identity_required'] : null,
    schema_enforcement: block['schema_enforcement'] !== false,
    strict_services: block['strict_services'] === true,
    service_config: (block['service_config'] as Record<string, unknown> | undefined) ?? {},
  };
}

/** The effective level: the declared one, or `mid`. */
export function levelOf(spectrum: Spectrum | null): SpectrumLevel {
  return spectrum?.level ?? 'mid';
}

/** At or above `high`. */
export function isStrict(level: SpectrumLevel): boolean {
  return level === 'high' || level === 'full';
}

/** The rules a level adds (reference §9.3), tagged `source: spectrum`. */
export function spectrumRules(spectrum: Spectrum | null, allowList: readonly string[]): Record<string, unknown>[] {
  if (spectrum === null || !isStrict(spectrum.level)) return [];
  const rules: Record<string, unknown>[] = [];
  if (allowList.length > 0) rules.push({ type: 'allow_tools', tools: [...new Set(allowList)], source: 'spectrum', level: spectrum.level });
  if (spectrum.level === 'full') rules.push({ type: 'sequencer_required', source: 'spectrum', level: spectrum.level });
  return rules;
}

/** The `spectrum` block of `session.open` (reference §9.5); `membrane.ingress` takes its first four keys. */
export function spectrumSummary(
  spectrum: Spectrum | null,
  extra: { enforcementRuleCount: number; identity: { required: boolean; source: string }; activation: ServiceActivation },
): Record<string, unknown> {
  const level = levelOf(spectrum);
  const services = spectrum?.services ?? [];
  return {
    level,
    coat: COATS[level],
    services: [...services],
    planes: { audit: true, enforce: level !== 'low', escalate: isStrict(level) || services.includes('break') },
    enforcement_rule_count: extra.enforcementRuleCount,
    services_activation:
      spectrum === null
        ? { audit: 'implicit', activated: [], skipped_explicit: [], unknown: [], declared: [], note: 'no spectrum block — service wiring skipped' }
        : {
            audit: spectrum.servicesDeclared ? 'declared_implicit' : 'implicit',
            activated: [...extra.activation.activated],
            skipped_explicit: [...extra.activation.skipped_explicit],
            unknown: [...extra.activation.unknown],
            declared: [...services],
          },
    verified_identity_required: extra.identity.required,
    verified_identity_required_source: extra.identity.source,
  };
}
