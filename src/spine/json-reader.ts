/**
 * A lossless JSON reader for trail lines, read as CPython's `json.loads` reads them (DESIGN §2.2):
 * a literal with `.`, `e` or `E` is a float, else an int of any size, and the bare `NaN`,
 * `Infinity` and `-Infinity` tokens Python writes are accepted. `JSON.parse` cannot do this
 * (it turns `1.0` into `1` and rejects `NaN`).
 *
 * Trail text is untrusted input: every malformation becomes a {@link JsonReadError} with a
 * position, never a stray exception, and duplicate keys are refused (the hash would cover only
 * one of the two values while a reader might show the other).
 *
 * Two readers share one scanner: {@link parseJsonLossless} builds values (with
 * {@link PythonNumber} where a JS number would not do), and {@link readCanonicalPairs} goes
 * straight from text to canonical text without building values, which is what verification needs
 * (it halves the work of parse-then-serialize on the verify path).
 */

import { compareCodePoints, MAX_DEPTH } from './canonical.js';
import { PythonNumber, pythonFloatRepr, pythonIntText } from './python-number.js';

/** What is wrong with a JSON text, and where (0-based UTF-16 offset). */
export class JsonReadError extends Error {
  constructor(
    readonly problem: 'syntax' | 'duplicate_key' | 'lone_surrogate',
    message: string,
    readonly position: number,
  ) {
    super(`${message} at column ${position + 1}`);
  }
}

/** A value as the lossless reader gives it. */
export type JsonValue = null | boolean | number | string | PythonNumber | JsonValue[] | { [key: string]: JsonValue };

/** A key and the canonical text of its value. */
export type CanonicalPair = readonly [key: string, canonical: string];

const enum Char {
  Tab = 0x09,
  Newline = 0x0a,
  Return = 0x0d,
  Space = 0x20,
  Quote = 0x22,
  Plus = 0x2b,
  Comma = 0x2c,
  Minus = 0x2d,
  Dot = 0x2e,
  Zero = 0x30,
  Nine = 0x39,
  Colon = 0x3a,
  UpperE = 0x45,
  UpperI = 0x49,
  UpperN = 0x4e,
  OpenBracket = 0x5b,
  Backslash = 0x5c,
  CloseBracket = 0x5d,
  LowerE = 0x65,
  LowerF = 0x66,
  LowerN = 0x6e,
  LowerT = 0x74,
  OpenBrace = 0x7b,
  CloseBrace = 0x7d,
}

const SURROGATE = /[\ud800-\udfff]/;
// eslint-disable-next-line no-control-regex -- raw control characters are exactly what JSON forbids in strings
const CONTROL = /[\u0000-\u001f]/g;

/** Scanner state over one text; `nextBackslash`/`nextControl` are cached so each string costs O(its length). */
class Scanner {
  pos = 0;
  private nextBackslash = -1;
  private nextControl = -1;

  constructor(readonly text: string) {}

  fail(message: string, at = this.pos): never {
    throw new JsonReadError('syntax', message, at);
  }

  skipWhitespace(): void {
    const text = this.text;
    let pos = this.pos;
    for (;;) {
      const c = text.charCodeAt(pos);
      if (c === Char.Space || c === Char.Tab || c === Char.Newline || c === Char.Return) pos++;
      else break;
    }
    this.pos = pos;
  }

  peek(): number {
    return this.text.charCodeAt(this.pos);
  }

  /** Steps into the array or object whose opener is at `pos`; true when it is empty (closer consumed). */
  open(close: number, depth: number): boolean {
    if (depth >= MAX_DEPTH) this.fail(`nested deeper than ${MAX_DEPTH} levels`);
    this.pos++;
    this.skipWhitespace();
    if (this.peek() !== close) return false;
    this.pos++;
    return true;
  }

  /** After a member: true at the closer, false after a comma. */
  next(close: number): boolean {
    this.skipWhitespace();
    const c = this.peek();
    this.pos++;
    if (c === close) return true;
    if (c !== Char.Comma) this.fail(`expected ',' or '${String.fromCharCode(close)}'`, this.pos - 1);
    return false;
  }

  expect(char: number, what: string): void {
    this.skipWhitespace();
    if (this.text.charCodeAt(this.pos) !== char) this.fail(`expected ${what}`);
    this.pos++;
  }

  literal(word: string): void {
    if (!this.text.startsWith(word, this.pos)) this.fail('unexpected token');
    this.pos += word.length;
  }

