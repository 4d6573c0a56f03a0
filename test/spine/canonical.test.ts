import { describe, expect, it } from 'vitest';
import { canonicalJson, compareCodePoints, MAX_DEPTH } from '../../src/spine/canonical.js';
import { contentHash } from '../../src/spine/hash.js';
import { PythonNumber, pythonFloatRepr } from '../../src/spine/python-number.js';
import { NonJsonValueError } from '../../src/errors.js';
import { expectAuraError } from '../helpers/errors.js';
import { pythonCanonical } from '../helpers/python.js';

describe('canonicalJson', () => {
  describe('when compared with CPython json.dumps(sort_keys=True, ensure_ascii=False)', () => {
    // Values that JSON.stringify renders the same as Python reads them, so Python sees the same value.
    const values: unknown[] = [
      { b: 1, a: [true, false, null], c: { z: 'x', y: '' } },
      { text: 'héllo wörld — “quotes” \\ back\\slash "dq" /slash', emoji: '😀🎉', cjk: '漢字', rtl: 'שלום', ctl: '\u0000\u0001\u001f\u007f\n\r\t\b\f', seps: '\u2028\u2029' },
      { '😀': 1, '\uffff': 2, a: 3, 'é': 4, '\ud7ff': 5, '𝄞': 6, Z: 7, '': 8 },
      { floats: [0.1, 1e-7, 5e-324, 0.30000000000000004, 1.7976931348623157e308, -1.5, 123.456, 1e-5, 1.5e-10, 2.5e-4, 3.14159] },
      { ints: [0, -1, 42, 9007199254740991, -9007199254740991, 1e15, 1152921504606846976, 1e20] },
      { nested: [[[]], {}, [{}], { a: { b: { c: [1, { d: 'e' }] } } }] },
    ];
    it('prints the same text for every value', () => {
      const texts = values.map((value) => JSON.stringify(value));
      expect(values.map((value) => canonicalJson(value))).toEqual(pythonCanonical(texts));
    });

    it('sorts the keys of small and large objects, in whatever order they were given, as Python does', () => {
      // Up to 16 keys are sorted by insertion, more by Array.prototype.sort: both against Python's sort.
      // Integer-like keys ('10', '9') come first from Object.keys in numeric order, which is not the text order.
      let seed = 7;
      const random = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
      const objects = [1, 2, 3, 5, 8, 13, 16, 17, 24, 40].map((size) => {
        const keys = Array.from({ length: size }, (_, i) => `${['k', 'K', 'a_', 'é', 'z', '', '9', '1'][i % 8]}${i}`);
        for (let i = keys.length - 1; i > 0; i--) {
          const j = Math.floor(random() * (i + 1));
          [keys[i], keys[j]] = [keys[j] as string, keys[i] as string];
        }
        return Object.fromEntries(keys.map((key, i) => [key, i]));
      });
      expect(objects.map((value) => canonicalJson(value))).toEqual(pythonCanonical(objects.map((value) => JSON.stringify(value))));
    });

    it('prints floats with Python repr across the exponent boundaries', () => {
      const floats = [1e-4, 9.999e-5, 1e-5, 0.0001234, 9999999999999998, 1e16, 1.5e16, 1e21, 1e22, 1.5e300, 123456789012345680, 2.0, -0.0];
      // Sent as Python float literals (with '.0' or an exponent), so Python reads floats.
      const literals = floats.map((x) => JSON.stringify({ x: Object.is(x, -0) ? '-0.0' : x.toExponential() }).replace(/"(-?[\d.e+-]+)"/, '$1'));
      const ours = floats.map((x) => `{"x": ${pythonFloatRepr(x)}}`);
      expect(ours).toEqual(pythonCanonical(literals));
    });
  });

  describe('when given numbers', () => {
    it('writes integral numbers below 1e21 as ints and other finite numbers as floats', () => {
      expect(canonicalJson(2)).toBe('2');
      expect(canonicalJson(-0)).toBe('0');
      expect(canonicalJson(1e20)).toBe('100000000000000000000');
      expect(canonicalJson(1e21)).toBe('1e+21');
      expect(canonicalJson(0.5)).toBe('0.5');
      expect(canonicalJson(1e-7)).toBe('1e-07');
    });

    it('writes a PythonNumber as its canonical text', () => {
      expect(canonicalJson({ f: new PythonNumber('float', '1.0'), i: new PythonNumber('int', '18446744073709551617') })).toBe(
        '{"f": 1.0, "i": 18446744073709551617}',
      );
    });
  });

  describe('when keys hold astral-plane characters', () => {
    it('sorts by code point, not by UTF-16 unit', () => {
      // U+1F600 is the surrogate pair D83D DE00, which sorts below U+FFFF by UTF-16 unit.
      expect(canonicalJson({ '\uffff': 1, '😀': 2 })).toBe('{"\uffff": 1, "😀": 2}');
      expect(compareCodePoints('😀', '\uffff')).toBeGreaterThan(0);
      expect(compareCodePoints('a', 'ab')).toBeLessThan(0);
    });
  });

  describe('with asciiOnly', () => {
    it('escapes everything outside printable ASCII as lowercase \\u escapes, astral as surrogate pairs', () => {
      expect(canonicalJson({ k: 'é😀\u007f~' }, 'v', { asciiOnly: true })).toBe('{"k": "\\u00e9\\ud83d\\ude00\\u007f~"}');
    });
  });

  describe('when the value is not JSON', () => {
    const cycle: Record<string, unknown> = { a: 1 };
    cycle['self'] = { back: cycle };
    const deep: unknown[] = [];
    let cursor = deep;
    for (let i = 0; i < MAX_DEPTH + 5; i++) {
      const next: unknown[] = [];
      cursor.push(next);
      cursor = next;
    }
    const cases: [string, unknown, string, string][] = [
      ['a cycle', cycle, 'payload.self.back', 'cycle'],
      ['a BigInt', { n: 10n }, 'payload.n', 'bigint'],
      ['NaN', { x: [1, Number.NaN] }, 'payload.x[1]', 'non_finite'],
      ['Infinity', { x: Number.POSITIVE_INFINITY }, 'payload.x', 'non_finite'],
      ['a function', { f: () => 1 }, 'payload.f', 'function'],
      ['a symbol', { s: Symbol('s') }, 'payload.s', 'symbol'],
      ['undefined in an array', { a: [1, undefined] }, 'payload.a[1]', 'undefined'],
      // eslint-disable-next-line no-sparse-arrays -- the hole is the case under test
      ['a hole in an array', { a: [1, , 3] }, 'payload.a[1]', 'undefined'],
      ['a lone surrogate in a value', { s: 'x\ud800y' }, 'payload.s', 'lone_surrogate'],
      ['a lone surrogate in a key', { ['k\udc00']: 1 }, 'payload.k\udc00', 'lone_surrogate'],
      ['a Date', { when: new Date(0) }, 'payload.when', 'not_plain'],
      ['a Map', { m: new Map() }, 'payload.m', 'not_plain'],
      ['nesting too deep', { deep }, 'payload.deep', 'too_deep'],
    ];
    for (const [name, value, path, reason] of cases) {
      it(`throws NON_JSON_VALUE naming the path for ${name}`, () => {
        const error = expectAuraError(() => canonicalJson(value, 'payload'), NonJsonValueError, 'NON_JSON_VALUE');
        expect(error.data?.reason).toBe(reason);
        if (reason !== 'too_deep') expect(error.data?.path).toBe(path);
        expect(error.message).toContain('is not JSON');
      });
    }

    it('names the class of an object that is not plain', () => {
      class Reading {
        value = 1;
      }
      const error = expectAuraError(() => canonicalJson({ r: new Reading() }, 'payload'), NonJsonValueError, 'NON_JSON_VALUE');
      expect(error.message).toBe('payload.r is not JSON: an object of class Reading; pass a plain object or array');
    });

    it('leaves out object properties whose value is undefined, as JSON.stringify does', () => {
      expect(canonicalJson({ a: undefined, b: 1 })).toBe('{"b": 1}');
    });

    it('accepts the same object twice when it is not a cycle', () => {
      const shared = { x: 1 };
      expect(canonicalJson({ a: shared, b: [shared] })).toBe('{"a": {"x": 1}, "b": [{"x": 1}]}');
    });

    it('accepts objects with a null prototype', () => {
      const bare = Object.create(null) as Record<string, unknown>;
      bare['k'] = 'v';
      expect(canonicalJson(bare)).toBe('{"k": "v"}');
    });
  });
});

