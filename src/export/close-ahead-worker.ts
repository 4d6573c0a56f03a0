/**
 * The thread of a session's close-ahead (close-ahead.ts): follows the trail as it grows, a chunk
 * at a time, through the evidence pass, and at `finish` reads to the end and answers with what
 * the pass found. Any failure is answered, not thrown: the session then makes the pass at close.
 */

import * as fs from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { openTrail, TrailFollower } from '../spine/trail-lines.js';
import { StagedFile } from './commit.js';
import { EvidencePass } from './evidence-pass.js';
import type { ChainReport } from '../spine/verify.js';
import type { SpanOptions } from './spans.js';

/** What the thread is started with. */
export interface CloseAheadStart {
  readonly sessionId: string;
  readonly trail: string;
  /** Where the spans go when they are written (`{id}.otel.jsonl`, staged), or null. */
  readonly otel: string | null;
  readonly buildSpans: boolean;
  readonly spans: SpanOptions;
}

/** A message to the thread: the session closed (its trail is whole), or no evidence is wanted. */
export type CloseAheadMessage = 'finish' | 'abandon';

/** The thread's answer: the pass's results, plainly cloneable; or why it gave up. */
export type CloseAheadReport =
  | {
      readonly done: true;
      readonly chain: ChainReport;
      readonly keptLines: readonly string[];
      readonly positions: readonly number[];
      readonly kinds: ReadonlyMap<string, number>;
      readonly count: number;
      readonly spanCount: number;
    }
  | { readonly done: false; readonly reason: string };

// Between looks at the trail while there is nothing to read, or while the session is busy.
const IDLE_MS = 25;
/**
 * A session that appends faster than this (bytes a millisecond: about 9,000 events a second) is
 * busy recording: its thread would lose a fifth to a third of its speed to this one's reading and
 * span writing on two cores (memory, and V8's helper threads that both share), so this one waits
 * for a pause. An agent's session pauses for every model call; a loop that does nothing but record
 * leaves the whole pass to close, as before.
 */
const BUSY_BYTES_PER_MS = 8 * 1024;

const port = parentPort;
if (port !== null) {
  const start = workerData as CloseAheadStart;
  const otel = start.otel === null ? null : new StagedFile(start.sessionId, start.otel);
  const fd = openTrail(start.trail);
  const follower = new TrailFollower(fd, start.trail);
  const pass = new EvidencePass(otel, start.buildSpans, start.spans);
  let finishing = false;
  let timer: NodeJS.Timeout | null = null;
  let seenSize = 0;
  let seenAt = performance.now();

  /** True while the session appends as fast as a busy one: its growth since the last look. */
  const sessionBusy = (): boolean => {
    const size = fs.fstatSync(fd).size;
    const now = performance.now();
    const busy = size - seenSize > BUSY_BYTES_PER_MS * Math.max(now - seenAt, 1);
    seenSize = size;
    seenAt = now;
    return busy;
  };

  // The session's thread ends this one once it has the report.
  const end = (report: CloseAheadReport): void => {
    if (timer !== null) clearTimeout(timer);
    fs.closeSync(fd);
    port.postMessage(report);
  };
  const step = (): void => {
    timer = null;
    try {
      if (!finishing && sessionBusy()) {
        timer = setTimeout(step, IDLE_MS);
        return;
      }
      const lines = follower.read(finishing);
      if (lines !== null) {
        for (const line of lines) pass.add(line);
        setImmediate(step);
        return;
      }
      if (!finishing) {
        timer = setTimeout(step, IDLE_MS);
        return;
      }
      // Cut back below what was read, the file is no longer what the pass saw: close reads it again.
      const size = fs.fstatSync(fd).size;
      if (size !== follower.offset) throw new Error(`the trail holds ${size} bytes, and ${follower.offset} were read`);
      const { trail, spanCount } = pass.finish();
      otel?.finish();
      const digest = trail.digest;
      if (digest === undefined) throw new Error('the pass kept no digest');
      end({ done: true, chain: trail.chain, keptLines: pass.keptLines, positions: digest.positions, kinds: digest.kinds, count: digest.count, spanCount });
    } catch (error) {
      otel?.discard();
      end({ done: false, reason: error instanceof Error ? error.message : String(error) });
    }
  };
  port.on('message', (message: CloseAheadMessage) => {
    if (message === 'abandon') {
      otel?.discard();
      process.exit(0);
    }
    finishing = true;
    // A read already queued carries on; one asleep is woken.
    if (timer !== null) {
      clearTimeout(timer);
      step();
    }
  });
  step();
}
