/**
 * Numbers as Python's `json` module sees them (DESIGN §2.2). Python keeps `int` and `float` apart
 * and prints floats with `repr`; a JavaScript number cannot tell `1.0` from `1` nor hold
 * `2**64 + 1`. Values that a JS number would misrepresent are carried as {@link PythonNumber}.
 */

/**
 * A number read from a trail that a JS number would hash differently: a float with an integral
 * value (`1.0`, `-0.0`, `1e16`), a non-finite float (`NaN`, `Infinity`), or an integer beyond
 * 2^53. `canonical` is the text Python's `json.dumps` prints for it.
 */
export class PythonNumber {
  constructor(
    readonly type: 'int' | 'float',
    readonly canonical: string,
  ) {}

  /** The nearest JS number (exact for floats; rounded for big integers). */
  valueOf(): number {
    return Number(this.canonical);
  }

  toJSON(): number | string {
    const value = this.valueOf();
    return Number.isFinite(value) ? value : this.canonical;
  }
}

/**
 * Python's `repr(float)`: the shortest digits that round-trip (which are JavaScript's digits too),
 * in fixed notation for 1e-4 <= |x| < 1e16 with `.0` on integral values, else `d.ddde±XX`.
 */
export function pythonFloatRepr(x: number): string {
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  if (!Number.isFinite(x)) return Number.isNaN(x) ? 'NaN' : x > 0 ? 'Infinity' : '-Infinity';
  const magnitude = Math.abs(x);
  if (magnitude >= 1e-4 && magnitude < 1e16) {
    // JavaScript prints fixed notation over the whole of this range (it switches at 1e-7 and 1e21).
    const fixed = String(x);
    return fixed.includes('.') ? fixed : `${fixed}.0`;
  }
  // toExponential() without an argument gives the shortest round-trip digits (ECMA-262 §21.1.3.2).
  const exponential = x.toExponential();
  const e = exponential.indexOf('e');
  const sign = exponential.charAt(e + 1);
  const digits = exponential.slice(e + 2);
  return `${exponential.slice(0, e)}e${sign}${digits.length < 2 ? `0${digits}` : digits}`;
}

/** Python's `str(int(literal))` for a JSON integer literal: only `-0` changes. */
export function pythonIntText(literal: string): string {
  return literal === '-0' ? '0' : literal;
}
