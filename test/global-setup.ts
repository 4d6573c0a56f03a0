/** Builds dist/ once before the suites that run the real `aura` binary. */

import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

export default function setup(): () => void {
  // The readers' cache (store/index-file.ts) of every run goes to a folder of its own, not the user's.
  const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'aura-test-cache-'));
  process.env['AURA_CACHE_DIR'] = cache;
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  // A run started by a test (test/faults/disk.test.ts in a namespace) uses the dist/ its parent built.
  if (process.env['AURA_TEST_DIST_BUILT'] === '1') return () => fs.rmSync(cache, { recursive: true, force: true });
  execFileSync(process.execPath, [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', path.join(root, 'tsconfig.build.json')], {
    stdio: 'inherit',
  });
  // tsc copies no other files: the report pages' CSS and JS go next to the built module that inlines them.
  fs.cpSync(path.join(root, 'src', 'report', 'assets'), path.join(root, 'dist', 'report', 'assets'), { recursive: true });
  // The command's one-file bundles (scripts/build-bundles.mjs), which dist/cli/bin.cjs runs.
  execFileSync(process.execPath, [path.join(root, 'scripts', 'build-bundles.mjs')], { stdio: 'inherit' });
  return () => fs.rmSync(cache, { recursive: true, force: true });
}
