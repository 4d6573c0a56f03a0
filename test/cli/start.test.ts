/**
 * What the built command loads before it answers. Every hook a person waits on starts a process,
 * so a module that only some commands need (the ES module loader, worker threads, sockets) must
 * not be loaded by the others: a static import added in the wrong place shows here, not only as a
 * slower benchmark.
 */

import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { AURA_BIN } from '../helpers/cli.js';
import { REPO } from '../helpers/fixtures.js';
import { tempDir } from '../helpers/temp.js';

const PRELOAD = path.join(REPO, 'test', 'fixtures', 'module-list.cjs');
const TRAIL = path.join(REPO, 'test', 'fixtures', 'aura-py', 'sessions', fs.readdirSync(path.join(REPO, 'test', 'fixtures', 'aura-py', 'sessions')).find((name) => name.endsWith('.jsonl')) as string);
// Loaded only by the commands that use them: live export's thread, Node's ES module loader (and the
// promise-based file reads it loads) for `import`, the recursive remover of fs.rmSync.
const NOT_AT_START = ['NativeModule worker_threads', 'NativeModule internal/modules/esm/loader', 'NativeModule internal/fs/promises', 'NativeModule internal/fs/rimraf'];

/** The modules a process loaded beyond what a bare Node start loads. */
function loadedBeyondNode(args: readonly string[], input = ''): string[] {
  const dir = tempDir();
  const run = (argv: readonly string[], file: string): string[] => {
    const list = path.join(dir, file);
    const result = spawnSync(process.execPath, ['-r', PRELOAD, ...argv], { input, encoding: 'utf8', env: { ...process.env, AURA_TEST_MODULE_LIST: list, AURA_HOME: dir } });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    return JSON.parse(fs.readFileSync(list, 'utf8')) as string[];
  };
  const bare = new Set(run(['-e', '0'], 'bare.json'));
  return run([AURA_BIN, ...args], 'command.json').filter((name) => !bare.has(name));
}

describe('the built command at its start', () => {
  it('a PreToolUse hook loads no ES module loader, worker thread or socket module', () => {
    const input = { session_id: 'start-test', hook_event_name: 'PreToolUse', cwd: REPO, permission_mode: 'default', tool_name: 'Bash', tool_input: { command: 'ls' }, tool_use_id: 'toolu_1' };
    const loaded = loadedBeyondNode(['hook', 'claude-code'], JSON.stringify(input));
    // The hook did its work: it hashed events (node:crypto) and answered.
    expect(loaded).toContain('NativeModule crypto');
    for (const name of NOT_AT_START) expect(loaded).not.toContain(name);
    // Sockets too: the hook writes its answer to the pipe's descriptor, and PII masking (which checks IPv6 addresses with node:net) is off.
    expect(loaded).not.toContain('NativeModule net');
    // Nor perf_hooks, which the `performance` global loads: the trail's clock is the monotonic one.
    expect(loaded).not.toContain('NativeModule perf_hooks');
  });

  it('verify chain loads none of them either (its output is a stream: a pipe here, so sockets are in)', () => {
    const loaded = loadedBeyondNode(['verify', 'chain', TRAIL]);
    expect(loaded).toContain('NativeModule crypto');
    for (const name of NOT_AT_START) expect(loaded).not.toContain(name);
  });
});
