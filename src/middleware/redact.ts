/**
 * Secret redaction, on every emit (reference §11.6): the value of a secret-like key, at any
 * depth, is recorded as `[redacted]`, and so is a value a secret-like name is given beside
 * (`{name: 'DB_PASSWORD', value: …}`, `['DB_PASSWORD', …]`); a secret value the session injected
 * into a tool call is scrubbed from every recorded string, object keys and ids included. Every
 * recorded string and key also has the credentials it holds as text replaced
 * ({@link redactCredentials}): a command, a file a tool read or an answer it gave is free text
 * that no key names, and a map keyed by token is a key that is one. It runs inside the canonical
 * walk (spine/canonical.ts), so it costs no second pass over the payload.
 *
 * This module is the session's redactor; which values a name marks is secret-values.ts, the forms
 * of an injected value secret-forms.ts, and credentials in free text credential-text.ts.
 */

import { CredentialTexts } from './credential-text.js';
import { formsOf, patternsOf, replaced, type FormsPatterns, type SecretForms } from './secret-forms.js';
import { isSecretLikeKey } from './secret-names.js';
import { keepsValue, namedSecretKey, secretItems } from './secret-values.js';
import { freeKey, type Redactor } from '../spine/redactor.js';
import { MAX_DEPTH } from '../spine/canonical.js';

// Values a session's tools printed as secrets that it keeps scrubbing: the last ones.
const MAX_PRINTED = 32;

// Keys whose scrubbed form is kept, per redactor (forgotten when a secret is added).
const KEY_CACHE_LIMIT = 10_000;

/** The redactor of one session: secret-like keys, the secret values it has injected so far, and those its tools printed. */
export class SessionRedactor implements Redactor {
  /** Injected: kept out of the record and out of what a tool's caller gets. */
  private injected: SecretForms[] = [];
  /** Printed by a tool at the agent's asking: kept out of the record only. */
  private printed: SecretForms[] = [];
  /** The injected values' forms, and those with the printed values': each reading of a string is searched once for all of them. */
  private injectedPatterns: FormsPatterns | null = null;
  private scrubbedPatterns: FormsPatterns | null = null;
  /** Every form of them as written, for a text whose end may be the start of one. */
  private scrubbedForms: readonly string[] = [];
  private readonly keys = new Map<string, string>();
  private readonly credentials = new CredentialTexts();

  secretKey(key: string): boolean {
    return isSecretLikeKey(key);
  }

  namedSecretKey(record: Readonly<Record<string, unknown>>, keys: readonly string[]): string | null {
    return namedSecretKey(record, keys);
  }

  secretItems(array: readonly unknown[]): ReadonlySet<number> | null {
    return secretItems(array);
  }

  keepsValue(value: unknown): boolean {
    return keepsValue(value);
  }

  /**
   * Remembers a value that must never be recorded (and its prefixed form, such as `Bearer …`), and
   * the forms a tool writes it back in ({@link formsOf}). Each value's forms are made once: a
   * capability injects the same value into every call.
   */
  addSecret(value: string): void {
    const forms = this.injected.some((known) => known.value === value) ? null : formsOf(value);
    if (forms === null) return;
    this.injected = [...this.injected, forms];
    this.injectedPatterns = patternsOf(this.injected);
    this.scrubbedChanged();
  }

  /**
   * Remembers values a tool printed as a secret (printed-secrets.ts), in their forms as
   * {@link addSecret} takes them: never recorded from now on, still given to the caller. Every
   * recorded string is looked through for each, so the last {@link MAX_PRINTED} values are kept.
   */
  addPrinted(values: readonly string[]): void {
    const fresh = values.flatMap((value) => (this.knows(value) ? [] : (formsOf(value) ?? [])));
    if (fresh.length === 0) return;
    this.printed = [...this.printed, ...fresh].slice(-MAX_PRINTED);
    this.scrubbedChanged();
  }

  private knows(value: string): boolean {
    return this.injected.some((known) => known.value === value) || this.printed.some((known) => known.value === value);
  }