describe('contentHash', () => {
  // The test vectors of the reference (§3.4), computed with CPython's json and hashlib.
  const body1 =
    '{"agent_ids": {"aura_id": "01J0000000000000000000000Z", "policy_version": "1"}, "aura_id": "01J0000000000000000000000Z", "event_id": "0123456789abcdef0123456789abcdef", "kind": "turn.start", "parent_id": null, "payload": {"input": "héllo", "n": 1.0, "z": [1, 2]}, "session_id": "aura_sess_0123456789ab", "span_id": null, "step_id": null, "task_id": null, "telemetry": {}, "timestamp": "2026-01-01T00:00:00.000001+00:00", "trace_id": "fedcba9876543210fedcba9876543210"}';

  it('reproduces the first reference vector from a value built in JavaScript', () => {
    const body = {
      agent_ids: { aura_id: '01J0000000000000000000000Z', policy_version: '1' },
      aura_id: '01J0000000000000000000000Z',
      event_id: '0123456789abcdef0123456789abcdef',
      kind: 'turn.start',
      parent_id: null,
      payload: { input: 'héllo', n: new PythonNumber('float', '1.0'), z: [1, 2] },
      session_id: 'aura_sess_0123456789ab',
      span_id: null,
      step_id: null,
      task_id: null,
      telemetry: {},
      timestamp: '2026-01-01T00:00:00.000001+00:00',
      trace_id: 'fedcba9876543210fedcba9876543210',
    };
    expect(canonicalJson(body)).toBe(body1);
    expect(contentHash(null, canonicalJson(body))).toBe('16a0da349e5e848233483483dc91f03f58971d38f7e1ebf9f99b98a3b1054c51');
  });

  it('reproduces the second reference vector, chained after the first', () => {
    const body2 = body1
      .replace('"event_id": "0123456789abcdef0123456789abcdef"', `"event_id": "${'1'.repeat(32)}"`)
      .replace('"kind": "turn.start"', '"kind": "turn.end"')
      .replace('"parent_id": null', '"parent_id": "0123456789abcdef0123456789abcdef"')
      .replace('{"input": "héllo", "n": 1.0, "z": [1, 2]}', '{}');
    expect(contentHash('16a0da349e5e848233483483dc91f03f58971d38f7e1ebf9f99b98a3b1054c51', body2)).toBe(
      'f9dda6e2165582057f3c25a715528aa75fe5b44878a936b4c553a0361ef75f9b',
    );
  });
});
