import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { aura, auraJson, STACK_TRACE } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

describe('aura report html', () => {
  it('writes <id>.report.html into the current folder by default and prints its path', () => {
    const home = tempDir();
    const cwd = tempDir();
    const id = String(auraJson(['demo'], { home }).json['session_id']);
    const run = aura(['report', 'html', id], { home, cwd });
    expect(run.status).toBe(0);
    const file = path.join(cwd, `${id}.report.html`);
    expect(run.stdout.split('\n')[0]).toBe(file);
    expect(fs.readFileSync(file, 'utf8')).toMatch(/^<!doctype html>/);
    const json = auraJson(['report', 'html', id, '-o', path.join(cwd, 'r.html')], { home, cwd });
    expect(json.json).toMatchObject({ session_id: id, path: path.join(cwd, 'r.html'), bytes: fs.statSync(path.join(cwd, 'r.html')).size, verdict: 'fail' });
    // Nothing was added to the sessions folder.
    expect(fs.readdirSync(path.join(home, 'sessions')).filter((name) => name.includes('report'))).toEqual([]);
  });

  it('refuses a bad id, a missing session and an unwritable output with exit 2 and no stack trace', () => {
    const home = tempDir();
    const id = String(auraJson(['demo'], { home }).json['session_id']);
    const cases: [string[], RegExp][] = [
      [['report', 'html', '../../etc/passwd'], /invalid session id/],
      [['report', 'html', 'aura_sess_000000000000'], /not found/],
      [['report', 'html', id, '-o', path.join(home, 'no', 'such', 'folder', 'r.html')], /failed writing .*r\.html/],
    ];
    for (const [args, message] of cases) {
      const run = aura(args, { home });
      expect({ args, status: run.status }).toEqual({ args, status: 2 });
      expect(run.stderr).toMatch(message);
      expect(run.stderr).not.toMatch(STACK_TRACE);
    }
  });
});

describe('aura ui', () => {
  it('refuses a port that is not 0-65535 with exit 2', () => {
    for (const port of ['70000', '-1', 'http']) {
      const run = aura(['ui', '--port', port], { home: tempDir() });
      expect(run.status).toBe(2);
      expect(run.stderr).toContain('invalid --port');
    }
  });
});
