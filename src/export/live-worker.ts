/**
 * The live-export thread, one for a process: takes the trail lines of each session with live
 * export on, builds and sends their spans, and answers a session's `close` with what it exported
 * and dropped.
 */

import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { LiveSpanQueue, type LiveQueueOptions, type OtelExportStats } from './live-queue.js';

/**
 * A message from a session's thread. Its lines are in the shared ring: `upTo` says how many bytes
 * have been written to it since the session opened; `text` follows them (a line the ring could not
 * take), and `stepEnd` comes after both. `leftOut` counts the lines left out since the last message.
 */
export type LiveWorkerMessage =
  | { readonly session: number; readonly open: LiveQueueOptions; readonly ring: SharedArrayBuffer }
  | { readonly session: number; readonly upTo: number; readonly text: string; readonly stepEnd: boolean; readonly leftOut: number }
  | { readonly session: number; readonly close: true };

/**
 * A message to it: the counts so far, and at the end the final ones; or how far the ring has been
 * read (bytes since the session opened) and how many characters of text were taken.
 */
export type LiveWorkerReport =
  | { readonly session: number; readonly stats: OtelExportStats; readonly final: boolean }
  | { readonly session: number; readonly taken: number; readonly textTaken: number };

/** A session's queue and its side of the ring. */
interface LiveSession {
  readonly queue: LiveSpanQueue;
  readonly ring: Buffer;
  read: number;
}

/** The text of the ring's bytes from `from` to `upTo` (counted since the session opened). */
function ringText(ring: Buffer, from: number, upTo: number): string {
  const start = from % ring.length;
  const end = start + (upTo - from);
  if (end <= ring.length) return ring.toString('utf8', start, end);
  // Decoded whole: a character may straddle the end of the ring.
  return Buffer.concat([ring.subarray(start), ring.subarray(0, end - ring.length)]).toString('utf8');
}

// Background work: on a busy machine the sessions' threads come first. Linux gives each thread
// its own nice value, so this lowers this thread only; where it cannot, nothing changes.
const BACKGROUND_NICE = 10;

const port = parentPort;
if (port !== null) {
  try {
    setPriority(BACKGROUND_NICE);
  } catch {
    // Not permitted or not supported: the thread runs at the process's priority.
  }
  const sessions = new Map<number, LiveSession>();
  const report = (session: number, stats: OtelExportStats, final: boolean): void => port.postMessage({ session, stats, final } satisfies LiveWorkerReport);
  port.on('message', (message: LiveWorkerMessage) => {
    if ('open' in message) {
      const queue = new LiveSpanQueue(message.open, (stats) => report(message.session, stats, false));
      sessions.set(message.session, { queue, ring: Buffer.from(message.ring), read: 0 });
      return;
    }
    const session = sessions.get(message.session);
    if (session === undefined) return;
    if ('close' in message) {
      sessions.delete(message.session);
      void session.queue.close().then((stats) => report(message.session, stats, true));
      return;
    }
    const lines = ringText(session.ring, session.read, message.upTo);
    session.read = message.upTo;
    session.queue.addLines(message.text === '' ? lines : lines + message.text, message.stepEnd, message.leftOut);
    port.postMessage({ session: message.session, taken: message.upTo, textTaken: message.text.length } satisfies LiveWorkerReport);
  });
}
