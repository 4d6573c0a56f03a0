import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { removeFile, replaceWhole } from '../../src/store/fs-write.js';
import { tempDir } from '../helpers/temp.js';

describe('removeFile', () => {
  it('removes a file, leaves a missing one be, and refuses a folder as rmSync does', () => {
    const dir = tempDir();
    const file = path.join(dir, 'lock');
    fs.writeFileSync(file, 'x');
    removeFile(file);
    expect(fs.existsSync(file)).toBe(false);
    expect(() => removeFile(file)).not.toThrow();
    expect(() => removeFile(dir)).toThrow(/EISDIR|EPERM/);
    expect(fs.existsSync(dir)).toBe(true);
  });

  it('removes a symlink, not what it leads to', () => {
    const dir = tempDir();
    const target = path.join(dir, 'target');
    fs.writeFileSync(target, 'kept');
    fs.symlinkSync(target, path.join(dir, 'link'));
    removeFile(path.join(dir, 'link'));
    expect(fs.existsSync(path.join(dir, 'link'))).toBe(false);
    expect(fs.readFileSync(target, 'utf8')).toBe('kept');
  });
});

describe('replaceWhole', () => {
  it('replaces a file whole and leaves no staging file', () => {
    const dir = tempDir();
    const file = path.join(dir, 'state');
    expect(replaceWhole(file, 'one')).toBe(true);
    expect(replaceWhole(file, 'two')).toBe(true);
    expect(fs.readFileSync(file, 'utf8')).toBe('two');
    expect(fs.readdirSync(dir)).toEqual(['state']);
  });
});
