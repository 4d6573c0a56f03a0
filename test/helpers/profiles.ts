/** Profile files for the tests of profile refusals. */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { expect } from 'vitest';
import { ProfileError } from '../../src/errors.js';
import { agent } from '../../src/session/agent.js';
import { expectAuraError } from './errors.js';
import { tempDir } from './temp.js';

/** Writes a profile file and returns its path. */
export function profileFile(text: string): string {
  const file = path.join(tempDir(), 'profile.yaml');
  fs.writeFileSync(file, text);
  return file;
}

/** Expects the profile `text` to be refused with a ProfileError naming its file, `line` and `key`. */
export function expectProfileRefused(text: string, line: number, key: string, message: RegExp): ProfileError {
  const file = profileFile(text);
  const error = expectAuraError(() => agent('acme/bot', { home: tempDir(), profileFile: file }), ProfileError, 'PROFILE_INVALID');
  expect(error.data).toMatchObject({ path: file, line, key });
  expect(error.message).toMatch(message);
  expect(error.message.startsWith(`${file}:${line}: `)).toBe(true);
  return error;
}
