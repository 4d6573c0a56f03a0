/**
 * The `pii_mask` middleware: personal data in a payload is replaced before the payload is
 * hashed, so no trail, summary or span ever holds it. Three strategies:
 *
 * - `redact`: the value becomes its type, `[email]`;
 * - `mask`: a partial form that keeps what a reader needs to tell values apart without being able
 *   to re-identify anyone: `j***@e***.com`, `****-****-****-1111`, `DE** **** … **00`;
 * - `pseudonymize`: `email_3f9a1b2c4d5e`, the first 48 bits of HMAC-SHA256 under a deployment
 *   key over the normalised value. The same value gives the same token in every session with that
 *   key, so a trail can still be joined on it; without the key nothing maps back.
 *
 * Masking copies on write: an object with nothing to mask is returned as is, and a masked one is a
 * new value, so the caller's objects are never changed. The report says which entity types were
 * found, how many values were replaced and at which JSON paths, never what the values were.
 */

import { createHmac } from 'node:crypto';
import { InvalidOptionError } from '../errors.js';
import { freeKey } from '../spine/redactor.js';
import { isSecretLikeKey } from './secret-names.js';
import { replacePii, type PiiEntity, type PiiMatch } from './pii-detectors.js';

/** How a value is replaced. */
export type PiiStrategy = 'redact' | 'mask' | 'pseudonymize';

/** The strategies, in the profile's spelling. */
export const PII_STRATEGIES: readonly PiiStrategy[] = ['redact', 'mask', 'pseudonymize'];

/** What one masking of one value changed. */
export interface PiiReport {
  /** Values replaced, by entity type. */
  readonly entities_detected: Partial<Record<PiiEntity, number>>;
  /** Values replaced in all. */
  readonly redactions: number;
  /** The JSON paths of the strings changed (`args.contact.email`, `result.rows[2].note`). */
  readonly fields: readonly string[];
}

/** A masked value and its report (null when nothing was found). */
export interface Masked<T> {
  readonly value: T;
  readonly report: PiiReport | null;
}

// Deeper values are left for the canonical walk, which refuses them (and cycles) with a path.
const MAX_MASK_DEPTH = 500;
const TOKEN_HEX = 12;

/** Masks personal data with one strategy, over the entity types it was configured for. */
export class PiiMasker {
  private readonly entities: ReadonlySet<PiiEntity>;

  /**
   * @param key the pseudonymization key; required for `pseudonymize` and never recorded.
   */
  constructor(
    readonly strategy: PiiStrategy,
    entities: readonly PiiEntity[],
    private readonly key: string | null = null,
  ) {
    if (strategy === 'pseudonymize' && (key === null || key === '')) throw new InvalidOptionError('key', key, 'a non-empty key for strategy pseudonymize');
    this.entities = new Set(entities);
  }

  /** The text with every value found replaced, and what was found (by type, in `counts`). */
  maskText(text: string, counts: Map<PiiEntity, number>): string {
    return replacePii(text, this.entities, (match) => {
      counts.set(match.entity, (counts.get(match.entity) ?? 0) + 1);
      return this.replacement(match);
    });
  }

  /**
   * Masks every string inside `value`, object keys included (two keys that mask alike stay apart
   * as `[email]` and `[email]~2`). The values of secret-like keys are skipped: the canonical walk
   * records them as `[redacted]`.
   * @param root the name of the value in the report's paths (`args`, `result`; '' for a whole payload).
   */
  mask<T>(value: T, root: string): Masked<T> {
    const counts = new Map<PiiEntity, number>();
    const fields: string[] = [];
    const masked = this.walk(value, root, 0, counts, fields) as T;
    if (fields.length === 0) return { value, report: null };
    let redactions = 0;
    const entities: Partial<Record<PiiEntity, number>> = {};
    for (const [entity, count] of [...counts].sort(([a], [b]) => (a < b ? -1 : 1))) {
      entities[entity] = count;
      redactions += count;
    }
    return { value: masked, report: { entities_detected: entities, redactions, fields } };
  }

