import { execFileSync } from 'node:child_process';
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

  it('never writes over the record it was made from, nor over a pipe or a link: exit 2, the record as it was', () => {
    const home = tempDir();
    const id = String(auraJson(['demo'], { home }).json['session_id']);
    const trail = path.join(home, 'sessions', `${id}.jsonl`);
    const pipe = path.join(tempDir(), 'page.fifo');
    execFileSync('mkfifo', [pipe]);
    const link = path.join(tempDir(), 'page.html');
    fs.symlinkSync(trail, link);
    const before = [trail, path.join(home, 'seals.jsonl')].map((file) => fs.readFileSync(file, 'utf8'));
    for (const output of [trail, path.join(home, 'sessions', `${id}.summary.json`), path.join(home, 'seals.jsonl'), pipe, link]) {
      const run = aura(['report', 'html', id, '-o', output], { home });
      expect({ output, status: run.status }).toEqual({ output, status: 2 });
      expect(run.stderr).toMatch(/--output/);
    }
    expect([trail, path.join(home, 'seals.jsonl')].map((file) => fs.readFileSync(file, 'utf8'))).toEqual(before);
    expect(fs.lstatSync(pipe).isFIFO()).toBe(true);
    expect(aura(['verify', 'chain', id], { home }).status).toBe(0);
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
