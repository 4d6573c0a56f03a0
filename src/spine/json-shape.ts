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
