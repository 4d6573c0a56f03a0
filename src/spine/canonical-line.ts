/**
 * Proves, in one pass over a trail line and without building a value, that the line is laid out
 * exactly as aura writes it: the 15 record keys in {@link RECORD_KEYS} order, and every value
 * already in its canonical text (DESIGN §2.2). The canonical text of a value is then its slice of
 * the line, so the hashed body is assembled from slices instead of parsed and re-serialised.
 *
 * The slice is only taken as canonical when it is a fixed point of CPython's
 * `json.dumps(json.loads(slice), sort_keys=True, ensure_ascii=False)`; anything this scan is not
 * sure of is refused (false), and the caller reads the line losslessly. What is accepted:
 * - separators exactly `, ` and `: `, no other white space outside strings;
 * - at each object level, keys strictly increasing: sorted as Python sorts, and no duplicate.
 *   Keys are compared by UTF-16 unit, which is code-point order for keys without surrogates; a
 *   key holding a surrogate or any escape is refused, so its raw text is its value;
 * - strings escaped exactly as `json.dumps` escapes them: `\"`, `\\`, `\n`, `\r`, `\t`, `\b`,
 *   `\f`, `\u00xx` (lowercase) for the other characters below U+0020, everything else raw;
 *   surrogates only in well-formed pairs;
 * - numbers that Python prints as they stand and that `JSON.parse` reads as the lossless reader
 *   does: integers `-?(0|[1-9]\d*)` of at most 15 digits but not `-0`; non-integral floats in
 *   fixed notation that are Python's `repr` of themselves, with at most 15 digits on either side
 *   of the point (the numbers fast-record.ts leaves to the lossless reader are refused here too);
 * - `true`, `false`, `null`; nesting at most {@link MAX_SCAN_DEPTH} deep.
 * So an accepted line parses with `JSON.parse` to the values the lossless reader gives, and the
 * canonical text of each value is its slice. test/spine/reader-layouts.test.ts (adversarial
 * layouts) and test/spine/fast-reader-fuzz.test.ts (seeded mutations of real lines) hold both to
 * the lossless reader.
 */

import { decodeJsonString } from './json-reader.js';
import { pythonFloatRepr } from './python-number.js';
import { RECORD_KEYS } from './record.js';

/** Deeper values are left to the lossless reader, which holds the real limit. */
const MAX_SCAN_DEPTH = 64;
/** Longer digit runs are numbers a JS number may misread (as fast-record.ts's LOSSY_NUMBER). */
const MAX_DIGITS = 15;
// What makes a string need the careful scan: a character below U+0020 (raw, it is not JSON) or a surrogate.
// eslint-disable-next-line no-control-regex -- raw control characters are what this looks for
const SPECIAL = /[\u0000-\u001f\ud800-\udfff]/;

// Character codes as plain constants: a `const enum` is an object lookup under isolatedModules.
const SPACE = 0x20;
const QUOTE = 0x22;
const COMMA = 0x2c;
const MINUS = 0x2d;
const DOT = 0x2e;
const ZERO = 0x30;
const ONE = 0x31;
const NINE = 0x39;
const COLON = 0x3a;
const OPEN_BRACKET = 0x5b;
const BACKSLASH = 0x5c;
const CLOSE_BRACKET = 0x5d;
const LOWER_A = 0x61;
const LOWER_B = 0x62;
const LOWER_F = 0x66;
const LOWER_N = 0x6e;
const LOWER_R = 0x72;
const LOWER_T = 0x74;
const LOWER_U = 0x75;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/** What a record value may be: its first character tells. */
const enum Slot {
  String,
  StringOrNull,
  Object,
}

/** The text before each record value (`{"event_id": `, then `, "parent_id": `, …) and its type. */
const PREFIXES = RECORD_KEYS.map((key, i) => `${i === 0 ? '{' : ', '}"${key}": `);
/** The record keys whose value is an object. */
export const OBJECT_KEYS: ReadonlySet<string> = new Set(['agent_ids', 'payload', 'telemetry']);
/** The record keys whose value is a string or null; the others hold a string. */
export const NULLABLE_KEYS: ReadonlySet<string> = new Set(['parent_id', 'span_id', 'step_id', 'task_id', 'prev_hash']);
const SLOTS: readonly Slot[] = RECORD_KEYS.map((key) => (OBJECT_KEYS.has(key) ? Slot.Object : NULLABLE_KEYS.has(key) ? Slot.StringOrNull : Slot.String));
const INDEX = Object.fromEntries(RECORD_KEYS.map((key, i) => [key, i])) as Readonly<Record<RecordKey, number>>;

type RecordKey = (typeof RECORD_KEYS)[number];

