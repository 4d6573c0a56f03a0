import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { REPO } from '../helpers/fixtures.js';
import { tempDir } from '../helpers/temp.js';

/** The frameworks' packages and OpenTelemetry: optional peers, loaded only by the subpath that needs one. */
const PEERS = /^(?:ai|ai\/.*|@ai-sdk\/.*|@langchain\/.*|@openai\/.*|@opentelemetry\/.*)$/;

/** Imports a built module in a fresh process that refuses to resolve any optional peer; returns what it refused. */
function peersLoadedBy(module: string, extra = ''): string {
  const dir = tempDir();
  const hooks = path.join(dir, 'hooks.mjs');
  fs.writeFileSync(hooks, `export async function resolve(specifier, context, next) {\n  if (${PEERS.toString()}.test(specifier)) throw new Error('peer loaded: ' + specifier);\n  return next(specifier, context);\n}\n`);
  const register = path.join(dir, 'register.mjs');
  fs.writeFileSync(register, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
  const code = `await import(${JSON.stringify(pathToFileURL(path.join(REPO, 'dist', module)).href)});${extra}`;
  const run = spawnSync(process.execPath, ['--import', pathToFileURL(register).href, '--input-type=module', '-e', code], { encoding: 'utf8', cwd: REPO });
  return /peer loaded: (\S+)/.exec(run.stderr)?.[1] ?? (run.status === 0 ? '' : `exit ${run.status}: ${run.stderr}`);
}

describe('optional peers', () => {
  it('importing aura-harness loads no framework and no OpenTelemetry package', () => {
    expect(peersLoadedBy('index.js')).toBe('');
  });

  it('the Claude Code hook path loads none of them either', () => {
    expect(peersLoadedBy('cli/hook-claude-code.js')).toBe('');
  });

  it('each subpath loads its own framework (so the check above can fail)', () => {
    expect(peersLoadedBy('adapters/ai-sdk/index.js')).toBe('ai');
    expect(peersLoadedBy('adapters/langchain/index.js')).toMatch(/^@langchain\/core\//);
  });

  it('the package exports each adapter as its own subpath', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { exports: Record<string, unknown>; bin: Record<string, string>; peerDependenciesMeta: Record<string, { optional: boolean }> };
    expect(Object.keys(pkg.exports)).toEqual(['.', './ai-sdk', './langchain', './openai-agents', './package.json']);
    expect(pkg.bin).toEqual({ aura: 'dist/cli/bin.cjs', 'aura-harness': 'dist/cli/bin.cjs' });
    expect(Object.values(pkg.peerDependenciesMeta).every((meta) => meta.optional)).toBe(true);
  });
});
