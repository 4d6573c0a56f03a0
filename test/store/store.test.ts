import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { InvalidSessionIdError } from '../../src/errors.js';
import { listSessionIds, resolveSessionKey } from '../../src/store/session-files.js';
import { listSessions } from '../../src/store/session-list.js';
import { lockPathOf } from '../../src/spine/writer.js';
import { expectAuraError } from '../helpers/errors.js';
import { openSession } from '../helpers/sessions.js';
import { tempDir } from '../helpers/temp.js';

describe('resolveSessionKey', () => {
  it('maps an id, or an id with one of its file suffixes, to files inside the folder', () => {
    const dir = tempDir();
    for (const key of ['aura_sess_0123456789ab', 'aura_sess_0123456789ab.jsonl', 'aura_sess_0123456789ab.summary.json', 'aura_sess_0123456789ab.otel.jsonl']) {
      const files = resolveSessionKey(dir, key);
      expect(files).toEqual({
        sessionId: 'aura_sess_0123456789ab',
        trail: path.join(dir, 'aura_sess_0123456789ab.jsonl'),
        summary: path.join(dir, 'aura_sess_0123456789ab.summary.json'),
        otel: path.join(dir, 'aura_sess_0123456789ab.otel.jsonl'),
      });
    }
  });

  for (const key of ['../x', '../../etc/passwd', 'aura_sess_x', 'aura_sess_0123456789ab/..', 'aura_sess_0123456789abc', 'AURA_SESS_0123456789AB', 'aura_sess_0123456789ab.txt', '', 'aura_sess_01234567\u0000ab']) {
    it(`refuses ${JSON.stringify(key)}`, () => {
      expectAuraError(() => resolveSessionKey(tempDir(), key), InvalidSessionIdError, 'INVALID_SESSION_ID');
    });
  }
});

describe('listSessionIds', () => {
  it('lists the ids that have a trail, ignoring other files, and nothing for a missing folder', () => {
    const dir = tempDir();
    for (const name of ['aura_sess_00000000000b.jsonl', 'aura_sess_00000000000a.jsonl', 'aura_sess_00000000000a.otel.jsonl', 'aura_sess_00000000000c.summary.json', 'notes.jsonl', 'aura_sess_bad.jsonl']) {
      fs.writeFileSync(path.join(dir, name), '');
    }
    expect(listSessionIds(dir)).toEqual(['aura_sess_00000000000a', 'aura_sess_00000000000b']);
    expect(listSessionIds(path.join(dir, 'absent'))).toEqual([]);
  });
});

describe('listSessions', () => {
  it('tells closed, open, abandoned and unexported sessions apart', async () => {
    const home = tempDir();
    const closed = openSession({ home, session: { ids: idsFrom(1) } }).session;
    await closed.close();
    const live = openSession({ home, session: { ids: idsFrom(100) } }).session;
    live.emit('turn.start', {});
    const unexported = openSession({ home, session: { ids: idsFrom(200), export: false } }).session;
    await unexported.close();
    const dead = openSession({ home, session: { ids: idsFrom(300) } }).session;
    // A writer that died leaves its lock naming a process that no longer exists.
    fs.writeFileSync(lockPathOf(dead.files.trail), JSON.stringify({ pid: 2 ** 22 + 12345, host: (await import('node:os')).hostname(), session_id: dead.id }));

    const states = Object.fromEntries(listSessions(path.join(home, 'sessions')).map((s) => [s.session_id, s]));
    expect(states[closed.id]).toMatchObject({ state: 'closed', verdict: 'pass', hash_chain_valid: true, events: 3, agent_ref: 'acme/tester' });
    expect(states[live.id]).toMatchObject({ state: 'open', verdict: null, events: 3 });
    expect(states[unexported.id]).toMatchObject({ state: 'unexported', events: 3 });
    expect(states[dead.id]).toMatchObject({ state: 'abandoned', events: 2 });
    await live.close();
  });
});

function idsFrom(seed: number): { sessionId: () => string; eventId: () => string; traceId: () => string } {
  let n = seed;
  const hex = (width: number): string => (n++).toString(16).padStart(width, '0');
  return { sessionId: () => `aura_sess_${hex(12)}`, eventId: () => hex(32), traceId: () => hex(32) };
}
