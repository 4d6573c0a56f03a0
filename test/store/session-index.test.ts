import * as fs from 'node:fs';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { KeyRing, type Signer } from '../../src/spine/signing.js';
import { GrowingSealLogView } from '../../src/store/growing-seal-log-view.js';
import { appendSeal, readSealLog, type SealLogPlace } from '../../src/store/seal-log.js';
import { SealLogFollower } from '../../src/store/seal-log-follower.js';
import { sealLogViewOf } from '../../src/store/session-status.js';
import { SessionIndex, type IndexedSession } from '../../src/store/session-index.js';
import { listSessions, type SessionListing } from '../../src/store/session-list.js';
import { spawnFixture } from '../faults/helpers.js';
import { countingIds, openSession } from '../helpers/sessions.js';
import { tempDir } from '../helpers/temp.js';

async function closedSession(home: string, seed: number): Promise<string> {
  const { session } = openSession({ home, session: { ids: countingIds(seed) } });
  session.emit('tool.call', { tool: 'search', args: { q: 'query' } });
  return (await session.close()).session_id;
}

function indexOf(home: string, watch: boolean, keys: KeyRing | null = null): SessionIndex {
  return new SessionIndex(path.join(home, 'sessions'), path.join(home, 'seals.jsonl'), { keys, watch });
}

async function rowOf(index: SessionIndex, id: string): Promise<SessionListing | null | undefined> {
  return (await index.sessions()).find((session) => session.id === id)?.view.row;
}

describe.each([
  ['learning changes from the kernel', true],
  ['fingerprinting every file', false],
])('the session index, %s', (_, watch) => {
  it('shows a trail edited after it was read as damaged at the next call', async () => {
    const home = tempDir();
    const id = await closedSession(home, 1);
    const index = indexOf(home, watch);
    expect(await rowOf(index, id)).toMatchObject({ status: 'intact', verdict: 'pass' });
    const trail = path.join(home, 'sessions', `${id}.jsonl`);
    fs.writeFileSync(trail, fs.readFileSync(trail, 'utf8').replace('"query"', '"QUERY"'));
    expect(await rowOf(index, id)).toMatchObject({ status: 'damaged', reason: 'edited' });
    index.close();
  });

  it('shows an open session sealed once it is closed', async () => {
    const home = tempDir();
    const { session } = openSession({ home });
    session.emit('tool.call', { tool: 'search', args: {} });
    const index = indexOf(home, watch);
    expect(await rowOf(index, session.id)).toMatchObject({ status: 'open', state: 'open', verdict: null });
    await session.close();
    expect(await rowOf(index, session.id)).toMatchObject({ status: 'intact', state: 'closed', verdict: 'pass' });
    index.close();
  });

  it("changes an older session's signature facet when a later signed seal-log entry vouches for it, its files untouched", async () => {
    const home = tempDir();
    const old = await closedSession(home, 1);
    const index = indexOf(home, watch);
    expect(await rowOf(index, old)).toMatchObject({ status: 'intact', signatures: 'unsigned' });
    const trail = fs.statSync(path.join(home, 'sessions', `${old}.jsonl`));
    KeyRing.generate(path.join(home, 'keys'));
    const signed = await closedSession(home, 100);
    expect(await rowOf(index, signed)).toMatchObject({ status: 'intact', signatures: 'unchecked' });
    expect(await rowOf(index, old)).toMatchObject({ status: 'intact', signatures: 'predates_signing' });
    expect(fs.statSync(path.join(home, 'sessions', `${old}.jsonl`)).ctimeMs).toBe(trail.ctimeMs);
    index.close();
  });

  it("answers for an older session as a fresh index does once the entries of the log are stripped of their signatures in place, its files untouched", async () => {
    const home = tempDir();
    const old = await closedSession(home, 1);
    KeyRing.generate(path.join(home, 'keys'));
    await closedSession(home, 100);
    const index = indexOf(home, watch);
    const before = await rowOf(index, old);
    expect(before).toMatchObject({ status: 'intact', signatures: 'predates_signing' });
    stripSignatures(path.join(home, 'seals.jsonl'));
    const fresh = indexOf(home, false);
    const expected = await rowOf(fresh, old);
    fresh.close();
    expect(await rowOf(index, old)).toEqual(expected);
    index.close();
  });

  it('shows a session as new files appear and forgets it when they go', async () => {
    const home = tempDir();
    await closedSession(home, 1);
    const index = indexOf(home, watch);
    expect(await index.sessions()).toHaveLength(1);
    const id = await closedSession(home, 50);
    expect((await index.sessions()).map((session) => session.id)).toContain(id);
    for (const suffix of ['.jsonl', '.summary.json', '.otel.jsonl']) fs.rmSync(path.join(home, 'sessions', `${id}${suffix}`));
    expect((await index.sessions()).map((session) => session.id)).not.toContain(id);
    index.close();
  });
});

