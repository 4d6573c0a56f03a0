/**
 * What a user or the file system can cause ends as a clear message and a documented exit code,
 * never a stack trace or exit 70: a reader that stops reading, a folder where a file should be, an
 * export that cannot be renamed into place; and with --json, the error is a JSON object on stdout.
 * (A full disk and a read-only home are in test/faults/disk.test.ts: they need tmpfs mounts.)
 */

import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ExportError } from '../../src/errors.js';
import { stagingPathOf } from '../../src/export/commit.js';
import { verifyTrail } from '../../src/spine/verify.js';
import { aura, AURA_BIN, auraJson } from '../helpers/cli.js';
import { expectAuraRejection } from '../helpers/errors.js';
import { demoSession, openSession } from '../helpers/sessions.js';
import { tempDir } from '../helpers/temp.js';

const IS_A_FOLDER = 'it is a folder, not a file (EISDIR)';

/** Runs `aura …args | head -2` in a shell, as a user would; returns aura's exit status, its stderr and what head printed. */
function pipedToHead(home: string, args: readonly string[]): { status: number; stderr: string; stdout: string } {
  const stderr = path.join(tempDir(), 'stderr');
  const quoted = [process.execPath, AURA_BIN, ...args].map((a) => `'${a}'`).join(' ');
  const run = spawnSync('bash', ['-c', `AURA_HOME='${home}' ${quoted} 2>'${stderr}' | head -2; exit "\${PIPESTATUS[0]}"`], { encoding: 'utf8' });
  return { status: run.status ?? -1, stderr: fs.readFileSync(stderr, 'utf8'), stdout: run.stdout };
}

describe('aura writing to a reader that stops reading', () => {
  it('ends quietly when `aura logs <id> | head -2` closes the pipe, with or without --json', async () => {
    const { session, home } = openSession();
    // Far more than a pipe holds, so aura is still writing when head has gone.
    for (let i = 0; i < 5_000; i++) session.emit('turn.start', { input: `question ${i} ${'x'.repeat(60)}` });
    await session.close();
    for (const args of [['logs', session.id], ['logs', session.id, '--json']]) {
      const run = pipedToHead(home, args);
      expect(run.stdout.split('\n').filter((line) => line !== '')).toHaveLength(2);
      expect({ args, stderr: run.stderr, status: run.status }).toEqual({ args, stderr: '', status: 0 });
    }
  });
});

describe('a folder where a file should be', () => {
  const folder = 'aura_sess_00000000000f';
  let home: string;
  let real: string;
  let trail: string;

  beforeAll(async () => {
    home = tempDir();
    real = await demoSession(home);
    trail = path.join(home, 'sessions', `${folder}.jsonl`);
    fs.mkdirSync(trail);
  });

  it('is no session: the listing and the store leave a folder named like a trail out', () => {
    const list = auraJson(['sessions', 'list'], { home });
    expect(list.status).toBe(0);
    expect((list.json['sessions'] as { session_id: string }[]).map((s) => s.session_id)).toEqual([real]);
    expect(auraJson(['verify', 'store'], { home }).status).toBe(0);
  });

  const commands = [['logs'], ['report', 'show'], ['report', 'html'], ['export'], ['export-otel'], ['verify', 'chain'], ['compare']];
  for (const command of commands) {
    it(`${command.join(' ')} on it exits 2 naming the path`, () => {
      const args = [...command, folder, ...(command[0] === 'compare' ? [real] : [])];
      const run = aura(args, { home, cwd: tempDir() });
      expect(run.status).toBe(2);
      expect(run.stderr).toBe(`aura: cannot read ${trail}: ${IS_A_FOLDER}\n`);
    });
  }

  it("refuses a folder in place of a session's summary or spans with exit 2 naming it", async () => {
    const home = tempDir();
    const id = await demoSession(home);
    const summary = path.join(home, 'sessions', `${id}.summary.json`);
    const otel = path.join(home, 'sessions', `${id}.otel.jsonl`);
    for (const file of [summary, otel]) {
      fs.rmSync(file);
      fs.mkdirSync(file);
    }
    expect(auraJson(['sessions', 'list'], { home }).status).toBe(0);
    const cases: [string[], string][] = [
      [['report', 'show', id], `cannot read ${summary}: ${IS_A_FOLDER}`],
      [['export', id], `cannot read ${summary}: ${IS_A_FOLDER}`],
      [['export', id, '--rebuild'], `export of ${id} failed writing ${summary}: ${IS_A_FOLDER}`],
      [['export-otel', id], `export of ${id} failed writing ${otel}: ${IS_A_FOLDER}`],
    ];
    for (const [args, message] of cases) {
      const run = aura(args, { home });
      expect({ args, status: run.status, stderr: run.stderr }).toEqual({ args, status: 2, stderr: `aura: ${message}\n` });
    }
  });

  it('report html -o <folder> writes <id>.report.html into it', async () => {
    const home = tempDir();
    const id = await demoSession(home);
    const out = tempDir();
    const run = auraJson(['report', 'html', id, '-o', out], { home });
    expect(run.status).toBe(0);
    expect(run.json['path']).toBe(path.join(out, `${id}.report.html`));
    expect(fs.readFileSync(path.join(out, `${id}.report.html`), 'utf8')).toMatch(/^<!doctype html>/i);
  });

  it("fails a session's export with ExportError, not a raw EPERM, when its summary's place is a folder; the trail is whole and nothing is committed", async () => {
    const { session } = openSession();
    session.emit('turn.start', { input: 'hello' });
    fs.mkdirSync(session.files.summary);
    const error = await expectAuraRejection(() => session.close(), ExportError, 'EXPORT_FAILED');
    expect(error.data).toEqual({ session_id: session.id, path: session.files.summary });
    expect(error.message).toContain(IS_A_FOLDER);
    expect(verifyTrail(session.files.trail)).toMatchObject({ hash_chain_valid: true, complete: true });
    expect(fs.statSync(session.files.summary).isDirectory()).toBe(true);
    for (const file of [session.files.otel, stagingPathOf(session.files.summary), stagingPathOf(session.files.otel), `${session.files.summary}.previous`]) expect(fs.existsSync(file), file).toBe(false);
  });
});

