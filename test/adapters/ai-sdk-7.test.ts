/**
 * The AI SDK scenario on AI SDK 7, which needs Node 22: run by the Node 22 binary from the npm
 * registry's `node` package, with ai@7, both installed by scripts/install-compat.sh (`npm test`
 * runs it first, as its pretest step).
 */

import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { SessionResult } from '../../src/session/session.js';
import { APPROVER, expectScenarioTrail, SCENARIO_PROFILE } from '../helpers/adapter-scenario.js';
import { REPO } from '../helpers/fixtures.js';
import { tempDir } from '../helpers/temp.js';

const COMPAT = path.join(REPO, '.compat', 'ai-sdk-7');
const NODE_22 = path.join(COMPAT, 'node_modules', '.bin', 'node');
const installed = fs.existsSync(NODE_22) && fs.existsSync(path.join(COMPAT, 'node_modules', 'ai', 'package.json'));

describe('aura-harness/ai-sdk with AI SDK 7 on Node 22', () => {
  it('guards the same scenario as AI SDK 6, with the V4 mock model', () => {
    expect(installed, 'Node 22 and ai@7 in .compat/ai-sdk-7: run scripts/install-compat.sh').toBe(true);
    const runner = path.join(COMPAT, 'scenario.mjs');
    fs.writeFileSync(
      runner,
      `import * as ai from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { agent } from 'aura-harness';
import * as adapter from 'aura-harness/ai-sdk';
import { aiSdkScenario } from ${JSON.stringify(pathToFileURL(path.join(REPO, 'test', 'fixtures', 'ai-sdk-scenario.ts')).href)};
const [home, profile, principal] = process.argv.slice(2);
const session = agent('acme/ai-sdk-7', { home, ...JSON.parse(profile) }).session({ traceParent: null });
const outcome = await aiSdkScenario(ai, MockLanguageModelV4, adapter, session, principal);
const result = await session.close();
const version = JSON.parse((await import('node:fs')).readFileSync(new URL('./node_modules/ai/package.json', import.meta.url), 'utf8')).version;
console.log(JSON.stringify({ outcome, log_path: result.log_path, otel: result.exports.otel, node: process.version, ai: version }));
`,
    );
    const run = spawnSync(NODE_22, ['--preserve-symlinks', '--no-warnings', runner, tempDir(), JSON.stringify(SCENARIO_PROFILE), APPROVER], { cwd: COMPAT, encoding: 'utf8' });
    expect(run.stderr).toBe('');
    const report = JSON.parse(run.stdout) as { outcome: Record<string, unknown> & { ran: string[] }; log_path: string; otel: string; node: string; ai: string };
    expect(report.node).toMatch(/^v22\./);
    expect(report.ai).toMatch(/^7\./);
    expect(report.outcome).toMatchObject({ firstApproval: 'call_p1', secondApproval: 'call_p2', stoppedWith: 'LOOP_BROKEN' });
    expect(report.outcome['deniedPrompt']).toContain('aura refused this call (POLICY_DENIED)');
    expect(report.outcome.ran.filter((r) => r.startsWith('pay'))).toEqual(['pay {"amount":120}']);
    expectScenarioTrail({ log_path: report.log_path, exports: { jsonl: report.log_path, otel: report.otel } } as SessionResult, { allowed: 'call_w1', denied: 'call_d1', approved: 'call_p1', otherPay: 'call_p2' });
  });
});
