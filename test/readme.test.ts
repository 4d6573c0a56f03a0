/**
 * The README's first example, as a reader copies it: the plain-JavaScript form runs on the Node
 * running the tests (20 and later) against the built package, imported by its name as a user's
 * project would, and records the same session as the TypeScript form with `await using`.
 */

import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { listSessionIds, sessionFiles } from '../src/store/session-files.js';
import { REPO } from './helpers/fixtures.js';
import { tempDir } from './helpers/temp.js';

/** The fenced blocks of one README section, in order, with their language. */
function blocksOf(section: string): { lang: string; code: string }[] {
  const readme = fs.readFileSync(path.join(REPO, 'README.md'), 'utf8');
  const start = readme.indexOf(`\n## ${section}\n`);
  expect(start, `README section ${section}`).toBeGreaterThan(0);
  const end = readme.indexOf('\n## ', start + 1);
  const text = readme.slice(start, end < 0 ? undefined : end);
  return [...text.matchAll(/```(\w+)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1] ?? '', code: m[2] ?? '' }));
}

/** Runs a snippet as a file of a user's project that has aura-harness installed; returns the session's event kinds. */
function runAsUser(fileName: string, code: string, runner: readonly string[]): { status: number; stderr: string; kinds: string[] } {
  const project = tempDir('aura-readme-');
  fs.mkdirSync(path.join(project, 'node_modules'));
  fs.symlinkSync(REPO, path.join(project, 'node_modules', 'aura-harness'), 'dir');
  fs.writeFileSync(path.join(project, 'package.json'), '{"type": "module"}\n');
  fs.writeFileSync(path.join(project, fileName), code);
  const home = path.join(project, '.aura');
  const run = spawnSync(process.execPath, [...runner, fileName], { cwd: project, env: { ...process.env, AURA_HOME: home }, encoding: 'utf8' });
  const sessions = path.join(home, 'sessions');
  const kinds = listSessionIds(sessions).flatMap((id) =>
    fs
      .readFileSync(sessionFiles(sessions, id).trail, 'utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => (JSON.parse(line) as { kind: string }).kind),
  );
  return { status: run.status ?? -1, stderr: run.stderr, kinds };
}

describe("the README's first example", () => {
  const [typescript, javascript] = blocksOf('Use it from code');

  it('shows the plain-JavaScript form right after the TypeScript one, without await using', () => {
    expect(typescript?.lang).toBe('ts');
    expect(typescript?.code).toContain('await using');
    expect(javascript?.lang).toBe('js');
    expect(javascript?.code).not.toMatch(/\busing\b/);
  });

  it('runs as plain JavaScript, and records what the TypeScript form records', () => {
    const plain = runAsUser('example.mjs', javascript?.code ?? '', []);
    expect(plain.stderr).toBe('');
    expect(plain.status).toBe(0);
    expect(plain.kinds).toEqual(['membrane.ingress', 'session.open', 'turn.start', 'tool.call', 'tool.result', 'task.complete', 'session.close']);
    const typed = runAsUser('example.ts', typescript?.code ?? '', ['--import', path.join(REPO, 'node_modules', 'tsx', 'dist', 'esm', 'index.mjs')]);
    expect(typed.stderr).toBe('');
    expect(typed.kinds).toEqual(plain.kinds);
  });
});
