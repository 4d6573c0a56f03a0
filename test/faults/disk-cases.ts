/**
 * The cases of test/faults/disk.test.ts: the trail under a hostile disk (DESIGN §3), a full disk,
 * a read-only folder, and a second writer. Full and read-only disks are real tmpfs mounts, so
 * these run as root (as root, chmod 0555 does not stop writes, hence the read-only mount):
 * disk.test.ts imports them when it is root, and otherwise runs them in a namespace where it is.
 */

import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ExportError, SessionClosedError, SessionLockedError, TrailWriteError, WriteError } from '../../src/errors.js';
import { Agent, agent } from '../../src/session/agent.js';
import type { RecordedEvent, Session } from '../../src/session/session.js';
import { stagingPathOf } from '../../src/export/commit.js';
import { verifyTrail } from '../../src/spine/verify.js';
import { lockPathOf, readLock, TrailWriter } from '../../src/spine/writer.js';
import { aura, AURA_BIN } from '../helpers/cli.js';
import { openSession } from '../helpers/sessions.js';
import { expectAuraError } from '../helpers/errors.js';
import { eventIdsOf, rawTrail, runFixture } from './helpers.js';

const PAGE = 4096;
const KIB = 'k'.repeat(1024);

const mounted: string[] = [];
let root = '';

function mountTmpfs(dir: string, options: string): void {
  fs.mkdirSync(dir, { recursive: true });
  execFileSync('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', dir], { stdio: 'pipe' });
  mounted.push(dir);
}

function unmount(dir: string): void {
  const at = mounted.indexOf(dir);
  if (at < 0) return;
  mounted.splice(at, 1);
  try {
    execFileSync('umount', [dir], { stdio: 'pipe' });
  } catch {
    // Still busy (a file left open by a failed test): detach it so the folder can go.
    execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
  }
}

beforeAll(() => {
  const uid = process.getuid?.();
  if (uid !== 0) {
    throw new Error(`test/faults/disk.test.ts must run as root (uid is ${uid ?? 'unknown'}): it mounts tmpfs to fill a disk and to make a read-only folder`);
  }
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'aura-faults-disk-'));
});

afterAll(() => {
  for (const dir of [...mounted].reverse()) unmount(dir);
  if (root !== '') fs.rmSync(root, { recursive: true, force: true });
});

/** Writes `file` until the disk refuses more; no page is left free afterwards. */
function fillDisk(file: string): void {
  const fd = fs.openSync(file, 'w');
  const chunk = Buffer.alloc(64 * 1024, 0x2e);
  try {
    for (;;) fs.writeSync(fd, chunk);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    fs.closeSync(fd);
  }
}

/** Emits `payload` until emit throws (at most `limit` times); returns what was recorded and the error. */
function emitUntilFailure(session: Session, payload: Readonly<Record<string, unknown>>, limit = 1_000): { recorded: RecordedEvent[]; failure: unknown } {
  const recorded: RecordedEvent[] = [];
  for (let i = 0; i < limit; i++) {
    try {
      recorded.push(session.emit('fault.fill', payload));
    } catch (failure) {
      return { recorded, failure };
    }
  }
  throw new Error(`emit never failed in ${limit} tries: the disk did not fill`);
}

