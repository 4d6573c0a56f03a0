/**
 * The thread of a session's close-ahead (close-ahead.ts): follows the trail as it grows, a chunk
 * at a time, through the evidence pass, and at `finish` reads to the end and answers with what
 * the pass found. Any failure is answered, not thrown: the session then makes the pass at close.
 */

import * as fs from 'node:fs';
import { setPriority } from 'node:os';
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

// Between reads that found nothing new: the thread sleeps, a session that writes slowly costs nothing.
const IDLE_MS = 25;
// Background work, as live export's thread: the session's own thread comes first.
const BACKGROUND_NICE = 19;

const port = parentPort;
if (port !== null) {
  const start = workerData as CloseAheadStart;
  try {
    setPriority(BACKGROUND_NICE);
  } catch {
    // Not permitted: the thread runs at the process's priority.
  }
  const otel = start.otel === null ? null : new StagedFile(start.sessionId, start.otel);
  const fd = openTrail(start.trail);
  const follower = new TrailFollower(fd, start.trail);
  const pass = new EvidencePass(otel, start.buildSpans, start.spans);
  let finishing = false;
  let timer: NodeJS.Timeout | null = null;

  // The session's thread ends this one once it has the report.
  const end = (report: CloseAheadReport): void => {
    if (timer !== null) clearTimeout(timer);
    fs.closeSync(fd);
    port.postMessage(report);
  };
  const step = (): void => {
    timer = null;
    try {
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
