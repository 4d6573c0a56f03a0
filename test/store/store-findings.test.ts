import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { Finding } from '../../src/audit/detector.js';
import { lockPathOf } from '../../src/spine/writer.js';
import { FindingsService } from '../../src/mcp/findings-service.js';
import { StoreFindings } from '../../src/store/store-findings.js';
import { auraJson } from '../helpers/cli.js';
import { AURA_PY } from '../helpers/fixtures.js';
import { countingIds, openSession } from '../helpers/sessions.js';
import { tempDir } from '../helpers/temp.js';

// Fixed times to put back after an edit, so only the ctime can tell the file changed.
const PAST = new Date('2026-01-01T00:00:00Z');

/** A closed session of a few events in `home`, with its mtimes set to PAST. */
async function closedSession(home: string, seed: number): Promise<{ id: string; trail: string; summary: string }> {
  const { session } = openSession({ home, session: { ids: countingIds(seed) } });
  for (let i = 0; i < 4; i++) session.emit('tool.call', { tool: 'search', args: { q: `query ${i}` } });
  const result = await session.close();
  const summary = result.exports.summary ?? '';
  for (const file of [result.log_path, summary]) fs.utimesSync(file, PAST, PAST);
  return { id: result.session_id, trail: result.log_path, summary };
}

function storeOf(home: string): StoreFindings {
  return new StoreFindings(path.join(home, 'sessions'), path.join(home, 'seals.jsonl'));
}

function kindsOf(findings: readonly Finding[], id: string): string[] {
  return findings.filter((f) => f['session_id'] === id).map((f) => f.kind);
}

/** Rewrites `file` in place to the same size and puts its mtime back: same size, mtime and inode. */
function editInPlace(file: string, from: string, to: string): void {
  const before = fs.statSync(file);
  const text = fs.readFileSync(file, 'utf8');
  expect(text).toContain(from);
  fs.writeFileSync(file, text.replace(from, to));
  fs.utimesSync(file, PAST, PAST);
  const after = fs.statSync(file);
  expect([after.size, after.mtimeMs, after.ino]).toEqual([before.size, before.mtimeMs, before.ino]);
}

describe('StoreFindings: no stale results (SuperAuditor §5.1)', () => {
  it('sees a trail edited in place with its size and mtime put back', async () => {
    const home = tempDir();
    const { id, trail } = await closedSession(home, 1);
    const store = storeOf(home);
    expect(kindsOf((await store.findings(null)).findings, id)).toEqual([]);
    editInPlace(trail, 'query 2', 'QUERY 2');
    expect(kindsOf((await store.findings(null)).findings, id)).toContain('HASH_CHAIN_BROKEN');
  });

  it('sees a summary edited in place with its size and mtime put back', async () => {
    const home = tempDir();
    const { id, summary } = await closedSession(home, 1);
    const store = storeOf(home);
    expect(kindsOf((await store.findings(null)).findings, id)).toEqual([]);
    editInPlace(summary, '"verdict": "pass"', '"verdict": "fail"');
    const mismatch = (await store.findings(null)).findings.find((f) => f['session_id'] === id && f.kind === 'SUMMARY_MISMATCH');
    expect(mismatch?.message).toContain('verdict fail vs pass now');
  });

  it('sees a new session at the next call, and forgets a deleted one', async () => {
    const home = tempDir();
    await closedSession(home, 1);
    const store = storeOf(home);
    const broken = path.join(home, 'sessions', 'aura_sess_0000000000ee.jsonl');
    expect(kindsOf((await store.findings(null)).findings, 'aura_sess_0000000000ee')).toEqual([]);
    fs.copyFileSync(path.join(AURA_PY, 'tampered', 'payload_edited_mid.jsonl'), broken);
    expect(kindsOf((await store.findings(null)).findings, 'aura_sess_0000000000ee')).toEqual(['HASH_CHAIN_BROKEN']);
    expect(await store.hasSession('aura_sess_0000000000ee')).toBe(true);
    fs.rmSync(broken);
    expect(kindsOf((await store.findings(null)).findings, 'aura_sess_0000000000ee')).toEqual([]);
    expect(await store.hasSession('aura_sess_0000000000ee')).toBe(false);
  });

  it('sees a writer die although no file changed: the open session becomes abandoned', async () => {
    const home = tempDir();
    // The fixture under its own id: a trail whose events name another session is a broken one.
    const id = 'aura_sess_9342f6009b9f';
    const trail = path.join(home, 'sessions', `${id}.jsonl`);
    fs.mkdirSync(path.dirname(trail));
    fs.copyFileSync(path.join(AURA_PY, 'tampered', 'last_event_deleted.jsonl'), trail);
    const writer = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    try {
      fs.writeFileSync(lockPathOf(trail), JSON.stringify({ pid: writer.pid, host: os.hostname(), session_id: id }));
      const store = storeOf(home);
      expect(kindsOf((await store.findings(null)).findings, id)).toEqual([]);
      const stamps = [trail, lockPathOf(trail)].map((file) => fs.statSync(file).ctimeMs);
      writer.kill('SIGKILL');
      await once(writer, 'exit');
      expect([trail, lockPathOf(trail)].map((file) => fs.statSync(file).ctimeMs)).toEqual(stamps);
      expect(kindsOf((await store.findings(null)).findings, id)).toEqual(['SESSION_ABANDONED']);
    } finally {
      writer.kill('SIGKILL');
    }
  });

  it('reuses the work for files untouched since before the last clock tick, and redoes it for files just written', async () => {
    const home = tempDir();
    const sessions = path.join(home, 'sessions');
    fs.mkdirSync(sessions);
    const old = path.join(sessions, 'aura_sess_0000000000a1.jsonl');
    fs.copyFileSync(path.join(AURA_PY, 'tampered', 'payload_edited_mid.jsonl'), old);
    // Past the window in which a ctime is too recent to trust (a later write could share it).
    await sleep(2100);
    const fresh = path.join(sessions, 'aura_sess_0000000000a2.jsonl');
    fs.copyFileSync(path.join(AURA_PY, 'tampered', 'payload_edited_mid.jsonl'), fresh);
    const store = storeOf(home);
    const first = (await store.findings(null)).findings;
    const second = (await store.findings(null)).findings;
    const of = (findings: readonly Finding[], id: string): Finding | undefined => findings.find((f) => f['session_id'] === id);
    expect(of(second, 'aura_sess_0000000000a1')).toBe(of(first, 'aura_sess_0000000000a1'));
    expect(of(second, 'aura_sess_0000000000a2')).not.toBe(of(first, 'aura_sess_0000000000a2'));
    expect(of(second, 'aura_sess_0000000000a2')).toEqual(of(first, 'aura_sess_0000000000a2'));
  });
});