/** Nulls every seal-log entry's signature and key id in place: each entry's hash, which chains the log, stays. */
function stripSignatures(log: string): void {
  const lines = fs.readFileSync(log, 'utf8').split('\n').filter((line) => line !== '');
  fs.writeFileSync(log, lines.map((line) => `${JSON.stringify({ ...(JSON.parse(line) as object), key_id: null, signature: null })}\n`).join(''));
}

describe('the index kept between processes', () => {
  function keptFiles(): string[] {
    const dir = path.join(process.env['AURA_CACHE_DIR'] as string, 'index');
    return fs.readdirSync(dir).map((name) => path.join(dir, name));
  }

  it('is in the test cache folder, and a trail edited since shows damaged', async () => {
    expect(process.env['AURA_CACHE_DIR']).toContain('aura-test-cache-');
    const home = tempDir();
    const id = await closedSession(home, 1);
    const sessions = path.join(home, 'sessions');
    await sleep(2100);
    expect(listSessions(sessions)).toMatchObject([{ session_id: id, status: 'intact' }]);
    expect(listSessions(sessions)).toMatchObject([{ session_id: id, status: 'intact' }]);
    const trail = path.join(sessions, `${id}.jsonl`);
    fs.writeFileSync(trail, fs.readFileSync(trail, 'utf8').replace('"query"', '"QUERY"'));
    // Past the window in which a ctime is too recent to trust: only the fingerprint can tell now.
    await sleep(2100);
    expect(listSessions(sessions)).toMatchObject([{ session_id: id, status: 'damaged', reason: 'edited' }]);
  });

  it('answers for an older session as a fresh read does once the entries of the log were stripped of their signatures since', async () => {
    const home = tempDir();
    const old = await closedSession(home, 1);
    KeyRing.generate(path.join(home, 'keys'));
    await closedSession(home, 100);
    const sessions = path.join(home, 'sessions');
    await sleep(2100);
    expect(listSessions(sessions).find((row) => row.session_id === old)).toMatchObject({ status: 'intact', signatures: 'predates_signing' });
    stripSignatures(path.join(home, 'seals.jsonl'));
    await sleep(2100);
    const fresh = indexOf(home, false);
    const expected = (await fresh.sessions()).find((session) => session.id === old)?.view.row;
    fresh.close();
    expect(expected).toBeDefined();
    expect(listSessions(sessions).find((row) => row.session_id === old)).toMatchObject({ status: expected?.status, signatures: expected?.signatures, reason: expected?.reason });
  });

  it('lists a sealed session whose files were removed since it was kept as deleted, the log unchanged', async () => {
    const home = tempDir();
    const kept = await closedSession(home, 1);
    const gone = await closedSession(home, 50);
    const sessions = path.join(home, 'sessions');
    expect(listSessions(sessions).map((row) => row.state)).toEqual(['closed', 'closed']);
    // Taken from the kept index: the log's sessions without its entries.
    expect(listSessions(sessions).map((row) => row.state)).toEqual(['closed', 'closed']);
    for (const name of fs.readdirSync(sessions).filter((file) => file.startsWith(gone))) fs.rmSync(path.join(sessions, name));
    const rows = listSessions(sessions);
    expect(rows.find((row) => row.session_id === gone)).toMatchObject({ state: 'deleted', status: 'missing_trail' });
    expect(rows.find((row) => row.session_id === kept)).toMatchObject({ state: 'closed', status: 'intact' });
  });

  it('is not taken when someone without its secret rewrote it: the views are computed again', async () => {
    const home = tempDir();
    const id = await closedSession(home, 1);
    const sessions = path.join(home, 'sessions');
    const before = new Set(keptFiles());
    await sleep(2100);
    expect(listSessions(sessions)).toMatchObject([{ session_id: id, status: 'intact' }]);
    // Test files running beside this one keep their indexes in the same folder: this one names the session.
    const kept = keptFiles().find((file) => !before.has(file) && fs.readFileSync(file, 'utf8').includes(id)) as string;
    const trail = path.join(sessions, `${id}.jsonl`);
    fs.writeFileSync(trail, fs.readFileSync(trail, 'utf8').replace('"query"', '"QUERY"'));
    // The forger puts the edited trail's fingerprint in the kept index, and keeps its old view.
    const s = fs.statSync(trail);
    const [mac, body] = fs.readFileSync(kept, 'utf8').split('\n') as [string, string];
    const index = JSON.parse(body) as { slots: [string, number[][], ...unknown[]][] };
    (index.slots[0] as [string, number[][]])[1][0] = [s.size, s.mtimeMs, s.ctimeMs, s.ino, s.nlink];
    fs.writeFileSync(kept, `${mac}\n${JSON.stringify(index)}`);
    await sleep(2100);
    expect(listSessions(sessions)).toMatchObject([{ session_id: id, status: 'damaged', reason: 'edited' }]);
  });
});