  private walk(value: unknown, path: string, depth: number, counts: Map<PiiEntity, number>, fields: string[]): unknown {
    if (typeof value === 'string') {
      const masked = this.maskText(value, counts);
      if (masked !== value) fields.push(path === '' ? '(root)' : path);
      return masked;
    }
    if (value === null || typeof value !== 'object' || depth >= MAX_MASK_DEPTH) return value;
    if (Array.isArray(value)) {
      let copy: unknown[] | null = null;
      for (let i = 0; i < value.length; i++) {
        const item: unknown = value[i];
        const masked = this.walk(item, `${path}[${i}]`, depth + 1, counts, fields);
        if (masked !== item) (copy ??= [...value])[i] = masked;
      }
      return copy ?? value;
    }
    if (Object.getPrototypeOf(value) !== Object.prototype && Object.getPrototypeOf(value) !== null) return value;
    const entries = Object.entries(value);
    // The entries as recorded, made on the first change (most objects have none).
    let copy: [string, unknown][] | null = null;
    for (let i = 0; i < entries.length; i++) {
      const [key, item] = entries[i] as [string, unknown];
      // A key can be personal data too (a map by e-mail); masked keys that collide get a suffix, so no entry is lost.
      const maskedKey = this.maskText(key, counts);
      const name = maskedKey === key ? key : freeKey(maskedKey, (candidate) => Object.hasOwn(value, candidate) || (copy ?? entries.slice(0, i)).some(([other]) => other === candidate));
      const at = path === '' ? name : `${path}.${name}`;
      if (name !== key) fields.push(`${at} (key)`);
      const masked = isSecretLikeKey(key) ? item : this.walk(item, at, depth + 1, counts, fields);
      if (copy === null && (name !== key || masked !== item)) copy = entries.slice(0, i);
      copy?.push([name, masked]);
    }
    return copy === null ? value : Object.fromEntries(copy);
  }

  private replacement(match: PiiMatch): string {
    switch (this.strategy) {
      case 'redact':
        return `[${match.entity}]`;
      case 'pseudonymize':
        return `${match.entity}_${createHmac('sha256', this.key ?? '').update(`${match.entity}:${normalised(match)}`).digest('hex').slice(0, TOKEN_HEX)}`;
      case 'mask':
        return partial(match);
    }
  }
}

/** The form of a value that makes two spellings of it one pseudonym. */
function normalised(match: PiiMatch): string {
  switch (match.entity) {
    case 'email':
      return match.text.toLowerCase();
    case 'phone':
      return `+${match.text.replace(/\D/g, '')}`;
    case 'payment_card':
    case 'iban':
      return match.text.replace(/[ -]/g, '').toUpperCase();
    case 'ip':
      return match.text.toLowerCase();
    default:
      return match.text;
  }
}

/** Every letter and digit after the first `keep` becomes `*`, except the last `tail`; separators stay. */
function starred(text: string, keep: number, tail: number): string {
  const alnum = text.replace(/[^A-Za-z0-9]/g, '').length;
  let seen = 0;
  let out = '';
  for (const char of text) {
    if (!/[A-Za-z0-9]/.test(char)) {
      out += char;
      continue;
    }
    out += seen < keep || seen >= alnum - tail ? char : '*';
    seen++;
  }
  return out;
}

const API_KEY_PREFIX = /^(?:sk-(?:proj-)?|[sr]k_(?:live|test)_|gh[pousr]_|github_pat_|AKIA|xox[abprs]-|AIza)/;

/** The partial form of `mask`: enough to tell values apart at a glance, too little to re-identify. */
function partial(match: PiiMatch): string {
  const text = match.text;
  switch (match.entity) {
    case 'email': {
      const at = text.lastIndexOf('@');
      const labels = text.slice(at + 1).split('.');
      return `${text.charAt(0)}***@${text.charAt(at + 1)}***.${labels[labels.length - 1] ?? ''}`;
    }
    case 'payment_card':
      return starred(text, 0, 4);
    case 'iban':
      return starred(text, 2, 2);
    case 'phone':
      return starred(text, 0, 2);
    case 'ip':
      return text.includes(':') ? `${text.slice(0, text.indexOf(':'))}:*:*` : `${text.slice(0, text.indexOf('.'))}.*.*.*`;
    case 'national_id':
      return starred(text, 0, 1);
    case 'api_key':
      return `${API_KEY_PREFIX.exec(text)?.[0] ?? ''}***`;
  }
}
