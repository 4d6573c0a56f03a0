import * as fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/spine/canonical.js';
import { JsonReadError, parseJsonLossless, readCanonicalPairs } from '../../src/spine/json-reader.js';
import { PythonNumber } from '../../src/spine/python-number.js';
import { interopIndex, pythonTrail } from '../helpers/fixtures.js';
import { pythonCanonical } from '../helpers/python.js';

/** The canonical text of an object text through the pair reader. */
function canonicalViaPairs(text: string): string {
  const pairs = readCanonicalPairs(text);
  return pairs.length === 0 ? '{}' : `{${pairs.map(([k, v]) => `${JSON.stringify(k)}: ${v}`).join(', ')}}`;
}

function readError(action: () => unknown): JsonReadError {
  try {
    action();
  } catch (error) {
    if (error instanceof JsonReadError) return error;
    throw error;
  }
  throw new Error('expected a JsonReadError');
}

describe('parseJsonLossless', () => {
  describe('when numbers would not survive JSON.parse', () => {
    it('keeps integral floats, -0.0 and big integers as PythonNumber', () => {
      const value = parseJsonLossless('{"a": 1.0, "b": -0.0, "c": 1e16, "d": 18446744073709551617, "e": 9007199254740993, "f": 2}') as Record<string, unknown>;
      expect(value['a']).toEqual(new PythonNumber('float', '1.0'));
      expect(value['b']).toEqual(new PythonNumber('float', '-0.0'));
      expect(value['c']).toEqual(new PythonNumber('float', '1e+16'));
      expect(value['d']).toEqual(new PythonNumber('int', '18446744073709551617'));
      expect(value['e']).toEqual(new PythonNumber('int', '9007199254740993'));
      expect(value['f']).toBe(2);
    });

    it('reads the NaN, Infinity and -Infinity tokens Python writes', () => {
      const value = parseJsonLossless('[NaN, Infinity, -Infinity, 0.5]');
      expect(canonicalJson(value)).toBe('[NaN, Infinity, -Infinity, 0.5]');
    });

    it('reads a float as Python does: the value, not the spelling', () => {
      expect(canonicalJson(parseJsonLossless('[1.10, 1E2, 0.0001, 1e400]'))).toBe('[1.1, 100.0, 0.0001, Infinity]');
    });
  });

  describe('when the text is not JSON', () => {
    const bad: [string, string][] = [
      ['{"a": 1', 'unterminated object'],
      ['{"a": 01}', 'leading zero'],
      ['{"a": 1.}', 'no digits after the point'],
      ['{"a": -}', 'a lone minus'],
      ['{"a": "x\ty"}', 'a raw control character in a string'],
      ['{"a": "\\x"}', 'an invalid escape'],
      ['{"a": tru}', 'a broken literal'],
      ['{"a": 1} x', 'text after the value'],
      ['{a: 1}', 'an unquoted key'],
      ['{"a": 1,}', 'a trailing comma'],
      ['{"a": -NaN}', 'a signed NaN'],
    ];
    for (const [text, what] of bad) {
      it(`throws a syntax JsonReadError for ${what}`, () => {
        expect(readError(() => parseJsonLossless(text)).problem).toBe('syntax');
        expect(readError(() => readCanonicalPairs(text)).problem).toBe('syntax');
      });
    }

    it('refuses duplicate keys at any depth, naming the key', () => {
      for (const text of ['{"a": 1, "a": 2}', '{"x": {"k": 1, "j": 0, "k": 2}}']) {
        const error = readError(() => parseJsonLossless(text));
        expect(error.problem).toBe('duplicate_key');
        expect(readError(() => readCanonicalPairs(text)).problem).toBe('duplicate_key');
      }
    });

    it('refuses an escaped lone surrogate, which Python could not encode', () => {
      expect(readError(() => parseJsonLossless('{"a": "\\ud800"}')).problem).toBe('lone_surrogate');
      expect(readError(() => readCanonicalPairs('{"a": "\\ud800"}')).problem).toBe('lone_surrogate');
    });

    it('refuses nesting deeper than the writer accepts', () => {
      const deep = `{"a": ${'['.repeat(600)}${']'.repeat(600)}}`;
      expect(readError(() => parseJsonLossless(deep)).message).toContain('nested deeper than 500 levels');
      expect(readError(() => readCanonicalPairs(deep)).message).toContain('nested deeper than 500 levels');
      const fine = `{"a": ${'['.repeat(400)}${']'.repeat(400)}}`;
      expect(canonicalViaPairs(fine)).toBe(canonicalJson(parseJsonLossless(fine)));
    });

    it('gives the column of the problem', () => {
      expect(readError(() => parseJsonLossless('{"a": 1, "b": @}')).message).toContain('column 15');
    });
  });

  it('treats a key named __proto__ as data', () => {
    const value = parseJsonLossless('{"__proto__": {"polluted": true}}') as Record<string, unknown>;
    expect(Object.keys(value)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });
});

describe('readCanonicalPairs', () => {
  it('gives the same canonical text as parsing and then serializing', () => {
    const texts = [
      '{"z": 1, "a": {"y": [1, 2.5, 1.0, "é", {"q": null}], "b": true}, "m": "\\u00e9\\n\\"x\\""}',
      '{"\uffff": 1, "😀": 2, "a": {"😀": 1, "\uffff": 2}}',
      '{}',
      '{ "spaced" :  [ 1 , 2 ] , "t":false }',
    ];
    for (const text of texts) expect(canonicalViaPairs(text)).toBe(canonicalJson(parseJsonLossless(text)));
  });

  it('refuses a text that is not an object', () => {
    expect(readError(() => readCanonicalPairs('[1, 2]')).problem).toBe('syntax');
  });

  describe('when given the lines of Python Aura trails (numbers, non-finite, unicode)', () => {
    const index = interopIndex();
    for (const name of ['numbers', 'nonfinite', 'unicode']) {
      it(`agrees with CPython on every line of the ${name} trail`, () => {
        const sessionId = (index.sessions[name] as { session_id: string }).session_id;
        const lines = fs.readFileSync(pythonTrail(sessionId), 'utf8').split('\n').filter(Boolean);
        expect(lines.map(canonicalViaPairs)).toEqual(pythonCanonical(lines));
        expect(lines.map((line) => canonicalJson(parseJsonLossless(line)))).toEqual(pythonCanonical(lines));
      });
    }
  });
});
