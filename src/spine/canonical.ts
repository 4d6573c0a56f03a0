/**
 * The canonical text of a value: exactly what CPython's
 * `json.dumps(value, sort_keys=True, ensure_ascii=False)` prints, because that is what Aura
 * hashes (DESIGN §2.2). With `asciiOnly` it is `ensure_ascii=True` (Aura's snapshot hash, §3.6).
 *
 * One recursive function, like sigstore's `canonicalize`, that also refuses anything Python
 * would hash differently. The rules for values that are not JSON, the same for hashing and for
 * writing, are:
 * - an object property whose value is `undefined` is left out (as `JSON.stringify` does);
 * - `undefined` in an array, holes, functions, symbols, BigInt, NaN, ±Infinity, lone surrogates,
 *   cycles, non-plain objects (Date, Map, class instances) and nesting deeper than
 *   {@link MAX_DEPTH} are refused with a {@link NonJsonValueError} naming the path.
 */

import { NonJsonValueError, type NonJsonValueData } from '../errors.js';
import { freeKey, REDACTED, type Redactor } from './redactor.js';
import { PythonNumber, pythonFloatRepr } from './python-number.js';

/** Python's own encoder and decoder stop near 1000 levels; we refuse well before that. */
export const MAX_DEPTH = 500;

/** Options of {@link canonicalJson}. */
export interface CanonicalOptions {
  /** Escape every character outside U+0020–U+007E, as `ensure_ascii=True` does. */
  readonly asciiOnly?: boolean;
  /** Redacts secret-like keys and scrubs secret values on the way (middleware/redact.ts). */
  readonly redact?: Redactor;
  /** Counts the object keys written, into `keys` (the fast trail reader's duplicate-key check). */
  readonly counter?: { keys: number };
  /**
   * How deep the value sits in the text it was read from (a record's payload: 1), so that
   * {@link MAX_DEPTH} counts from the same root as the lossless reader's.
   */
  readonly depth?: number;
}

/**
 * The canonical text of `value`.
 * @param root the name of the value in error messages (`payload` gives `payload.args[2]`).
 * @throws NonJsonValueError when the value is not JSON; nothing is half-done, as this is pure.
 */
export function canonicalJson(value: unknown, root = 'value', options: CanonicalOptions = {}): string {
  try {
    return write(value, options.depth ?? 0, { ascii: options.asciiOnly === true, redact: options.redact ?? null, counter: options.counter ?? null, ancestors: [] });
  } catch (error) {
    if (error instanceof Refusal) {
      const path = root + error.segments.map((s) => (typeof s === 'number' ? `[${s}]` : `.${s}`)).join('');
      // A path hundreds of levels deep says no more than its start and end.
      const named = path.length > MAX_PATH_SHOWN ? `${path.slice(0, MAX_PATH_SHOWN / 2)}…${path.slice(-MAX_PATH_SHOWN / 2)}` : path;
      throw new NonJsonValueError(`${named} is not JSON: ${error.message}`, { path: named, reason: error.reason });
    }
    if (error instanceof RangeError) {
      throw new NonJsonValueError(`${root} is not JSON: nested too deeply`, { path: root, reason: 'too_deep' });
    }
    throw error;
  }
}

const MAX_PATH_SHOWN = 160;

/** Thrown inside the walk; each level prepends its key on the way out, so success pays nothing. */
class Refusal extends Error {
  readonly segments: (string | number)[] = [];
  constructor(
    readonly reason: NonJsonValueData['reason'],
    message: string,
  ) {
    super(message);
  }
}

const REDACTED_TEXT = JSON.stringify(REDACTED);
// Only keys holding a surrogate can sort differently by code point than by UTF-16 unit.
const SURROGATE = /[\ud800-\udfff]/;
// JSON text holds no raw character below U+0020, so this is Python's `[^ -~]` escape set.
const NON_ASCII = /[\x7f-\uffff]/g;

/** What the walk carries down: its options, and the objects enclosing the current value. */
interface Walk {
  readonly ascii: boolean;
  readonly redact: Redactor | null;
  readonly counter: { keys: number } | null;
  readonly ancestors: object[];
}