describe('Session.emit', () => {
  let disk: string;
  let session: Session | undefined;

  beforeEach(() => {
    disk = path.join(root, `full-${mounted.length}-${Date.now()}`);
    mountTmpfs(disk, 'size=256k');
  });

  afterEach(async () => {
    if (session !== undefined && !session.closed) await session.close().catch(() => undefined);
    session = undefined;
    unmount(disk);
  });

  /** A session on the tmpfs, then a filler leaving about 24 KiB, then 1 KiB events until emit throws. */
  function fillWhileOpen(): { session: Session; filler: string; recorded: RecordedEvent[]; failure: unknown } {
    const home = path.join(disk, 'home');
    const opened = agent('faults/full-disk', { home }).session({ export: true });
    session = opened;
    const filler = path.join(disk, 'filler');
    const free = fs.statfsSync(disk).bavail * fs.statfsSync(disk).bsize;
    fs.writeFileSync(filler, Buffer.alloc(free - 24 * 1024, 0x2e));
    return { session: opened, filler, ...emitUntilFailure(opened, { filler: KIB }) };
  }

  describe('when the disk fills while a session is open', () => {
    it('throws TrailWriteError with code TRAIL_WRITE_FAILED naming the trail', () => {
      const { session: s, recorded, failure } = fillWhileOpen();
      expect(recorded.length).toBeGreaterThan(5);
      expect(failure).toBeInstanceOf(TrailWriteError);
      const error = failure as TrailWriteError;
      expect(error.code).toBe('TRAIL_WRITE_FAILED');
      expect(error.data?.path).toBe(s.files.trail);
      expect(error.message).toContain(s.files.trail);
      expect((error.cause as NodeJS.ErrnoException).code).toBe('ENOSPC');
    });

    it('keeps exactly the events whose emit returned, in a trail that verifies with no torn line', () => {
      const { session: s, recorded } = fillWhileOpen();
      const { whole, tail } = rawTrail(s.files.trail);
      expect(tail).toBe('');
      // membrane.ingress and session.open, then the fills.
      expect(eventIdsOf(whole).slice(2)).toEqual(recorded.map((event) => event.event_id));
      const report = verifyTrail(s.files.trail);
      expect(report).toMatchObject({ hash_chain_valid: true, complete: false, events: recorded.length + 2 });
      expect(report.reason).toBeUndefined();
      expect(report.head_hash).toBe(recorded.at(-1)?.content_hash);
    });

    it('throws TrailWriteError again on the next emits and leaves the trail unchanged', () => {
      const { session: s } = fillWhileOpen();
      const before = fs.readFileSync(s.files.trail);
      for (let i = 0; i < 3; i++) {
        expectAuraError(() => s.emit('fault.fill', { filler: KIB }), TrailWriteError, 'TRAIL_WRITE_FAILED');
      }
      expect(fs.readFileSync(s.files.trail).equals(before)).toBe(true);
      expect(s.eventCount).toBe(eventIdsOf(rawTrail(s.files.trail).whole).length);
    });

    it('records the next emit linked to the last recorded event once space is freed, and closes complete', async () => {
      const { session: s, filler, recorded } = fillWhileOpen();
      fs.rmSync(filler);
      const next = s.emit('fault.after_free', { filler: KIB });
      expect(next.prev_hash).toBe(recorded.at(-1)?.content_hash);
      expect(next.sequence).toBe(recorded.length + 3);
      const report = verifyTrail(s.files.trail);
      expect(report).toMatchObject({ hash_chain_valid: true, events: recorded.length + 3, head_hash: next.content_hash });
      expect(report.reason).toBeUndefined();

      const result = await s.close();
      expect(result.chain).toMatchObject({ hash_chain_valid: true, complete: true, events: recorded.length + 4 });
      expect(fs.existsSync(s.files.summary)).toBe(true);
      expect(fs.existsSync(s.files.otel)).toBe(true);
      expect(fs.existsSync(lockPathOf(s.files.trail))).toBe(false);
    });
  });

  describe('when the disk is full at close', () => {
    it('throws TrailWriteError, releases the lock, and leaves the trail whole but incomplete', async () => {
      const home = path.join(disk, 'home');
      const s = agent('faults/full-disk', { home }).session();
      session = s;
      fillDisk(path.join(disk, 'filler'));
      // Small events use up what is left of the trail's last page; session.close is longer than any of them.
      emitUntilFailure(s, {});
      const before = fs.readFileSync(s.files.trail);

      await expect(s.close()).rejects.toSatisfy((error) => error instanceof TrailWriteError && error.code === 'TRAIL_WRITE_FAILED');
      expect(fs.readFileSync(s.files.trail).equals(before)).toBe(true);
      const report = verifyTrail(s.files.trail);
      expect(report).toMatchObject({ hash_chain_valid: true, complete: false });
      expect(report.reason).toBeUndefined();
      expect(fs.existsSync(lockPathOf(s.files.trail))).toBe(false);
      expectAuraError(() => s.emit('fault.late', {}), SessionClosedError, 'SESSION_CLOSED');
    });
  });

  describe('when the disk fills between the trail and the exports', () => {
    it('throws ExportError after writing a complete trail, and commits neither export', async () => {
      const home = path.join(disk, 'home');
      const s = agent('faults/full-disk', { home }).session();
      session = s;
      // One page held back: enough for the session.close line, not for the summary and the spans too.
      const spare = path.join(disk, 'spare');
      fs.writeFileSync(spare, 'x');
      fillDisk(path.join(disk, 'filler'));
      emitUntilFailure(s, {});
      fs.rmSync(spare);
      expect(fs.statfsSync(disk).bavail * fs.statfsSync(disk).bsize).toBe(PAGE);

      let failure: unknown;
      await s.close().catch((error: unknown) => (failure = error));
      expect(failure).toBeInstanceOf(ExportError);
      const error = failure as ExportError;
      expect(error.code).toBe('EXPORT_FAILED');
      // The seal log is written first, then summary and spans: any of the three may be the one that failed.
      expect([s.agent.config.paths.sealLog, s.files.summary, s.files.otel]).toContain(error.data?.path);
      expect(verifyTrail(s.files.trail)).toMatchObject({ hash_chain_valid: true, complete: true });
      for (const target of [s.files.summary, s.files.otel]) {
        expect(fs.existsSync(target), target).toBe(false);
        expect(fs.existsSync(stagingPathOf(target)), stagingPathOf(target)).toBe(false);
      }
      expect(fs.existsSync(lockPathOf(s.files.trail))).toBe(false);
    });
  });
});