describe("a file or folder in the place of aura's own", () => {
  const IS_A_FILE = 'a part of the path is a file, not a folder (ENOTDIR)';
  const cases: [string, (home: string) => void, string[], (home: string) => string][] = [
    ['the sessions folder is a file: sessions list', (home) => fs.writeFileSync(path.join(home, 'sessions'), ''), ['sessions', 'list'], (home) => `cannot read ${path.join(home, 'sessions')}: ${IS_A_FILE}`],
    ['the sessions folder is a file: demo', (home) => fs.writeFileSync(path.join(home, 'sessions'), ''), ['demo'], (home) => `cannot write the trail ${path.join(home, 'sessions')}: ${IS_A_FILE}`],
    ['the agents folder is a file: demo', (home) => fs.writeFileSync(path.join(home, 'agents'), ''), ['demo'], (home) => `cannot write ${path.join(home, 'agents')}: ${IS_A_FILE}`],
    ['the keys folder is a file: keys rotate', (home) => fs.writeFileSync(path.join(home, 'keys'), ''), ['keys', 'rotate'], (home) => `cannot write ${path.join(home, 'keys')}: ${IS_A_FILE}`],
    ['the seal log is a folder: verify store', (home) => fs.mkdirSync(path.join(home, 'seals.jsonl')), ['verify', 'store'], (home) => `cannot read ${path.join(home, 'seals.jsonl')}: ${IS_A_FOLDER}`],
    ['the registry is a folder: demo', (home) => fs.mkdirSync(path.join(home, 'registry_state.json')), ['demo'], (home) => `${path.join(home, 'registry_state.json')}: cannot read: ${IS_A_FOLDER}`],
  ];
  for (const [what, setUp, args, message] of cases) {
    it(`${what}: exits 2 naming the path`, () => {
      const home = tempDir();
      setUp(home);
      const run = aura(args, { home });
      expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 2, stderr: `aura: ${message(home)}\n` });
    });
  }
});

describe('aura --json errors', () => {
  it('prints one JSON object on stdout with the code, message and data, and nothing on stderr', () => {
    const home = tempDir();
    const missing = aura(['export', 'aura_sess_0123456789ab', '--json'], { home });
    expect(missing.status).toBe(2);
    expect(missing.stderr).toBe('');
    expect(JSON.parse(missing.stdout)).toEqual({
      error: { code: 'NOT_FOUND', message: expect.stringContaining('aura_sess_0123456789ab.jsonl') as unknown, data: { path: path.join(home, 'sessions', 'aura_sess_0123456789ab.jsonl') } },
    });
    const hostile = aura(['logs', '../x', '--json'], { home });
    expect(hostile.status).toBe(2);
    expect(JSON.parse(hostile.stdout)).toMatchObject({ error: { code: 'INVALID_SESSION_ID', data: { value: '../x' } } });
  });

  it('names an option that is missing or given where it does nothing', () => {
    const home = tempDir();
    const missing = aura(['mcp', '--http', '0'], { home });
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain('missing --tokens: expected a tokens file');
    for (const command of [['mcp'], ['proxy', '--', process.execPath, '-e', '0']]) {
      const run = aura([...command.slice(0, 1), '--tokens', 'tokens.yaml', ...command.slice(1)], { home });
      expect(run.status).toBe(2);
      expect(run.stderr).toContain('invalid --tokens "tokens.yaml": expected only with --http');
    }
    for (const nice of ['20', '-1', 'low']) {
      const run = aura(['push', '--all', '--store', 'postgres://127.0.0.1:1/none', '--nice', nice], { home });
      expect(run.status, nice).toBe(2);
      expect(run.stderr).toContain(`invalid --nice "${nice}": expected a niceness from 0 to 19`);
    }
  });

  it('prints usage errors as JSON too', () => {
    for (const args of [['verify', 'chain', '--json'], ['logs', 'aura_sess_0123456789ab', '--frobnicate', '--json']]) {
      const run = aura(args, { home: tempDir() });
      expect(run.status).toBe(2);
      expect(run.stderr).toBe('');
      expect(JSON.parse(run.stdout)).toEqual({ error: { code: 'USAGE', message: expect.stringMatching(/missing required argument 'path'|unknown option '--frobnicate'/) as unknown } });
    }
  });
});

