/** Reading the shape of values read from trails and summaries, where any key may hold anything. */

import type { JsonObject } from './record.js';

/** The value if it is a JSON object, else an empty one. */
export function objectOf(value: unknown): JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as JsonObject) : {};
}

/** True when the value is a count: a safe integer, zero or more. */
export function isCount(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}

/** The value if it is a string, else null. */
export function stringOf(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

/**
 * A value from outside, as a refusal names it: a scalar as it is (a string cut to 40 characters),
 * anything else by its kind. A message never repeats a whole value it was sent, nor walks one
 * nested past what a stack holds.
 */
export function valueExcerpt(value: unknown): string {
  if (typeof value === 'string') return value.length > 40 ? `${JSON.stringify(value.slice(0, 40))}… (${value.length} characters)` : JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint' || value === null || value === undefined) return String(value);
  return Array.isArray(value) ? `a list of ${value.length}` : `a ${typeof value}`;
}