describe('Session.open', () => {
  describe('when the sessions folder is a read-only mount', () => {
    let home: string;
    let sessions: string;

    beforeAll(() => {
      home = path.join(root, 'ro-sessions');
      // The agent is registered while the home is writable; only its sessions folder is read-only.
      sessions = agent('faults/read-only', { home }).config.paths.sessions;
      mountTmpfs(sessions, 'ro,size=64k');
    });

    afterAll(() => {
      unmount(sessions);
    });

    it('throws TrailWriteError with code TRAIL_WRITE_FAILED and writes nothing', () => {
      const error = expectAuraError(() => agent('faults/read-only', { home }).session(), TrailWriteError, 'TRAIL_WRITE_FAILED');
      expect(path.dirname(error.data?.path ?? '')).toBe(sessions);
      expect((error.cause as NodeJS.ErrnoException).code).toBe('EROFS');
      expect(fs.readdirSync(sessions)).toEqual([]);
    });
  });

  describe('when the home is a read-only mount with no sessions folder yet', () => {
    let home: string;

    beforeAll(() => {
      home = path.join(root, 'ro-home');
      fs.mkdirSync(home, { recursive: true });
      mountTmpfs(home, 'ro,size=64k');
    });

    afterAll(() => {
      unmount(home);
    });

    it('throws TrailWriteError naming the sessions folder and writes nothing', () => {
      // Registered under a writable home, then given the read-only one as its sessions folder.
      const registered = agent('faults/read-only', { home: path.join(root, 'rw-home') });
      const sessions = path.join(home, 'sessions');
      const target = new Agent(registered.profile, { ...registered.config, paths: { ...registered.config.paths, sessions } }, registered.policy);
      const error = expectAuraError(() => target.session(), TrailWriteError, 'TRAIL_WRITE_FAILED');
      expect(error.data?.path).toBe(sessions);
      // The real cause, though Node's recursive mkdir alone would say ENOENT (nodejs/node#47098).
      expect((error.cause as NodeJS.ErrnoException).code).toBe('EROFS');
      expect(fs.readdirSync(home)).toEqual([]);
    });
  });
});

describe('agent() and the command line on a full or read-only home', () => {
  let full: string;
  let readOnly: string;

  beforeAll(() => {
    full = path.join(root, 'cli-full');
    mountTmpfs(full, 'size=64k');
    fillDisk(path.join(full, 'filler'));
    readOnly = path.join(root, 'cli-ro');
    mountTmpfs(readOnly, 'ro,size=64k');
  });

  afterAll(() => {
    unmount(full);
    unmount(readOnly);
  });

  it('agent() throws WriteError naming the agents folder, with the real cause (EROFS, not ENOENT)', () => {
    const home = path.join(readOnly, 'home');
    const error = expectAuraError(() => agent('faults/read-only', { home }), WriteError, 'WRITE_FAILED');
    expect(error.data?.path).toBe(path.join(home, 'agents'));
    expect((error.cause as NodeJS.ErrnoException).code).toBe('EROFS');
  });

  const cases: [string, () => string, string[], RegExp][] = [
    ['aura demo, a read-only home', () => readOnly, ['demo'], /^aura: cannot write \S+\/agents: the file system is read-only \(EROFS\)\n$/],
    ['aura demo, a read-only home not made yet', () => path.join(readOnly, 'home'), ['demo'], /^aura: cannot write \S+\/home\/agents: the file system is read-only \(EROFS\)\n$/],
    ['aura demo, a full disk', () => full, ['demo'], /^aura: cannot write \S+\/agents\/\w+\.json: no space left on the device \(ENOSPC\)\n$/],
    ['aura keys init, a read-only home', () => readOnly, ['keys', 'init'], /^aura: cannot write \S+\/keys: the file system is read-only \(EROFS\)\n$/],
    ['aura keys init, a full disk', () => full, ['keys', 'init'], /^aura: cannot write \S+\/keys\/\w+\.key: no space left on the device \(ENOSPC\)\n$/],
  ];
  for (const [what, home, args, message] of cases) {
    it(`${what}: exits 2 naming the path and the cause, and leaves no partial file`, () => {
      const run = aura(args, { home: home() });
      expect(run.stderr).toMatch(message);
      expect(run.status).toBe(2);
      const keys = path.join(home(), 'keys');
      if (fs.existsSync(keys)) expect(fs.readdirSync(keys)).toEqual([]);
    });
  }

  it('aura logs > a file on a full disk: exits 2 saying the output could not be written, no stack trace', async () => {
    const { session, home } = openSession();
    session.emit('turn.start', { input: 'hello' });
    await session.close();
    const out = fs.openSync(path.join(full, 'logs.txt'), 'w');
    try {
      const run = spawnSync(process.execPath, [AURA_BIN, 'logs', session.id], { env: { ...process.env, AURA_HOME: home }, stdio: ['ignore', out, 'pipe'], encoding: 'utf8' });
      expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 2, stderr: 'aura: cannot write the output: no space left on the device (ENOSPC)\n' });
    } finally {
      fs.closeSync(out);
    }
  });

  it('aura demo once more when the disk has filled since the first: exits 2 naming the trail', () => {
    const home = path.join(root, 'cli-late-full');
    mountTmpfs(home, 'size=1m');
    try {
      expect(aura(['demo'], { home }).status).toBe(0);
      fillDisk(path.join(home, 'filler'));
      const run = aura(['demo'], { home });
      expect(run.stderr).toMatch(/^aura: cannot write the trail \S+\/sessions\/aura_sess_[0-9a-f]{12}\.jsonl: no space left on the device \(ENOSPC\)\n$/);
      expect(run.status).toBe(2);
    } finally {
      unmount(home);
    }
  });
});

