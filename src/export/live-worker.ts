/**
 * The live-export thread, one for a process: takes the trail lines of each session with live
 * export on, builds and sends their spans, and answers a session's `close` with what it exported
 * and dropped.
 */

import { parentPort } from 'node:worker_threads';
import { LiveSpanQueue, type LiveQueueOptions, type OtelExportStats } from './live-queue.js';

/** A message from a session's thread. */
export type LiveWorkerMessage =
  | { readonly session: number; readonly open: LiveQueueOptions }
  | { readonly session: number; readonly lines: string; readonly stepEnd: boolean }
  | { readonly session: number; readonly close: true };

/** A message to it: the counts so far, and at the end the final ones; or how many lines were taken. */
export type LiveWorkerReport =
  | { readonly session: number; readonly stats: OtelExportStats; readonly final: boolean }
  | { readonly session: number; readonly taken: number };

const port = parentPort;
if (port !== null) {
  const queues = new Map<number, LiveSpanQueue>();
  const report = (session: number, stats: OtelExportStats, final: boolean): void => port.postMessage({ session, stats, final } satisfies LiveWorkerReport);
  port.on('message', (message: LiveWorkerMessage) => {
    if ('open' in message) {
      queues.set(message.session, new LiveSpanQueue(message.open, (stats) => report(message.session, stats, false)));
      return;
    }
    const queue = queues.get(message.session);
    if (queue === undefined) return;
    if ('close' in message) {
      queues.delete(message.session);
      void queue.close().then((stats) => report(message.session, stats, true));
      return;
    }
    queue.addLines(message.lines, message.stepEnd);
    port.postMessage({ session: message.session, taken: message.lines.length } satisfies LiveWorkerReport);
  });
}