  /**
   * Scans a string whose opening quote is at `pos`. Returns its raw text with the quotes, and
   * whether it holds an escape (then the caller decodes it; otherwise the raw text is canonical).
   */
  string(): { raw: string; escaped: boolean } {
    const text = this.text;
    const start = this.pos;
    let from = start + 1;
    let escaped = false;
    let end: number;
    for (;;) {
      const quote = text.indexOf('"', from);
      if (quote < 0) this.fail('unterminated string', start);
      if (this.nextBackslash < from) {
        this.nextBackslash = text.indexOf('\\', from);
        if (this.nextBackslash < 0) this.nextBackslash = Infinity;
      }
      if (this.nextBackslash > quote) {
        end = quote;
        break;
      }
      escaped = true;
      from = this.nextBackslash + 2;
    }
    if (this.nextControl < start && this.nextControl !== Infinity) {
      CONTROL.lastIndex = start;
      const match = CONTROL.exec(text);
      this.nextControl = match === null ? Infinity : match.index;
    }
    if (this.nextControl < end) this.fail('control character in string', this.nextControl);
    this.pos = end + 1;
    return { raw: text.slice(start, end + 1), escaped };
  }

  /** Decodes a scanned string; refuses lone surrogates, which Python cannot encode to UTF-8. */
  decode(raw: string, escaped: boolean, at: number): string {
    if (!escaped) return raw.slice(1, -1);
    let decoded: string;
    try {
      decoded = decodeJsonString(raw);
    } catch {
      this.fail('invalid escape in string', at);
    }
    if (!decoded.isWellFormed()) throw new JsonReadError('lone_surrogate', 'string with a lone surrogate', at);
    return decoded;
  }

  /** Scans a number literal (or `NaN`, `Infinity`, `-Infinity`); returns its Python type and canonical text. */
  number(): { type: 'int' | 'float'; canonical: string; value: number } {
    const text = this.text;
    const start = this.pos;
    let pos = start;
    if (text.charCodeAt(pos) === Char.Minus) pos++;
    const first = text.charCodeAt(pos);
    if (first === Char.UpperI) {
      this.pos = pos;
      this.literal('Infinity');
      const negative = pos > start;
      return { type: 'float', canonical: negative ? '-Infinity' : 'Infinity', value: negative ? -Infinity : Infinity };
    }
    if (first === Char.Zero) pos++;
    else if (first > Char.Zero && first <= Char.Nine) pos = digitsEnd(text, pos);
    else this.fail('invalid number', start);
    let isFloat = false;
    if (text.charCodeAt(pos) === Char.Dot) {
      const after = digitsEnd(text, pos + 1);
      if (after === pos + 1) this.fail('invalid number', start);
      pos = after;
      isFloat = true;
    }
    const e = text.charCodeAt(pos);
    if (e === Char.LowerE || e === Char.UpperE) {
      pos++;
      const sign = text.charCodeAt(pos);
      if (sign === Char.Plus || sign === Char.Minus) pos++;
      const after = digitsEnd(text, pos);
      if (after === pos) this.fail('invalid number', start);
      pos = after;
      isFloat = true;
    }
    this.pos = pos;
    const literal = text.slice(start, pos);
    const value = Number(literal);
    if (isFloat) return { type: 'float', canonical: pythonFloatRepr(value), value };
    return { type: 'int', canonical: pythonIntText(literal), value };
  }
}

function digitsEnd(text: string, pos: number): number {
  for (;;) {
    const c = text.charCodeAt(pos);
    if (c >= Char.Zero && c <= Char.Nine) pos++;
    else return pos;
  }
}

function ensureEnd(scanner: Scanner): void {
  scanner.skipWhitespace();
  if (scanner.pos !== scanner.text.length) scanner.fail('unexpected text after the value');
}

/**
 * The value of one JSON string token, quotes included. `JSON.parse` reads a string right (what
 * V8 can misread is an escaped object key: native-json.ts).
 * @throws SyntaxError on an invalid escape
 */
export function decodeJsonString(token: string): string {
  return JSON.parse(token) as string;
}

/**
 * Parses a JSON text losslessly. Numbers a JS number would misrepresent (integral or non-finite
 * floats, integers beyond 2^53) become {@link PythonNumber}.
 * @throws JsonReadError
 */
export function parseJsonLossless(text: string): JsonValue {
  const scanner = new Scanner(text);
  const value = parseValue(scanner, 0);
  ensureEnd(scanner);
  return value;
}

function parseValue(scanner: Scanner, depth: number): JsonValue {
  scanner.skipWhitespace();
  const c = scanner.peek();
  switch (c) {
    case Char.OpenBrace:
      return parseObject(scanner, depth);
    case Char.OpenBracket:
      return parseArray(scanner, depth);
    case Char.Quote: {
      const at = scanner.pos;
      const { raw, escaped } = scanner.string();
      return scanner.decode(raw, escaped, at);
    }
    case Char.LowerT:
      scanner.literal('true');
      return true;
    case Char.LowerF:
      scanner.literal('false');
      return false;
    case Char.LowerN:
      scanner.literal('null');
      return null;
    case Char.UpperN:
      scanner.literal('NaN');
      return new PythonNumber('float', 'NaN');
    default: {
      const { type, canonical, value } = scanner.number();
      if (type === 'int') return Number.isSafeInteger(value) ? value : new PythonNumber('int', canonical);
      return Number.isInteger(value) || !Number.isFinite(value) ? new PythonNumber('float', canonical) : value;
    }
  }
}

