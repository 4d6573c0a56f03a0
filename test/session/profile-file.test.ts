import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ProfileError } from '../../src/errors.js';
import { agent } from '../../src/session/agent.js';
import { readProfileFile } from '../../src/session/profile-file.js';
import { expectAuraError } from '../helpers/errors.js';
import { tempDir } from '../helpers/temp.js';

/** A profile file, and a cache folder beside it. */
function setup(text: string): { file: string; cacheDir: string } {
  const dir = tempDir();
  const file = path.join(dir, 'claude.yaml');
  fs.writeFileSync(file, text);
  return { file, cacheDir: path.join(dir, 'cache') };
}

/** The same text, touched: this process's memory of the file no longer applies. */
function touch(file: string, second: number): void {
  fs.utimesSync(file, second, second);
}

function kept(cacheDir: string): string[] {
  return fs.existsSync(cacheDir) ? fs.readdirSync(cacheDir) : [];
}

describe('readProfileFile with a cache folder', () => {
  it('keeps the parsed profile and reads it from there while the text is the same, in the same key order', () => {
    const { file, cacheDir } = setup('agent_ref: acme/claude\nvariables: { zone: eu, account: 7 }\nrules:\n  - { type: deny_tools, tools: [drop] }\n');
    const first = readProfileFile(file, { cacheDir });
    expect(kept(cacheDir)).toHaveLength(1);
    const cache = path.join(cacheDir, kept(cacheDir)[0] as string);
    // What the next read takes is the cache (here, changed by hand), not the YAML.
    const body = JSON.parse(fs.readFileSync(cache, 'utf8')) as { value: Record<string, unknown> };
    fs.writeFileSync(cache, JSON.stringify({ ...body, value: { ...body.value, purpose: 'from the cache' } }));
    touch(file, 1000);
    const second = readProfileFile(file, { cacheDir });
    expect(second.values.purpose).toBe('from the cache');
    expect(Object.keys(second.values.variables as object)).toEqual(['zone', 'account']);
    expect(second.values.rules).toEqual(first.values.rules);
    // Another text is parsed again, and kept in its place.
    fs.appendFileSync(file, 'purpose: from the file\n');
    expect(readProfileFile(file, { cacheDir }).values.purpose).toBe('from the file');
    expect(kept(cacheDir)).toHaveLength(1);
  });

  it('names the line of a key from the YAML when a profile read from the cache is refused later', () => {
    const { file, cacheDir } = setup('agent_ref: acme/claude\nrules:\n  - { type: deny_tools, tools: [drop] }\n  - { type: no_such_rule }\n');
    readProfileFile(file, { cacheDir });
    touch(file, 2000);
    expect(readProfileFile(file, { cacheDir }).values.rules).toHaveLength(2);
    const error = expectAuraError(() => agent('acme/claude', { home: tempDir(), profileFile: file }), ProfileError, 'PROFILE_INVALID');
    expect(error.data).toMatchObject({ path: file, line: 4 });
  });

  it('keeps nothing of a profile JSON cannot carry, or one that is refused', () => {
    const infinite = setup('agent_ref: acme/claude\nvariables: { budget: .inf }\n');
    expect(readProfileFile(infinite.file, { cacheDir: infinite.cacheDir }).values.variables).toEqual({ budget: Infinity });
    expect(kept(infinite.cacheDir)).toEqual([]);
    const refused = setup('agent_ref: acme/claude\nrulez: []\n');
    expectAuraError(() => readProfileFile(refused.file, { cacheDir: refused.cacheDir }), ProfileError, 'PROFILE_INVALID');
    expect(kept(refused.cacheDir)).toEqual([]);
  });
});
