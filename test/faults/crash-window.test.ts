/**
 * A crash is never read as an attack: every byte state a killed writer can leave (a signed or an
 * unsigned session cut at each write boundary, at random bytes, or really SIGKILLed mid-run)
 * verifies as intact, `torn_tail`, `empty` or incomplete, never with a tamper reason.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ChainFailureReason } from '../../src/errors.js';
import { agent } from '../../src/session/agent.js';
import { KeyRing } from '../../src/spine/signing.js';
import { verifyTrail, type ChainReport } from '../../src/spine/verify.js';
import { listSessionIds, sessionFiles } from '../../src/store/session-files.js';
import { summarySeal } from '../../src/store/summary-seal.js';
import { tempDir } from '../helpers/temp.js';
import { spawnFixture, waitForExit } from './helpers.js';

/** What an interrupted write may leave: nothing, or a last line cut short. */
const CRASH_REASONS: readonly (ChainFailureReason | undefined)[] = [undefined, 'torn_tail', 'empty'];

function home(signed: boolean): { home: string; keys: KeyRing | null } {
  const dir = tempDir('aura-crash-window-');
  fs.writeFileSync(path.join(dir, 'config.yaml'), 'checkpoint_every: 3\n');
  if (!signed) return { home: dir, keys: null };
  KeyRing.generate(path.join(dir, 'keys'));
  return { home: dir, keys: KeyRing.load(path.join(dir, 'keys')) };
}

/** A closed session's whole trail, and the byte offset at which each of its lines ends. */
async function completeTrail(signed: boolean): Promise<{ bytes: Buffer; ends: number[]; keys: KeyRing | null; dir: string }> {
  const { home: dir, keys } = home(signed);
  // Seven events with a cadence of 3: checkpoints mid-trail, one due right at close, and the final one.
  const session = agent('faults/crash', { home: dir }).session({ export: false });
  for (let i = 0; i < 7; i++) session.emit('fault.step', { i, text: `é ${'ü'.repeat(i)}` });
  const result = await session.close();
  const bytes = fs.readFileSync(result.log_path);
  const ends: number[] = [];
  for (let at = bytes.indexOf(0x0a); at >= 0; at = bytes.indexOf(0x0a, at + 1)) ends.push(at + 1);
  return { bytes, ends, keys, dir };
}

function verifyPrefix(dir: string, bytes: Buffer, length: number, keys: KeyRing | null): ChainReport {
  const file = path.join(dir, `cut-${length}.jsonl`);
  fs.writeFileSync(file, bytes.subarray(0, length));
  try {
    return verifyTrail(file, undefined, keys === null ? {} : { keys });
  } finally {
    fs.rmSync(file);
  }
}

function expectNoTamper(report: ChainReport, what: string): void {
  expect(CRASH_REASONS, `${what}: ${report.reason ?? ''} ${report.message ?? ''}`).toContain(report.reason);
  if (report.events > 0) expect(report.hash_chain_valid, what).toBe(true);
  expect(report.signatures.verified, what).not.toBe(false);
}

/** A small seeded generator, so a failing offset can be replayed. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

describe.each([
  ['a signed session', true],
  ['an unsigned session', false],
])('%s cut by a crash', (_, signed) => {
  it('reads as intact and incomplete at every write boundary, complete only when whole', async () => {
    const { bytes, ends, keys, dir } = await completeTrail(signed);
    expect(ends.at(-1)).toBe(bytes.length);
    const text = bytes.toString('utf8');
    const kinds = text.trimEnd().split('\n').map((line) => (JSON.parse(line) as { kind: string }).kind);
    if (signed) expect(kinds.slice(-2)).toEqual(['session.close', 'chain.checkpoint']);
    for (const [i, end] of [0, ...ends].entries()) {
      const report = verifyPrefix(dir, bytes, end, keys);
      expectNoTamper(report, `cut after line ${i}`);
      expect(report.complete, `cut after line ${i}`).toBe(end === bytes.length);
      if (i > 0) expect(report.events).toBe(i);
    }
  });

  it('leaves session.close and its final checkpoint on disk together, from one write', async () => {
    const { bytes } = await completeTrail(signed);
    const lines = bytes.toString('utf8').trimEnd().split('\n');
    const closeAt = lines.findIndex((line) => line.includes('"kind": "session.close"'));
    expect(closeAt).toBe(lines.length - (signed ? 2 : 1));
  });

  it('reads as intact, torn or incomplete when cut at any of 300 random bytes', async () => {
    const { bytes, keys, dir } = await completeTrail(signed);
    const random = seeded(signed ? 14 : 41);
    for (let n = 0; n < 300; n++) {
      const length = Math.floor(random() * bytes.length);
      expectNoTamper(verifyPrefix(dir, bytes, length, keys), `cut at byte ${length} of ${bytes.length}`);
    }
  });
});

describe('a writer SIGKILLed while it opens and closes sessions', () => {
  it.each([
    ['signed', true],
    ['unsigned', false],
  ])('leaves only %s trails that read as intact, torn or incomplete', async (_, signed) => {
    const { home: dir, keys } = home(signed);
    for (let round = 0; round < 3; round++) {
      const child = spawnFixture('closing-writer.ts', [dir]);
      const exit = waitForExit(child, 30_000);
      // Kill once a few sessions have closed, at a point that differs from round to round.
      const wanted = 5 + round * 7;
      let closed = 0;
      const enough = new Promise<void>((resolve) => {
        child.stdout?.on('data', (chunk: Buffer) => {
          closed += chunk.toString('utf8').split('\n').length - 1;
          if (closed >= wanted) {
            setTimeout(() => child.kill('SIGKILL'), round * 3);
            resolve();
          }
        });
      });
      // A writer that stops on its own (a close refused after the last kill) fails here, with its error.
      const early = exit.then((e) => {
        throw new Error(`round ${round}: the writer exited after ${closed} closes (${String(e.signal ?? e.code)}): ${e.stderr}`);
      });
      await Promise.race([enough, early]);
      early.catch(() => undefined);
      const ended = await exit;
      expect(ended.signal, ended.stderr).toBe('SIGKILL');
    }
    const ids = listSessionIds(path.join(dir, 'sessions'));
    expect(ids.length).toBeGreaterThanOrEqual(5 + 12 + 19);
    for (const id of ids) {
      const files = sessionFiles(path.join(dir, 'sessions'), id);
      expectNoTamper(verifyTrail(files.trail, undefined, keys === null ? {} : { keys }), id);
      // A summary is committed only after the trail is whole: then the trail matches its seal.
      if (fs.existsSync(files.summary)) {
        expect(verifyTrail(files.trail, summarySeal(files.summary), keys === null ? {} : { keys })).toMatchObject({ hash_chain_valid: true, complete: true });
      }
    }
  }, 60_000);
});