describe('the seal log follower', () => {
  /** A home whose seal log holds two closed sessions. */
  async function twoSealed(): Promise<{ home: string; log: string }> {
    const home = tempDir();
    await closedSession(home, 1);
    await closedSession(home, 50);
    return { home, log: path.join(home, 'seals.jsonl') };
  }

  it('answers as a full read after appends, and after an entry edited before where it had read', async () => {
    const { home, log } = await twoSealed();
    const follower = new SealLogFollower(log);
    expect(follower.current()).toEqual(readSealLog(log));
    await closedSession(home, 100);
    expect(follower.current()).toEqual(readSealLog(log));
    expect(follower.current().entries).toHaveLength(3);
    // The same length, in the first line: only a check of the whole prefix sees it.
    const text = fs.readFileSync(log, 'utf8');
    const edited = text.replace(/"events":(\d)/, (_, digit: string) => `"events":${(Number(digit) + 1) % 10}`);
    expect(edited).not.toBe(text);
    fs.writeFileSync(log, edited);
    const after = follower.current();
    expect(after).toEqual(readSealLog(log));
    expect(after.problem?.line).toBe(1);
  });

  it('taken up from what another follower kept, answers as a full read: before and after an append, and after an edit before the kept point', async () => {
    const { home, log } = await twoSealed();
    const first = new SealLogFollower(log);
    first.refresh();
    const kept = first.followed();
    // How far and a digest: the entries are read from the log again, when asked for.
    expect(Object.keys(kept).sort()).toEqual(['count', 'digest', 'mark']);
    expect(kept.count).toBe(2);
    const taken = new SealLogFollower(log, kept);
    taken.refresh();
    expect(taken.identity).toBe(first.identity);
    expect(taken.last).toEqual(readSealLog(log));
    const appended = new SealLogFollower(log, kept);
    await closedSession(home, 100);
    appended.refresh();
    const fresh = new SealLogFollower(log);
    fresh.refresh();
    expect(appended.identity).toBe(fresh.identity);
    expect(appended.last).toEqual(readSealLog(log));
    expect(appended.last.entries).toHaveLength(3);
    const edited = new SealLogFollower(log, appended.followed());
    const text = fs.readFileSync(log, 'utf8');
    fs.writeFileSync(log, text.replace(/"events":(\d)/, (_, digit: string) => `"events":${(Number(digit) + 1) % 10}`));
    edited.refresh();
    expect(edited.last).toEqual(readSealLog(log));
    expect(edited.last.problem?.line).toBe(1);
  });

  it('reads a last line still being written as a full read does, and resumes before it', async () => {
    const { log } = await twoSealed();
    const whole = fs.readFileSync(log);
    const cut = whole.indexOf(0x0a) + 20;
    fs.writeFileSync(log, whole.subarray(0, cut));
    const follower = new SealLogFollower(log);
    expect(follower.current()).toEqual(readSealLog(log));
    expect(follower.current().problem?.line).toBe(2);
    fs.writeFileSync(log, whole);
    expect(follower.current()).toEqual(readSealLog(log));
    expect(follower.current()).toMatchObject({ problem: null, entries: [{}, {}] });
  });
});

