/**
 * The trail under a hostile disk (DESIGN §3): the cases are in disk-cases.ts. They mount tmpfs,
 * which needs root: as root they run here; anyone else (a developer's `npm test`) runs this file
 * again in a user and mount namespace of their own (`unshare --map-root-user --mount`), where
 * they are root and the mounts are theirs alone. Where neither is possible this fails, naming
 * why: it never skips.
 */

import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from '../helpers/fixtures.js';

// Fewer than this many passing cases (their `it(` lines; a loop adds more) means some did not run.
const CASES = (fs.readFileSync(path.join(REPO, 'test', 'faults', 'disk-cases.ts'), 'utf8').match(/^\s*it\(/gm) ?? []).length;

interface VitestJson {
  readonly numPassedTests: number;
  readonly numFailedTests: number;
  readonly numPendingTests: number;
  readonly numTodoTests: number;
  readonly testResults: readonly { readonly assertionResults: readonly { readonly fullName: string; readonly status: string; readonly failureMessages: readonly string[] }[] }[];
}

if (process.getuid?.() === 0) {
  await import('./disk-cases.js');
} else {
  describe(`the hostile-disk cases, in a namespace of their own (uid ${String(process.getuid?.())} is not root)`, () => {
    it('all pass there, none skipped', () => {
      const report = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'aura-disk-ns-')), 'report.json');
      const vitest = path.join(REPO, 'node_modules', 'vitest', 'vitest.mjs');
      const run = spawnSync('unshare', ['--map-root-user', '--mount', process.execPath, vitest, 'run', 'test/faults/disk.test.ts', '--reporter=json', `--outputFile=${report}`], {
        cwd: REPO,
        // This run built dist/ already: the inner one must not rebuild it under the other test files.
        env: { ...process.env, AURA_TEST_DIST_BUILT: '1' },
        encoding: 'utf8',
        timeout: 120_000,
      });
      expect(fs.existsSync(report), `unshare --map-root-user --mount did not run the cases (exit ${String(run.status)}): ${run.stderr || String(run.error)}; run the tests as root, or allow unprivileged user namespaces`).toBe(true);
      const result = JSON.parse(fs.readFileSync(report, 'utf8')) as VitestJson;
      const failed = result.testResults.flatMap((file) => file.assertionResults.filter((test) => test.status !== 'passed').map((test) => `${test.fullName}: ${test.status} ${test.failureMessages.join('; ')}`));
      expect(failed).toEqual([]);
      expect({ failed: result.numFailedTests, skipped: result.numPendingTests + result.numTodoTests }).toEqual({ failed: 0, skipped: 0 });
      expect(result.numPassedTests).toBeGreaterThanOrEqual(CASES);
    }, 150_000);
  });
}
