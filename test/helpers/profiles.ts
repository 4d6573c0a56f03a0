/** Profile files written for a test, and the check that one is refused where it is wrong. */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { expect } from 'vitest';
import { ProfileError } from '../../src/errors.js';
import { agent } from '../../src/session/agent.js';
import { expectAuraError } from './errors.js';
import { tempDir } from './temp.js';

/** Writes a profile file and returns its path. */
export function writeProfile(text: string): string {
  const file = path.join(tempDir(), 'profile.yaml');
  fs.writeFileSync(file, text);
  return file;
}

/** Loads an agent from `text` and expects a ProfileError at this line and key, with a message matching. */
export function expectProfileRefused(text: string, line: number, key: string, message: RegExp): ProfileError {
  const file = writeProfile(text);
  const error = expectAuraError(() => agent('acme/bot', { home: tempDir(), profileFile: file }), ProfileError, 'PROFILE_INVALID');
  expect(error.data).toEqual({ path: file, line, key });
  expect(error.message).toMatch(message);
  expect(error.message.startsWith(`${file}:${line}: `)).toBe(true);
  return error;
}
