/** `toThrowWithCode`, in the spirit of sigstore's matcher: checks the class and the stable code. */

import { inspect } from 'node:util';
import { expect } from 'vitest';
import type { AuraError } from '../../src/errors.js';

/** Runs `action`, expects it to throw an instance of `type` with `code`, and returns the error. */
export function expectAuraError<T extends AuraError<string, unknown>>(
  action: () => unknown,
  type: abstract new (...args: never[]) => T,
  code: string,
): T {
  let thrown: unknown;
  try {
    action();
  } catch (error) {
    thrown = error;
  }
  expect(thrown, 'expected an error to be thrown').toBeInstanceOf(type);
  expect((thrown as T).code).toBe(code);
  return thrown as T;
}

/** The async form of {@link expectAuraError}. */
export async function expectAuraRejection<T extends AuraError<string, unknown>>(
  action: () => Promise<unknown>,
  type: abstract new (...args: never[]) => T,
  code: string,
): Promise<T> {
  let thrown: unknown;
  try {
    await action();
  } catch (error) {
    thrown = error;
  }
  expect(thrown, 'expected a rejection').toBeInstanceOf(type);
  expect((thrown as T).code).toBe(code);
  return thrown as T;
}

/**
 * Every text a thrown value carries, as a caller could reach it: how it prints (hidden fields
 * too), and each own field at any depth, enumerable or not, keys included, its cause's too.
 */
export function everyText(value: unknown): string {
  const texts: string[] = [inspect(value, { showHidden: true, depth: null })];
  const seen = new Set<unknown>();
  const walk = (item: unknown): void => {
    if (typeof item === 'string') texts.push(item);
    if (item === null || (typeof item !== 'object' && typeof item !== 'function') || seen.has(item)) return;
    seen.add(item);
    for (const key of Reflect.ownKeys(item)) {
      texts.push(String(key));
      const field = Object.getOwnPropertyDescriptor(item, key);
      walk(field?.get === undefined ? field?.value : (item as Record<PropertyKey, unknown>)[key]);
    }
    if (item instanceof Error) walk(item.name);
  };
  walk(value);
  return texts.join('\n');
}