  private scrubbedChanged(): void {
    const all = [...this.injected, ...this.printed];
    this.scrubbedPatterns = patternsOf(all);
    this.scrubbedForms = all.flatMap((forms) => [...forms.text, ...forms.encoded]);
    this.keys.clear();
  }

  /**
   * `value` with every secret the session injected replaced, as the caller of a tool gets its
   * answer: the secret was given to the tool, never to the model's side. Strings, arrays and plain
   * objects are copied where they hold one; anything else is handed on as it is.
   */
  withoutInjected<T>(value: T): T {
    return this.injectedPatterns === null ? value : (this.injectedOut(value, 0, false) as T);
  }

  /**
   * {@link withoutInjected} for what is passed on whole or not at all (what a relay hands on
   * besides a tool's answer): undefined once the session has injected a secret, when `value`
   * holds what the walk cannot look into, nested deeper than a record may be or an object that is
   * not plain data.
   */
  withoutInjectedWhole<T>(value: T): T | undefined {
    if (this.injectedPatterns === null) return value;
    try {
      return this.injectedOut(value, 0, true) as T;
    } catch (error) {
      if (error instanceof NotWalked) return undefined;
      throw error;
    }
  }

  /**
   * Walked no deeper than a record may nest: an answer the trail could not hold (a cycle) is still
   * handed back, unless it must be walked `whole`.
   * @throws NotWalked, when `whole`, at what is left unwalked
   */
  private injectedOut(value: unknown, depth: number, whole: boolean): unknown {
    if (typeof value === 'string') return replaced(value, this.injectedPatterns);
    if (depth > MAX_DEPTH) return unwalked(value, whole);
    if (Array.isArray(value)) {
      const items = value.map((item) => this.injectedOut(item, depth + 1, whole));
      return items.some((item, i) => item !== value[i]) ? items : value;
    }
    if (value === null || typeof value !== 'object') return value;
    const proto = Object.getPrototypeOf(value) as unknown;
    if (proto !== Object.prototype && proto !== null) return unwalked(value, whole);
    let changed = false;
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      const scrubbed = replaced(key, this.injectedPatterns);
      // As in the record: keys that come out alike are kept apart.
      const name = scrubbed === key ? key : freeKey(scrubbed, (candidate) => Object.hasOwn(out, candidate) || Object.hasOwn(value, candidate));
      const kept = this.injectedOut(item, depth + 1, whole);
      changed ||= name !== key || kept !== item;
      Object.defineProperty(out, name, { value: kept, enumerable: true, writable: true, configurable: true });
    }
    return changed ? out : value;
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
    return this.credentials.redact(replaced(text, this.scrubbedPatterns));
  }

  /**
   * {@link scrub} for the start of a text whose rest is still to come (a log line cut where it
   * runs over a limit): `scrubbed`, the text up to an end that a secret the rest completes may
   * begin, scrubbed; and `rest`, that end, to go before the rest. Each piece is then scrubbed with
   * every secret whole in it.
   */
  scrubStart(text: string): { readonly scrubbed: string; readonly rest: string } {
    const cleared = replaced(text, this.scrubbedPatterns);
    let open = 0;
    for (const form of this.scrubbedForms) {
      for (let length = Math.min(form.length - 1, cleared.length); length > open; length--) {
        if (cleared.endsWith(form.slice(0, length))) {
          open = length;
          break;
        }
      }
    }
    const cut = cleared.length - open;
    return { scrubbed: this.credentials.redact(cleared.slice(0, cut)), rest: cleared.slice(cut) };
  }
}

/**
 * What a host that passes on more of a tool server's traffic than its answers (`aura proxy`: its
 * errors, notifications and requests, its stderr) asks of the session's redactor.
 */
export type RelayScrubber = Pick<SessionRedactor, 'withoutInjected' | 'withoutInjectedWhole' | 'scrub' | 'scrubStart'>;

/** Thrown inside a walk that must be whole, at what it cannot look into. */
class NotWalked extends Error {}

/** `value`, left unwalked where the walk need not be whole. */
function unwalked(value: unknown, whole: boolean): unknown {
  if (whole) throw new NotWalked();
  return value;
}