function write(value: unknown, depth: number, walk: Walk): string {
  switch (typeof value) {
    case 'string':
      return quote(walk.redact === null ? value : walk.redact.scrub(value), walk.ascii);
    case 'number':
      return numberText(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      if (value === null) return 'null';
      if (value instanceof PythonNumber) return value.canonical;
      if (depth >= MAX_DEPTH) throw new Refusal('too_deep', `nested deeper than ${MAX_DEPTH} levels`);
      if (walk.ancestors.includes(value)) throw new Refusal('cycle', 'it refers back to an enclosing value (a cycle)');
      walk.ancestors.push(value);
      try {
        return Array.isArray(value) ? writeArray(value, depth, walk) : writeObject(value, depth, walk);
      } finally {
        walk.ancestors.pop();
      }
    case 'bigint':
      throw new Refusal('bigint', 'a BigInt; pass a number, or the digits as a string');
    case 'function':
      throw new Refusal('function', 'a function');
    case 'symbol':
      throw new Refusal('symbol', 'a symbol');
    default:
      throw new Refusal('undefined', 'undefined');
  }
}

function writeArray(array: readonly unknown[], depth: number, walk: Walk): string {
  if (array.length === 0) return '[]';
  // `['DB_PASSWORD', …]`, `['--password', …]`: a secret's value, as a secret-like key's is.
  const secrets = walk.redact === null ? null : walk.redact.secretItems(array);
  let text = '[';
  for (let i = 0; i < array.length; i++) {
    try {
      if (!(i in array)) throw new Refusal('undefined', 'a hole in an array');
      const item = array[i];
      text += (i === 0 ? '' : ', ') + (secrets?.has(i) === true && item !== undefined && walk.redact?.keepsValue(item) !== true ? REDACTED_TEXT : write(item, depth + 1, walk));
    } catch (error) {
      if (error instanceof Refusal) error.segments.unshift(i);
      throw error;
    }
  }
  return text + ']';
}

function writeObject(object: object, depth: number, walk: Walk): string {
  const prototype: unknown = Object.getPrototypeOf(object);
  if (prototype !== Object.prototype && prototype !== null) {
    const name = (object.constructor as { name?: unknown } | undefined)?.name;
    throw new Refusal('not_plain', `${typeof name === 'string' && name !== '' ? `an object of class ${name}` : 'an object that is not plain'}; pass a plain object or array`);
  }
  const record = object as Record<string, unknown>;
  const keys = sortedKeys(Object.keys(record));
  if (walk.counter !== null) walk.counter.keys += keys.length;
  const renamed = walk.redact === null ? null : scrubbedKeys(keys, record, walk.redact);
  // `{name: 'DB_PASSWORD', value: …}`: a value whose key is not a secret's, but whose name is.
  const namedSecret = walk.redact === null ? null : walk.redact.namedSecretKey(record, keys);
  const count = renamed === null ? keys.length : renamed.length;
  let text = '{';
  let first = true;
  for (let i = 0; i < count; i++) {
    const pair = renamed?.[i];
    const key = pair === undefined ? (keys[i] as string) : pair[1];
    const name = pair === undefined ? key : pair[0];
    const child = record[key];
    if (child === undefined) continue;
    try {
      // `"key": `, after `, ` but for the first: one string made once a key, and two joins a member.
      const member = walk.ascii ? `${first ? '' : ', '}${quote(name, true)}: ` : memberText(name, first);
      // A secret-like key keeps its place, so a reader sees that a value was there.
      const secret = walk.redact !== null && (key === namedSecret || walk.redact.secretKey(key) || (name !== key && walk.redact.secretKey(name))) && !walk.redact.keepsValue(child);
      const valueText = secret ? REDACTED_TEXT : write(child, depth + 1, walk);
      text += member;
      text += valueText;
    } catch (error) {
      if (error instanceof Refusal) error.segments.unshift(name);
      throw error;
    }
    first = false;
  }
  return text + '}';
}

/**
 * The keys of `record` as recorded, `[recorded, own]`, when scrubbing rewrites one, else null.
 * The text must be what Python prints for the recorded object, so the rewritten keys are sorted
 * again, and one that comes out like another key gets `~2`, `~3`, … in code-point order of the
 * keys as given (a stable rule: the same object always records the same way, and no entry is lost).
 */
function scrubbedKeys(keys: readonly string[], record: Readonly<Record<string, unknown>>, redact: Redactor): [string, string][] | null {
  // Most objects hold no secret in a key: they cost one cached look-up a key, and no array.
  if (keys.every((key) => redact.scrubKey(key) === key)) return null;
  const scrubbed = keys.map((key) => redact.scrubKey(key));
  const taken = new Set(keys.filter((key, i) => record[key] !== undefined && scrubbed[i] === key));
  const renamed: [string, string][] = [];
  keys.forEach((key, i) => {
    if (record[key] === undefined) return;
    let name = scrubbed[i] as string;
    if (name !== key) {
      name = freeKey(name, (candidate) => taken.has(candidate));
      taken.add(name);
    }
    renamed.push([name, key]);
  });
  return renamed.sort(([a], [b]) => compareCodePoints(a, b));
}

// Up to this many keys an object's keys are sorted by insertion, in place.
const INSERTION_SORT_KEYS = 16;

/**
 * Keys in Unicode code-point order (Python's), which equals UTF-16 order unless a key holds a
 * surrogate. Sorted in place: by insertion when they are few, as an event's objects' keys are
 * (`Array.prototype.sort` copies them into a work array first, and calls its comparison for each
 * pair: a ninth of an event's encoding, measured).
 */
export function sortedKeys(keys: string[]): string[] {
  if (keys.length > INSERTION_SORT_KEYS) keys.sort();
  else {
    for (let i = 1; i < keys.length; i++) {
      const key = keys[i] as string;
      let at = i;
      for (; at > 0 && (keys[at - 1] as string) > key; at--) keys[at] = keys[at - 1] as string;
      keys[at] = key;
    }
  }
  for (const key of keys) {
    if (keyFacts(key).surrogate) return keys.sort(compareCodePoints);
  }
  return keys;
}

interface KeyFacts {
  /** Filled on first use inside the walk, so a key that cannot be quoted fails where its path is known. */
  quoted: string | null;
  /** `"key": ` and `, "key": `, as {@link quoted}. */
  first: string | null;
  next: string | null;
  readonly surrogate: boolean;
}

// Payload keys repeat from event to event: each key is quoted and checked once. Bounded, so a
// stream of unique keys costs memory only up to the bound.
const keyCache = new Map<string, KeyFacts>();
const KEY_CACHE_LIMIT = 10_000;

function keyFacts(key: string): KeyFacts {
  let facts = keyCache.get(key);
  if (facts === undefined) {
    facts = { quoted: null, first: null, next: null, surrogate: SURROGATE.test(key) };
    if (keyCache.size < KEY_CACHE_LIMIT) keyCache.set(key, facts);
  }
  return facts;
}

function quotedKey(key: string): string {
  const facts = keyFacts(key);
  facts.quoted ??= quote(key, false);
  return facts.quoted;
}

/** An object member's text up to its value: the key quoted, after `, ` unless it is the first. */
function memberText(key: string, first: boolean): string {
  const facts = keyFacts(key);
  if (first) return (facts.first ??= `${quotedKey(key)}: `);
  return (facts.next ??= `, ${quotedKey(key)}: `);
}

/** Code-point comparison of two strings. */
export function compareCodePoints(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.codePointAt(i) ?? 0;
    const y = b.codePointAt(i) ?? 0;
    if (x !== y) return x - y;
    if (x > 0xffff) i++;
  }
  return a.length - b.length;
}

