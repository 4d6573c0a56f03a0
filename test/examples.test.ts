/** Every example under examples/ runs as a user would run it, offline, and checks its own result. */

import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from './helpers/fixtures.js';
import { tempDir } from './helpers/temp.js';

function runExample(command: string, file: string): { status: number; stdout: string; stderr: string } {
  const run = spawnSync(command, [path.join(REPO, 'examples', file)], { cwd: REPO, encoding: 'utf8', env: { ...process.env, AURA_HOME: tempDir(), NO_COLOR: '1' } });
  return { status: run.status ?? -1, stdout: run.stdout, stderr: run.stderr };
}

describe('examples', () => {
  it.each([
    ['ai-sdk.mjs', /answer: Sunny in Lisbon\.\n.*verifies\)\ndenied: 1 call/],
    ['langchain.mjs', /interrupt: refund needs a person's approval[\s\S]*answer: Refunded order 42\.\n.*verifies\)/],
    ['openai-agents.mjs', /approval asked for: transfer\nanswer: Transferred 50\.\n.*verifies\)/],
  ])('%s runs and checks itself', (file, expected) => {
    const run = runExample(process.execPath, file);
    expect(run.stderr).toBe('');
    expect(run).toMatchObject({ status: 0 });
    expect(run.stdout).toMatch(expected);
  });

  it('claude-code.sh plays a Claude Code session through aura hook claude-code', () => {
    const run = runExample('bash', 'claude-code.sh');
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('"permissionDecision":"ask"');
    expect(run.stdout).toMatch(/examples\/claude-code +\S+ \S+ +\d+ +\w+ +intact +closed/);
  });
});