function parseArray(scanner: Scanner, depth: number): JsonValue[] {
  const array: JsonValue[] = [];
  if (scanner.open(Char.CloseBracket, depth)) return array;
  do array.push(parseValue(scanner, depth + 1));
  while (!scanner.next(Char.CloseBracket));
  return array;
}

function parseObject(scanner: Scanner, depth: number): { [key: string]: JsonValue } {
  // A null prototype: a key named `__proto__` is data, as it is to Python.
  const object = Object.create(null) as { [key: string]: JsonValue };
  if (scanner.open(Char.CloseBrace, depth)) return object;
  do {
    const key = readKey(scanner);
    if (Object.hasOwn(object, key.name)) throw new JsonReadError('duplicate_key', `duplicate key ${JSON.stringify(key.name)}`, key.at);
    object[key.name] = parseValue(scanner, depth + 1);
  } while (!scanner.next(Char.CloseBrace));
  return object;
}

function readKey(scanner: Scanner): { name: string; raw: string; escaped: boolean; at: number } {
  scanner.skipWhitespace();
  const at = scanner.pos;
  if (scanner.peek() !== Char.Quote) scanner.fail('expected a string key');
  const { raw, escaped } = scanner.string();
  scanner.expect(Char.Colon, "':'");
  return { name: scanner.decode(raw, escaped, at), raw, escaped, at };
}

/**
 * Reads a JSON object text and returns its members as (key, canonical text of the value) pairs,
 * sorted in code-point order, without building any value. The canonical text is the one
 * {@link canonicalJson} would print for the value Python reads.
 * @throws JsonReadError, also when the text is valid JSON but not an object.
 */
export function readCanonicalPairs(text: string): CanonicalPair[] {
  const scanner = new Scanner(text);
  scanner.skipWhitespace();
  if (scanner.peek() !== Char.OpenBrace) scanner.fail('expected an object');
  const pairs = canonicalMembers(scanner, 0);
  ensureEnd(scanner);
  return pairs;
}

function canonicalValue(scanner: Scanner, depth: number): string {
  scanner.skipWhitespace();
  switch (scanner.peek()) {
    case Char.OpenBrace: {
      const pairs = canonicalMembers(scanner, depth);
      if (pairs.length === 0) return '{}';
      let text = '{';
      for (let i = 0; i < pairs.length; i++) {
        const [key, value] = pairs[i] as CanonicalPair;
        text += (i === 0 ? '' : ', ') + JSON.stringify(key) + ': ' + value;
      }
      return text + '}';
    }
    case Char.OpenBracket: {
      if (scanner.open(Char.CloseBracket, depth)) return '[]';
      let text = '[';
      do text += (text.length === 1 ? '' : ', ') + canonicalValue(scanner, depth + 1);
      while (!scanner.next(Char.CloseBracket));
      return text + ']';
    }
    case Char.Quote: {
      const at = scanner.pos;
      const { raw, escaped } = scanner.string();
      // Unescaped text holds no quote, backslash or control character, so it is already canonical.
      return escaped ? JSON.stringify(scanner.decode(raw, escaped, at)) : raw;
    }
    case Char.LowerT:
      scanner.literal('true');
      return 'true';
    case Char.LowerF:
      scanner.literal('false');
      return 'false';
    case Char.LowerN:
      scanner.literal('null');
      return 'null';
    case Char.UpperN:
      scanner.literal('NaN');
      return 'NaN';
    default: {
      const { canonical } = scanner.number();
      return canonical;
    }
  }
}

function canonicalMembers(scanner: Scanner, depth: number): CanonicalPair[] {
  const pairs: CanonicalPair[] = [];
  if (scanner.open(Char.CloseBrace, depth)) return pairs;
  let astral = false;
  let sorted = true;
  const positions: number[] = [];
  do {
    const key = readKey(scanner);
    if (!astral && SURROGATE.test(key.name)) astral = true;
    const previous = pairs[pairs.length - 1];
    if (previous !== undefined && !(previous[0] < key.name)) sorted = false;
    pairs.push([key.name, canonicalValue(scanner, depth + 1)]);
    positions.push(key.at);
  } while (!scanner.next(Char.CloseBrace));
  if (!sorted || astral) {
    const order = pairs.map((_, i) => i);
    // A consistent comparator (0 for equal keys): only then does sorting put duplicates side by side.
    order.sort(astral ? (a, b) => compareCodePoints(keyAt(pairs, a), keyAt(pairs, b)) : (a, b) => compareUnits(keyAt(pairs, a), keyAt(pairs, b)));
    const reordered = order.map((i) => pairs[i] as CanonicalPair);
    for (let i = 1; i < reordered.length; i++) {
      if (keyAt(reordered, i) === keyAt(reordered, i - 1)) {
        const key = keyAt(reordered, i);
        throw new JsonReadError('duplicate_key', `duplicate key ${JSON.stringify(key)}`, positions[order[i] as number] ?? 0);
      }
    }
    return reordered;
  }
  return pairs;
}

function compareUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function keyAt(pairs: readonly CanonicalPair[], i: number): string {
  return (pairs[i] as CanonicalPair)[0];
}
