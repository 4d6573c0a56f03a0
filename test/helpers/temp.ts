/** Temporary folders for tests, removed after each test file. */

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll } from 'vitest';

const made: string[] = [];

afterAll(() => {
  for (const dir of made) fs.rmSync(dir, { recursive: true, force: true });
});

/** A new empty folder under the system temp folder. */
export function tempDir(prefix = 'aura-test-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/** A home whose config keeps the seal log's anchor copy in a folder of its own (appended to a config the home has). */
export function anchoredHome(home = tempDir()): { home: string; anchorDir: string } {
  const anchorDir = tempDir();
  fs.appendFileSync(path.join(home, 'config.yaml'), `anchor_dir: ${anchorDir}\n`);
  return { home, anchorDir };
}