describe('TrailWriter.create', () => {
  let home: string;
  let session: Session;
  let before: Buffer;

  beforeEach(() => {
    home = fs.mkdtempSync(path.join(root, 'second-writer-'));
    session = agent('faults/second-writer', { home }).session({ export: false });
    before = fs.readFileSync(session.files.trail);
  });

  afterEach(async () => {
    if (!session.closed) await session.close();
  });

  describe('when a session of this process holds the trail', () => {
    it('throws SessionLockedError with code SESSION_LOCKED and leaves the session writing', async () => {
      const error = expectAuraError(() => TrailWriter.create(session.files.trail, session.id, 'none'), SessionLockedError, 'SESSION_LOCKED');
      expect(error.data).toEqual({ session_id: session.id, pid: process.pid });
      expect(fs.readFileSync(session.files.trail).equals(before)).toBe(true);
      expect(readLock(lockPathOf(session.files.trail))?.pid).toBe(process.pid);

      session.emit('fault.after_refusal', {});
      const result = await session.close();
      expect(result.chain).toMatchObject({ hash_chain_valid: true, complete: true, events: 4 });
    });
  });

  describe('when another process tries while the first lives', () => {
    it('refuses it with SESSION_LOCKED naming this process, and the trail is untouched', async () => {
      const exit = await runFixture('second-writer.ts', [session.files.trail, session.id]);
      expect(exit.code, exit.stderr).toBe(1);
      expect(JSON.parse(exit.stdout) as unknown).toEqual({ error: 'SessionLockedError', code: 'SESSION_LOCKED', pid: process.pid });
      expect(fs.readFileSync(session.files.trail).equals(before)).toBe(true);
      expect(readLock(lockPathOf(session.files.trail))?.pid).toBe(process.pid);
    });
  });
});

describe('TrailWriter.together', () => {
  describe('when the disk has room for the first line but not for both', () => {
    it('throws TrailWriteError and writes neither, so session.close never lands without its checkpoint', () => {
      const disk = path.join(root, `together-${mounted.length}-${Date.now()}`);
      mountTmpfs(disk, 'size=256k');
      try {
        const trail = path.join(disk, 'aura_sess_00000000000a.jsonl');
        const writer = TrailWriter.create(trail, 'aura_sess_00000000000a', 'none');
        writer.append('{"first": true}\n');
        fillDisk(path.join(disk, 'filler'));
        const before = fs.readFileSync(trail);
        // What is left of the trail's page takes the short line, not the long one after it.
        const short = `{"close": "${'c'.repeat(64)}"}\n`;
        const long = `{"checkpoint": "${'k'.repeat(2 * PAGE)}"}\n`;
        expectAuraError(
          () =>
            writer.together(() => {
              writer.append(short);
              writer.append(long);
            }),
          TrailWriteError,
          'TRAIL_WRITE_FAILED',
        );
        expect(fs.readFileSync(trail).equals(before)).toBe(true);
        // The short line alone fits: the refusal above was the pair, not the disk refusing everything.
        writer.together(() => writer.append(short));
        expect(fs.readFileSync(trail, 'utf8')).toBe(`${before.toString('utf8')}${short}`);
        writer.close();
      } finally {
        unmount(disk);
      }
    });
  });
});