/** A line read as canonical: where each record value lies in it, kept for the next line to reuse. */
export class CanonicalLine {
  private text = '';
  private readonly starts = new Int32Array(RECORD_KEYS.length);
  private readonly ends = new Int32Array(RECORD_KEYS.length);
  /** Per open container of the value being scanned: an object (1) or an array (0), and its last key. */
  private readonly objects = new Uint8Array(MAX_SCAN_DEPTH + 1);
  private readonly keyStarts = new Int32Array(MAX_SCAN_DEPTH + 1);
  private readonly keyEnds = new Int32Array(MAX_SCAN_DEPTH + 1);
  /** The line holds no backslash, control character or surrogate: its strings end at the next quote. */
  private plain = false;

  /** Scans `text`; true when the line is canonical (then {@link value} gives its values), false when unsure. */
  read(text: string): boolean {
    this.text = text;
    this.plain = !SPECIAL.test(text) && text.indexOf('\\') < 0;
    let pos = 0;
    for (let i = 0; i < PREFIXES.length; i++) {
      const prefix = PREFIXES[i] as string;
      if (!text.startsWith(prefix, pos)) return false;
      pos += prefix.length;
      const c = text.charCodeAt(pos);
      const slot = SLOTS[i] as Slot;
      let end: number;
      if (c === QUOTE) end = slot === Slot.Object ? -1 : this.stringEnd(pos, false);
      else if (c === OPEN_BRACE) end = slot === Slot.Object ? this.valueEnd(pos) : -1;
      else end = slot === Slot.StringOrNull && text.startsWith('null', pos) ? pos + 4 : -1;
      if (end < 0) return false;
      this.starts[i] = pos;
      this.ends[i] = end;
      pos = end;
    }
    return pos === text.length - 1 && text.charCodeAt(pos) === CLOSE_BRACE;
  }

  /** The canonical text of a value of the line last read. */
  value(key: RecordKey): string {
    const i = INDEX[key];
    return this.text.slice(this.starts[i], this.ends[i]);
  }

  /** A string value of the line last read (null for `null`). */
  string(key: RecordKey): string | null {
    const i = INDEX[key];
    const start = this.starts[i] as number;
    const end = this.ends[i] as number;
    if (this.text.charCodeAt(start) !== QUOTE) return null;
    const backslash = this.text.indexOf('\\', start);
    return backslash >= 0 && backslash < end ? decodeJsonString(this.text.slice(start, end)) : this.text.slice(start + 1, end - 1);
  }

  /**
   * The end (past its closer) of the canonical value at `pos`, or -1. One loop over an explicit
   * stack rather than a recursion: recursive scanners inlined into each other took TurboFan
   * about 200 ms of CPU to compile, more than a 100k-event trail then spent in them.
   */
  private valueEnd(pos: number): number {
    const text = this.text;
    let depth = 0;
    for (;;) {
      let c = text.charCodeAt(pos);
      if (c === OPEN_BRACE || c === OPEN_BRACKET) {
        const object = c === OPEN_BRACE;
        if (text.charCodeAt(pos + 1) === (object ? CLOSE_BRACE : CLOSE_BRACKET)) {
          pos += 2;
        } else {
          if (depth === MAX_SCAN_DEPTH) return -1;
          depth++;
          this.objects[depth] = object ? 1 : 0;
          this.keyStarts[depth] = -1;
          pos = object ? this.memberStart(pos + 1, depth) : pos + 1;
          if (pos < 0) return -1;
          continue;
        }
      } else {
        pos = c === QUOTE ? this.stringEnd(pos, false) : scalarEnd(text, pos);
        if (pos < 0) return -1;
      }
      // After a value: close the containers it ends, or step to the next member.
      for (;;) {
        if (depth === 0) return pos;
        const object = this.objects[depth] === 1;
        c = text.charCodeAt(pos);
        if (c === (object ? CLOSE_BRACE : CLOSE_BRACKET)) {
          depth--;
          pos++;
          continue;
        }
        if (c !== COMMA || text.charCodeAt(pos + 1) !== SPACE) return -1;
        pos = object ? this.memberStart(pos + 2, depth) : pos + 2;
        if (pos < 0) return -1;
        break;
      }
    }
  }

  /** Reads the key at `pos` of the object open at `depth` and the `: ` after it; returns where its value starts, or -1. */
  private memberStart(pos: number, depth: number): number {
    const text = this.text;
    if (text.charCodeAt(pos) !== QUOTE) return -1;
    const end = this.stringEnd(pos, true);
    if (end < 0) return -1;
    const previous = this.keyStarts[depth] as number;
    if (previous >= 0 && !rawKeyAfter(text, previous, this.keyEnds[depth] as number, pos, end)) return -1;
    this.keyStarts[depth] = pos;
    this.keyEnds[depth] = end;
    if (text.charCodeAt(end) !== COLON || text.charCodeAt(end + 1) !== SPACE) return -1;
    return end + 2;
  }

  private stringEnd(pos: number, key: boolean): number {
    if (this.plain) {
      const quote = this.text.indexOf('"', pos + 1);
      return quote < 0 ? -1 : quote + 1;
    }
    return stringEnd(this.text, pos, key);
  }
}

