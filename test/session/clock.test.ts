/** The trail's wall clock (session/ids.ts), in a file of its own: one test moves the wall clock. */

import { afterEach, describe, expect, it, vi } from 'vitest';
import { systemClock } from '../../src/session/ids.js';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('systemClock', () => {
  it('tells the wall time in microseconds', () => {
    const readings: number[] = [];
    for (let i = 0; i < 1000; i++) {
      const before = Date.now();
      const micros = systemClock();
      const after = Date.now();
      expect(Number.isInteger(micros)).toBe(true);
      // It may run up to two milliseconds from Date between its checks, and is back once a second.
      expect(micros).toBeGreaterThan((before - 1000) * 1000);
      expect(micros).toBeLessThan((after + 1000) * 1000);
      readings.push(micros);
    }
    // Microseconds, not milliseconds times a thousand.
    expect(readings.some((micros) => micros % 1000 !== 0)).toBe(true);
  });

  it('catches up with a wall clock set since, within a second', async () => {
    const realNow = Date.now.bind(Date);
    const ahead = 60_000;
    expect(Math.abs(systemClock() / 1000 - realNow())).toBeLessThan(1000);
    vi.spyOn(Date, 'now').mockImplementation(() => realNow() + ahead);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    // The next reading checks the wall clock again and takes it.
    expect(Math.abs(systemClock() / 1000 - (realNow() + ahead))).toBeLessThan(100);
    expect(Math.abs(systemClock() / 1000 - (realNow() + ahead))).toBeLessThan(100);
  });
});