describe('the store findings of sessions that are not where their records say', () => {
  it('names a sealed session whose files were all deleted (TRAIL_MISSING), and a trail copied under another id (HASH_CHAIN_BROKEN)', async () => {
    const home = tempDir();
    const kept = await closedSession(home, 1);
    const gone = await closedSession(home, 100);
    const store = storeOf(home);
    try {
      expect((await store.findings(null)).findings.filter((f) => f.severity === 'critical')).toEqual([]);
      const sessions = path.join(home, 'sessions');
      for (const name of fs.readdirSync(sessions).filter((file) => file.startsWith(gone.id))) fs.rmSync(path.join(sessions, name));
      const copy = 'aura_sess_333333333333';
      fs.copyFileSync(kept.trail, path.join(sessions, `${copy}.jsonl`));
      const { findings } = await store.findings(null);
      expect(findings.find((f) => f['session_id'] === gone.id)).toMatchObject({ kind: 'TRAIL_MISSING', severity: 'critical', message: expect.stringContaining('deleted') });
      expect(findings.find((f) => f['session_id'] === copy && f.kind === 'HASH_CHAIN_BROKEN')).toMatchObject({ severity: 'critical', message: expect.stringContaining(`not ${copy}`) });
      // Both are store findings: a caller naming another session still sees them.
      const scoped = (await store.findings(kept.id)).findings.map((f) => f.kind);
      expect(scoped).toEqual(expect.arrayContaining(['TRAIL_MISSING', 'HASH_CHAIN_BROKEN']));
    } finally {
      store.close();
    }
  });

  it('names a sealed session whose trail alone was deleted or renamed TRAIL_MISSING, as verify store calls it missing_trail, beside the orphaned summary', async () => {
    const home = tempDir();
    const gone = await closedSession(home, 5);
    const store = storeOf(home);
    try {
      fs.renameSync(gone.trail, path.join(tempDir(), 'moved.jsonl'));
      const { findings } = await store.findings(null);
      const own = findings.filter((f) => f['session_id'] === gone.id).map((f) => [f.kind, f.severity]);
      expect(own).toEqual([['TRAIL_MISSING', 'critical'], ['ORPHAN_ARTIFACT', 'warn']]);
      const verify = auraJson(['verify', 'store'], { home });
      expect(verify.json['sessions']).toContainEqual(expect.objectContaining({ session_id: gone.id, status: 'missing_trail' }));
      // Listed as verify store lists it, its summary left or not.
      const deleted = { session_id: gone.id, status: 'missing_trail', reason: 'missing_trail', state: 'deleted', events: expect.any(Number) as unknown };
      expect(auraJson(['sessions', 'list'], { home }).json['sessions']).toContainEqual(expect.objectContaining({ ...deleted, agent_ref: expect.any(String) as unknown }));
      fs.rmSync(gone.summary);
      for (const name of fs.readdirSync(path.dirname(gone.summary)).filter((file) => file.startsWith(gone.id))) fs.rmSync(path.join(path.dirname(gone.summary), name));
      expect(auraJson(['sessions', 'list'], { home }).json['sessions']).toContainEqual(expect.objectContaining(deleted));
      // And by MCP list_sessions.
      const service = new FindingsService([{ sessionsDir: path.join(home, 'sessions'), sealLog: path.join(home, 'seals.jsonl') }], false);
      expect((await service.listSessions()).sessions).toContainEqual(expect.objectContaining(deleted));
    } finally {
      store.close();
    }
  });
});
