/**
 * `JSON.parse`, only where V8 reads the text right. V8 12.8 and later (Node 24 and 26; not Node 20
 * or 22) can read an object key written with an escape as another key that an earlier parse in
 * the same process created, when the key's text as written begins with that key: after
 * `{"a\\": 0}` (the key `a\`), `{"a\"": 1}` (the key `a"`) reads back with the key `a\`
 * (nodejs/node#63785, open). A trail, a summary or a tool's arguments are text from outside: a
 * key read wrong would have aura hash, check and show a record other than the one written, and
 * another reader (Python Aura, aura on Node 20) see a different one. A text with an escaped key is
 * read by aura's own reader (json-reader.ts); the others, nearly all, by `JSON.parse`.
 */

import { JsonReadError, parseJsonLossless, type JsonValue } from './json-reader.js';
import { PythonNumber } from './python-number.js';

const COLON = 0x3a;

// A JSON string token that holds an escape, from its opening quote (sticky: it starts there).
const ESCAPED_STRING = /"[^"\\]*(?:\\[\s\S][^"\\]*)*"/y;

/**
 * Whether some object key of a JSON text is written with an escape (`\"`, `\\`, `\n`, `\u…`).
 * One pass from string to string: outside its strings a JSON text holds no `"`, so the next `"`
 * after a string's end opens the next string. A text that is not JSON may answer either way
 * (`JSON.parse` refuses it anyway).
 */
export function hasEscapedKey(text: string): boolean {
  let slash = text.indexOf('\\');
  let open = slash < 0 ? -1 : text.indexOf('"');
  while (open >= 0) {
    if (slash < open) {
      slash = text.indexOf('\\', open);
      if (slash < 0) return false;
    }
    let end = text.indexOf('"', open + 1) + 1;
    if (end === 0) return false;
    if (slash < end) {
      // The string holds an escape: its end is where the token ends, not at the first quote.
      ESCAPED_STRING.lastIndex = open;
      if (!ESCAPED_STRING.test(text)) return false;
      end = ESCAPED_STRING.lastIndex;
      if (colonFollows(text, end)) return true;
    }
    open = text.indexOf('"', end);
  }
  return false;
}

function colonFollows(text: string, at: number): boolean {
  for (let i = at; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === COLON) return true;
    // JSON's white space: tab, newline, carriage return, space.
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return false;
  }
  return false;
}

/**
 * The values `JSON.parse` gives for `text`, with every key as written. A text with an escaped key
 * is read again by the lossless reader, which also refuses a duplicate key, a lone surrogate or
 * a nesting deeper than aura records in it; its numbers are then given as `JSON.parse` gives them.
 * @throws SyntaxError, saying what is wrong and at which column
 */
export function parseJson(text: string): unknown {
  const value = JSON.parse(text) as unknown;
  if (!hasEscapedKey(text)) return value;
  try {
    return plainValue(parseJsonLossless(text));
  } catch (error) {
    if (error instanceof JsonReadError) throw new SyntaxError(error.message);
    throw error;
  }
}

/** A lossless reading as `JSON.parse` gives it: numbers as JS numbers, ordinary objects. */
function plainValue(value: JsonValue): unknown {
  if (value instanceof PythonNumber) return value.valueOf();
  if (Array.isArray(value)) return value.map(plainValue);
  if (value === null || typeof value !== 'object') return value;
  const object: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    // Defined, not assigned: a key named `__proto__` is data, as JSON.parse makes it.
    Object.defineProperty(object, key, { value: plainValue(value[key] as JsonValue), enumerable: true, writable: true, configurable: true });
  }
  return object;
}