describe('never stale under a continuous writer', () => {
  it.each([
    ['learning changes from the kernel', true],
    ['fingerprinting every file', false],
  ])('every session closed before a call began is in its answer, sealed and judged (%s)', async (_, watch) => {
    const home = tempDir();
    const writer = spawnFixture('store-writer.ts', [home]);
    const closed: string[] = [];
    let open = '';
    createInterface({ input: writer.stdout as Readable }).on('line', (line) => {
      const said = JSON.parse(line) as { closed?: string; open?: string };
      if (said.closed !== undefined) closed.push(said.closed);
      if (said.open !== undefined) open = said.open;
    });
    const index = indexOf(home, watch);
    try {
      while (closed.length === 0) await sleep(20);
      let calls = 0;
      for (const until = Date.now() + 4000; Date.now() < until || calls < 10; calls++) {
        const before = [...closed];
        const sessions = new Map((await index.sessions()).map((session: IndexedSession) => [session.id, session.view]));
        for (const id of before) {
          const view = sessions.get(id);
          expect(view?.row, `${id}, closed before call ${calls} began`).toMatchObject({ status: 'intact', state: 'closed', verdict: 'fail' });
          expect(view?.findings.map((f) => f.kind)).toContain('POLICY_VIOLATION');
        }
        expect(sessions.get(open)?.row).toMatchObject({ status: 'open', state: 'open' });
        await sleep(calls % 7);
      }
      expect(closed.length).toBeGreaterThan(10);
    } finally {
      writer.kill('SIGKILL');
      index.close();
    }
  }, 60_000);
});

/** What a session's status takes from its place. */
function placeFacts(place: SealLogPlace | undefined): unknown {
  return place === undefined ? null : [place.entry.hash, place.afterSigning, place.voucher?.hash ?? null, place.signatureProblem];
}

describe.each([
  ['without keys', false],
  ['with trusted keys', true],
])('the seal-log view grown with its log, %s', (_, withKeys) => {
  it('equals the view built from scratch after every step of random appends, and names every session whose place moved', () => {
    const home = tempDir();
    const trusted = path.join(home, 'trusted');
    const other = path.join(home, 'other');
    KeyRing.generate(trusted);
    KeyRing.generate(other);
    const keys = withKeys ? KeyRing.load(trusted) : null;
    const good = KeyRing.load(trusted).signer() as Signer;
    // Signed by a key no one trusts, and a signature that does not verify.
    const untrusted = KeyRing.load(other).signer() as Signer;
    const forged: Signer = { keyId: good.keyId, sign: () => Buffer.alloc(64).toString('base64') };
    const signers = [null, null, good, untrusted, forged];
    const log = path.join(home, 'seals.jsonl');
    const follower = new SealLogFollower(log);
    const grown = new GrowingSealLogView(keys);
    let seed = 7;
    const random = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return Math.floor((seed / 2 ** 31) * n);
    };
    const ids: string[] = [];
    let before = new Map<string, unknown>();
    let rebuilds = 0;
    for (let step = 0; step < 120; step++) {
      if (step % 40 === 39) {
        // Not an append: the first signed entry loses its signature, so the view is built again.
        const lines = fs.readFileSync(log, 'utf8').split('\n');
        const at = lines.findIndex((line) => line.includes('"signature":"'));
        const entry = JSON.parse(lines[at] as string) as Record<string, unknown>;
        lines[at] = JSON.stringify({ ...entry, key_id: null, signature: null });
        fs.writeFileSync(log, lines.join('\n'));
        rebuilds++;
      } else {
        for (let n = 1 + random(3); n > 0; n--) {
          const again = ids.length > 0 && random(4) === 0;
          const id = again ? (ids[random(ids.length)] as string) : `aura_sess_${(ids.length + 1).toString(16).padStart(12, '0')}`;
          if (!again) ids.push(id);
          const signer = signers[random(signers.length)] ?? null;
          appendSeal(log, { session_id: id, events: step, first_hash: null, head_hash: null, closed_at: null, key_id: null, signature: null }, signer);
        }
      }
      const read = follower.current();
      const view = grown.of(read);
      const scratch = sealLogViewOf(readSealLog(log), keys);
      for (const [id, place] of scratch.places) expect(placeFacts(view.places.get(id)), `${step} ${id}`).toEqual(placeFacts(place));
      expect(view.places).toEqual(scratch.places);
      expect(view.signatureProblem).toBe(scratch.signatureProblem);
      const changed = grown.takeChanged();
      const after = new Map([...view.places].map(([id, place]) => [id, placeFacts(place)]));
      if (step % 40 === 39 || step === 0) expect(changed).toBeNull();
      else for (const [id, facts] of after) if (JSON.stringify(facts) !== JSON.stringify(before.get(id))) expect(changed?.has(id), id).toBe(true);
      before = after;
    }
    expect(rebuilds).toBe(3);
    expect([...before.values()].some((facts) => (facts as unknown[])[2] !== null)).toBe(true);
  });
});
