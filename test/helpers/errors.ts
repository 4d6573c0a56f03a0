/** `toThrowWithCode`, in the spirit of sigstore's matcher: checks the class and the stable code. */

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