describe('report show of a summary with no trail', () => {
  it('refuses one with no verdict, saying why, instead of showing an undefined verdict', () => {
    const home = tempDir();
    const sessions = path.join(home, 'sessions');
    fs.mkdirSync(sessions, { recursive: true });
    fs.writeFileSync(path.join(sessions, 'aura_sess_0123456789ab.summary.json'), '{}');
    const run = aura(['report', 'show', 'aura_sess_0123456789ab'], { home });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('aura_sess_0123456789ab.summary.json is not a summary a report can be read from: it has no audit_report verdict, and there is no trail to build one from');
    expect(run.stdout).toBe('');
  });
});

describe('an error that quotes what it was given', () => {
  it('never repeats a credential in it, on stderr or in --json', () => {
    const home = tempDir();
    const given = 'https://deploy:hunter2-pass-77@example.com/trail.jsonl';
    const text = aura(['verify', 'chain', given], { home });
    expect(text.status).toBe(2);
    expect(text.stderr).toContain('trail not found: https://deploy:[redacted]@example.com/trail.jsonl');
    const json = auraJson(['verify', 'chain', `OPENAI_API_KEY=sk-proj-${'Zx8'.repeat(12)}`], { home });
    expect(json.status).toBe(2);
    expect(json.json).toMatchObject({ error: { code: 'NOT_FOUND', message: expect.stringContaining('OPENAI_API_KEY=[redacted]') } });
    for (const output of [text.stdout + text.stderr, JSON.stringify(json)]) expect(output).not.toMatch(/hunter2-pass-77|Zx8Zx8/);
  });

  it("keeps its own words after a path named like a secret, on stderr and in --json", () => {
    const home = tempDir();
    const folder = path.join(tempDir(), 'passwd');
    fs.mkdirSync(folder);
    expect(aura(['verify', 'chain', folder], { home }).stderr).toContain(`cannot read ${folder}: ${IS_A_FOLDER}`);
    const id = auraJson(['export', '../../etc/passwd', '--json'], { home });
    expect(id.status).toBe(2);
    expect(id.json).toEqual({ error: { code: 'INVALID_SESSION_ID', message: `invalid session id "../../etc/passwd": expected 'aura_sess_' followed by 12 lowercase hex digits`, data: { value: '../../etc/passwd' } } });
  });

  it('names an unknown option without the value it was given (a store URL, a header), on stderr and in --json', () => {
    const home = tempDir();
    const cases = [
      { args: ['verify', 'chain', 'aura_sess_0123456789ab', '--store=postgres://admin:Pw-S3cret-998877@127.0.0.1/fleet'], option: '--store' },
      { args: ['push', '--stroe=postgres://admin:Pw-S3cret-998877@127.0.0.1/fleet'], option: '--stroe' },
      { args: ['export-otel', 'aura_sess_0123456789ab', '--headers=x-honeycomb-team=Pw-S3cret-998877'], option: '--headers' },
    ];
    for (const { args, option } of cases) {
      const text = aura(args, { home });
      expect(text.status, args.join(' ')).toBe(2);
      expect(text.stderr).toContain(`unknown option '${option}=…'`);
      const json = auraJson([...args, '--json'], { home });
      expect(json.status).toBe(2);
      expect(json.json).toEqual({ error: { code: 'USAGE', message: expect.stringContaining(`unknown option '${option}=…'`) as unknown } });
      for (const output of [text.stdout + text.stderr, JSON.stringify(json)]) expect(output).not.toContain('Pw-S3cret-998877');
    }
  });
});
