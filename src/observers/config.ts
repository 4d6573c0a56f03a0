/**
 * The `config` of an observer entry, checked key by key: an unknown key or a value of the wrong
 * type is a {@link ProfileError} naming the file, line and key (a typo must not quietly turn a
 * check off, as it did in Aura).
 */

import type { ProfileError } from '../errors.js';
import { profileError, type KeyPath, type ProfileSource } from '../policy/profile-source.js';

/** A preset's config with typed readers; each reader checks its key and applies its default. */
export class PresetConfig {
  private constructor(
    readonly values: Readonly<Record<string, unknown>>,
    private readonly source: ProfileSource,
    private readonly keys: KeyPath,
  ) {}

  /**
   * Checks that `value` is a mapping of known keys.
   * @throws ProfileError for anything else
   */
  static read(value: unknown, known: readonly string[], source: ProfileSource, keys: KeyPath): PresetConfig {
    if (value === undefined || value === null) return new PresetConfig({}, source, keys);
    if (typeof value !== 'object' || Array.isArray(value)) throw profileError(source, keys, `expected a mapping with the keys ${known.join(', ')}`);
    const values = value as Record<string, unknown>;
    for (const key of Object.keys(values)) {
      if (!known.includes(key)) throw profileError(source, [...keys, key], `unknown config key; expected ${known.join(', ')}`);
    }
    return new PresetConfig(values, source, keys);
  }

  /** A ProfileError at one key of this config. */
  error(key: string | KeyPath, message: string): ProfileError {
    return profileError(this.source, [...this.keys, ...(typeof key === 'string' ? [key] : key)], message);
  }

  has(key: string): boolean {
    return this.values[key] !== undefined && this.values[key] !== null;
  }

  /** An integer >= 0 (0 usually means off). */
  count(key: string, fallback: number): number {
    const value = this.values[key] ?? fallback;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) throw this.error(key, `expected an integer >= 0, got ${JSON.stringify(value)}`);
    return value;
  }

  /** A number > 0. */
  positive(key: string, fallback: number): number {
    const value = this.values[key] ?? fallback;
    if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) throw this.error(key, `expected a number > 0, got ${JSON.stringify(value)}`);
    return value;
  }

  /** A number in (0, 1]. */
  ratio(key: string, fallback: number): number {
    const value = this.positive(key, fallback);
    if (value > 1) throw this.error(key, `expected a number in (0, 1], got ${value}`);
    return value;
  }

  flag(key: string, fallback: boolean): boolean {
    const value = this.values[key] ?? fallback;
    if (typeof value !== 'boolean') throw this.error(key, `expected true or false, got ${JSON.stringify(value)}`);
    return value;
  }

  /** A non-empty string, or the fallback. */
  text(key: string, fallback: string | null): string | null {
    const value = this.values[key] ?? fallback;
    if (value !== null && (typeof value !== 'string' || value.trim() === '')) throw this.error(key, `expected a non-empty string, got ${JSON.stringify(value)}`);
    return value;
  }

  /** A list of non-empty strings. */
  texts(key: string, fallback: readonly string[]): readonly string[] {
    const value = this.values[key] ?? fallback;
    if (!Array.isArray(value)) throw this.error(key, 'expected a list of strings');
    value.forEach((item, i) => {
      if (typeof item !== 'string' || item.trim() === '') throw this.error([key, i], 'expected a non-empty string');
    });
    return value as string[];
  }
}
