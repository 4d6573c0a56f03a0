/**
 * A writer killed with SIGKILL mid-session (DESIGN §3): every event whose `emit` had returned
 * must be in the trail, and what a kill cut short must read as a torn tail, never as tampering.
 */

import * as fs from 'node:fs';
import { beforeEach, describe, expect, it } from 'vitest';
import { agent } from '../../src/session/agent.js';
import type { IdSource } from '../../src/session/ids.js';
import { randomIds } from '../../src/session/ids.js';
import { listSessionIds } from '../../src/store/session-files.js';
import { verifyTrail } from '../../src/spine/verify.js';
import { lockPathOf, processIsAlive, readLock } from '../../src/spine/writer.js';
import { tempDir } from '../helpers/temp.js';
import { eventIdsOf, isJson, rawTrail, spawnFixture, waitForExit, wholeLines } from './helpers.js';

const IDS_BEFORE_KILL = 2_000;

/** Starts busy-writer, SIGKILLs it once it has printed `count` ids, and returns what it printed. */
async function killAfter(home: string, count: number): Promise<{ trail: string; ids: string[]; pid: number; signal: NodeJS.Signals | null }> {
  const child = spawnFixture('busy-writer.ts', [home]);
  const pid = child.pid as number;
  let seen = 0;
  let killed = false;
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    for (const char of chunk) if (char === '\n') seen++;
    // The first line is the trail path, then one id a line.
    if (!killed && seen > count) {
      killed = true;
      child.kill('SIGKILL');
    }
  });
  const exit = await waitForExit(child, 20_000);
  expect(killed, `busy-writer exited before printing ${count} ids (code ${exit.code}): ${exit.stderr}`).toBe(true);
  const [first, ...ids] = wholeLines(exit.stdout);
  expect(first).toMatch(/^trail /);
  return { trail: (first as string).slice('trail '.length), ids, pid, signal: exit.signal };
}

describe('a SIGKILLed writer', () => {
  let home: string;

  beforeEach(() => {
    home = tempDir('aura-faults-kill-');
  });

  describe('when it is killed mid-session, with large writes in flight', () => {
    it('loses nothing emit had returned, and what it cut short is a torn tail', async () => {
      const run = await killAfter(home, IDS_BEFORE_KILL);
      expect(run.signal).toBe('SIGKILL');
      expect(run.ids.length).toBeGreaterThanOrEqual(IDS_BEFORE_KILL);
      expect(listSessionIds(`${home}/sessions`)).toHaveLength(1);

      const { whole, tail } = rawTrail(run.trail);
      const recorded = new Set(eventIdsOf(whole));
      const missing = run.ids.filter((id) => !recorded.has(id));
      expect(missing, 'ids printed after emit returned but absent from the trail').toEqual([]);
      // 2 opening events, then ticks; every 50th tick carries a 256 KiB payload.
      expect(whole.filter((line) => line.length > 256 * 1024).length).toBeGreaterThanOrEqual(Math.floor(IDS_BEFORE_KILL / 50));

      const report = verifyTrail(run.trail);
      expect(report.hash_chain_valid).toBe(true);
      expect(report.complete).toBe(false);
      if (tail === '') {
        expect(report.reason).toBeUndefined();
        expect(report.events).toBe(whole.length);
      } else if (isJson(tail)) {
        // Killed after the record but before its newline: the record itself is whole and verifies.
        expect(report.reason).toBeUndefined();
        expect(report.events).toBe(whole.length + 1);
      } else {
        expect(report.reason).toBe('torn_tail');
        expect(report.line).toBe(whole.length + 1);
        expect(report.events).toBe(whole.length);
      }
    });

    it('leaves its lock behind, naming the dead writer', async () => {
      const run = await killAfter(home, 200);
      const lock = readLock(lockPathOf(run.trail));
      expect(lock?.pid).toBe(run.pid);
      expect(processIsAlive(run.pid)).toBe(false);
    });
  });

  describe('when a new session opens in the same home after the kill', () => {
    it('opens, even when its first session id is the dead session\'s, and never writes into the dead trail', async () => {
      const run = await killAfter(home, 200);
      const deadId = listSessionIds(`${home}/sessions`)[0] as string;
      const before = fs.readFileSync(run.trail);
      const offered: string[] = [];
      // The first id offered collides with the killed session, whose stale lock is still there.
      const ids: IdSource = {
        ...randomIds,
        sessionId: () => {
          const id = offered.length === 0 ? deadId : randomIds.sessionId();
          offered.push(id);
          return id;
        },
      };

      const session = agent('faults/busy-writer', { home }).session({ ids, export: false });
      session.emit('fault.after_kill', {});
      const result = await session.close();

      expect(offered[0]).toBe(deadId);
      expect(session.id).not.toBe(deadId);
      expect(result.chain).toMatchObject({ hash_chain_valid: true, complete: true, events: 4 });
      expect(fs.readFileSync(run.trail).equals(before)).toBe(true);
      expect(listSessionIds(`${home}/sessions`)).toEqual([deadId, session.id].sort());
    });
  });
});