/** The end of the literal or number at `pos`, or -1. */
function scalarEnd(text: string, pos: number): number {
  const c = text.charCodeAt(pos);
  if (c === LOWER_T) return text.startsWith('true', pos) ? pos + 4 : -1;
  if (c === LOWER_F) return text.startsWith('false', pos) ? pos + 5 : -1;
  if (c === LOWER_N) return text.startsWith('null', pos) ? pos + 4 : -1;
  return numberEnd(text, pos);
}

/**
 * True when the key quoted at [start, end) sorts strictly after the one at [previousStart,
 * previousEnd). Both hold no escape and no surrogate (stringEnd refused them in keys), so the raw
 * units between the quotes are the key, and unit order is code-point order.
 */
function rawKeyAfter(text: string, previousStart: number, previousEnd: number, start: number, end: number): boolean {
  const previousLength = previousEnd - previousStart - 2;
  const length = end - start - 2;
  const common = Math.min(previousLength, length);
  for (let i = 1; i <= common; i++) {
    const x = text.charCodeAt(previousStart + i);
    const y = text.charCodeAt(start + i);
    if (x !== y) return x < y;
  }
  // One is a prefix of the other: the shorter sorts first; the same key twice is refused.
  return previousLength < length;
}

/**
 * The end (past the closing quote) of the canonical string at `pos`, or -1. A key (`key`) may hold
 * no escape and no surrogate, so that its raw text is its value and compares as Python compares.
 */
function stringEnd(text: string, pos: number, key: boolean): number {
  for (pos++; ; pos++) {
    const c = text.charCodeAt(pos);
    if (c === QUOTE) return pos + 1;
    // NaN past the end of the text: an unterminated string.
    if (!(c >= SPACE)) return -1;
    if (c === BACKSLASH) {
      if (key) return -1;
      const e = text.charCodeAt(pos + 1);
      if (e === LOWER_U) {
        if (!controlEscape(text, pos + 2)) return -1;
        pos += 5;
      } else if (e === QUOTE || e === BACKSLASH || e === LOWER_N || e === LOWER_R || e === LOWER_T || e === LOWER_B || e === LOWER_F) {
        pos++;
      } else {
        return -1;
      }
    } else if (c >= 0xd800 && c <= 0xdfff) {
      if (key || c > 0xdbff) return -1;
      const low = text.charCodeAt(pos + 1);
      if (!(low >= 0xdc00 && low <= 0xdfff)) return -1;
      pos++;
    }
  }
}

/**
 * The four hex digits at `pos` are a `\u` escape Python writes: `00xx`, lowercase, for a
 * character below U+0020 that has no short escape (\b \t \n \f \r).
 */
function controlEscape(text: string, pos: number): boolean {
  if (text.charCodeAt(pos) !== ZERO || text.charCodeAt(pos + 1) !== ZERO) return false;
  const high = text.charCodeAt(pos + 2);
  const low = text.charCodeAt(pos + 3);
  const lowValue = low >= ZERO && low <= NINE ? low - ZERO : low >= LOWER_A && low <= LOWER_F ? low - LOWER_A + 10 : -1;
  if (lowValue < 0 || (high !== ZERO && high !== ONE)) return false;
  const code = (high - ZERO) * 16 + lowValue;
  return code !== 0x08 && code !== 0x09 && code !== 0x0a && code !== 0x0c && code !== 0x0d;
}

/** The end of the canonical number at `pos` (see the module comment for which), or -1. */
function numberEnd(text: string, start: number): number {
  let pos = start;
  if (text.charCodeAt(pos) === MINUS) pos++;
  const first = text.charCodeAt(pos);
  const integer = pos;
  if (first === ZERO) pos++;
  else if (first > ZERO && first <= NINE) pos = digitsEnd(text, pos);
  else return -1;
  if (pos - integer > MAX_DIGITS) return -1;
  if (text.charCodeAt(pos) !== DOT) {
    // `-0` is the int 0 to Python, printed `0`.
    if (isNumberTail(text.charCodeAt(pos)) || (first === ZERO && integer > start)) return -1;
    return pos;
  }
  const fraction = pos + 1;
  pos = digitsEnd(text, fraction);
  if (pos === fraction || pos - fraction > MAX_DIGITS || isNumberTail(text.charCodeAt(pos))) return -1;
  // Python's repr of the float the literal denotes must be the literal: no trailing zero, no
  // integral value (`1.0` is a float JSON.parse reads as 1), nothing Python writes with an exponent.
  const literal = text.slice(start, pos);
  const value = Number(literal);
  return !Number.isInteger(value) && pythonFloatRepr(value) === literal ? pos : -1;
}

function digitsEnd(text: string, pos: number): number {
  for (;;) {
    const c = text.charCodeAt(pos);
    if (c >= ZERO && c <= NINE) pos++;
    else return pos;
  }
}

/** A character that would continue a number token: an exponent, or a point after an exponent-less token. */
function isNumberTail(c: number): boolean {
  return c === 0x65 || c === 0x45 || c === DOT || (c >= ZERO && c <= NINE);
}
