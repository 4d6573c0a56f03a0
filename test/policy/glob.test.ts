import { describe, expect, it } from 'vitest';
import { compileGlob, GlobSyntaxError } from '../../src/policy/glob.js';

describe('compileGlob', () => {
  const cases: [string, string[], string[]][] = [
    ['shell.*', ['shell.exec', 'shell.', 'shell.a.b'], ['shell', 'myshell.exec', 'Shell.exec']],
    ['fs.delete', ['fs.delete'], ['fs_delete', 'fs.deleted', 'xfs.delete']],
    ['mail.?end', ['mail.send', 'mail.lend'], ['mail.spend', 'mail.end']],
    ['[abc]*', ['a', 'beta', 'c.x'], ['d', '']],
    ['[!a]x', ['bx', 'cx'], ['ax', 'x']],
    ['a\\*b', ['a*b'], ['axb', 'ab']],
    ['*', ['anything', ''], []],
    ['(x)+$', ['(x)+$'], ['x', 'xx']],
  ];
  for (const [pattern, yes, no] of cases) {
    it(`matches ${JSON.stringify(pattern)} literally but for its wildcards`, () => {
      const glob = compileGlob(pattern);
      for (const name of yes) expect(glob.test(name), name).toBe(true);
      for (const name of no) expect(glob.test(name), name).toBe(false);
    });
  }

  for (const bad of ['', 'abc[', 'trailing\\']) {
    it(`refuses ${JSON.stringify(bad)}`, () => {
      expect(() => compileGlob(bad)).toThrow(GlobSyntaxError);
    });
  }
});
