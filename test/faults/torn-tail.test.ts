/**
 * A deterministic torn tail (DESIGN §2.3): a writer that dies halfway through appending a line
 * leaves a trail whose whole lines verify and whose last line is reported as `torn_tail`, an
 * interrupted write, and not as tampering.
 */

import { beforeAll, describe, expect, it } from 'vitest';
import { readTrail } from '../../src/spine/trail-reader.js';
import { verifyTrail, type ChainReport } from '../../src/spine/verify.js';
import { tempDir } from '../helpers/temp.js';
import { eventIdsOf, rawTrail, runFixture, wholeLines, type ChildExit, type RawTrail } from './helpers.js';

const EMITTED = 3;
// membrane.ingress and session.open come before the emitted events.
const WHOLE_LINES = EMITTED + 2;

describe('verifyTrail', () => {
  describe('when the writer was killed in the middle of appending a line', () => {
    let exit: ChildExit;
    let printed: string[];
    let trail: string;
    let raw: RawTrail;
    let report: ChainReport;

    beforeAll(async () => {
      const home = tempDir('aura-faults-torn-');
      exit = await runFixture('torn-writer.ts', [home, String(EMITTED)]);
      const [first, ...ids] = wholeLines(exit.stdout);
      trail = (first ?? '').slice('trail '.length);
      printed = ids;
      raw = rawTrail(trail);
      report = verifyTrail(trail);
    });

    it('is a trail of whole lines followed by a line cut short', () => {
      expect(exit.signal, exit.stderr).toBe('SIGKILL');
      expect(raw.whole).toHaveLength(WHOLE_LINES);
      expect(raw.tail.length).toBeGreaterThan(0);
      expect(raw.tail.startsWith('{"event_id": ')).toBe(true);
      expect(eventIdsOf(raw.whole).slice(2)).toEqual(printed);
    });

    it('reports the chain before the torn line as valid', () => {
      expect(report.hash_chain_valid).toBe(true);
      expect(report.events).toBe(WHOLE_LINES);
      const last = JSON.parse(raw.whole.at(-1) as string) as { content_hash: string };
      expect(report.head_hash).toBe(last.content_hash);
    });

    it('reports the trail incomplete with reason torn_tail at the torn line', () => {
      expect(report.complete).toBe(false);
      expect(report.reason).toBe('torn_tail');
      expect(report.line).toBe(WHOLE_LINES + 1);
    });

    it('gives the same chain report through readTrail, with the whole events only', () => {
      const read = readTrail(trail);
      expect(read.chain).toEqual(report);
      expect(read.events.map((event) => event.event_id)).toEqual(eventIdsOf(raw.whole));
    });
  });
});