// Printable ASCII without quote or backslash: quoting changes nothing inside. Testing for it is
// about twice as fast as isWellFormed + JSON.stringify on the short strings of a trail.
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** JSON.stringify escapes exactly as Python does with `ensure_ascii=False`, once lone surrogates are ruled out. */
function quote(text: string, ascii: boolean): string {
  if (PLAIN.test(text)) return `"${text}"`;
  if (!text.isWellFormed()) {
    throw new Refusal('lone_surrogate', 'a string with a lone surrogate (not valid Unicode; Python cannot encode it)');
  }
  const quoted = JSON.stringify(text);
  return ascii ? escapeNonAscii(quoted) : quoted;
}

/** Escapes every UTF-16 unit outside ASCII (and DEL) in a JSON text, as Python's `ensure_ascii=True`. */
export function escapeNonAscii(jsonText: string): string {
  return jsonText.replace(NON_ASCII, escapeUnit);
}

function escapeUnit(unit: string): string {
  return `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/** An integral JS number below 1e21 is a Python int; any other finite number is a float. */
function numberText(value: number): string {
  if (Number.isInteger(value) && Math.abs(value) < 1e21) return String(value);
  if (!Number.isFinite(value)) throw new Refusal('non_finite', `${String(value)} (JSON has no non-finite numbers)`);
  return pythonFloatRepr(value);
}
