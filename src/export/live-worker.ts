/**
 * The thread of one session's live export: takes trail lines from the session's thread, builds
 * and sends spans, and answers `close` with what it exported and dropped.
 */

import { parentPort, workerData } from 'node:worker_threads';
import { LiveSpanQueue, type LiveQueueOptions, type OtelExportStats } from './live-queue.js';

/** A message from the session's thread. */
export type LiveWorkerMessage = { readonly lines: string; readonly stepEnd: boolean } | { readonly close: true };

/** A message to it: the counts so far, and at the end the final ones. */
export interface LiveWorkerReport {
  readonly stats: OtelExportStats;
  readonly final: boolean;
}

const port = parentPort;
if (port !== null) {
  const report = (stats: OtelExportStats, final: boolean): void => port.postMessage({ stats, final } satisfies LiveWorkerReport);
  const queue = new LiveSpanQueue(workerData as LiveQueueOptions, (stats) => report(stats, false));
  port.on('message', (message: LiveWorkerMessage) => {
    if ('close' in message) {
      void queue.close().then((stats) => report(stats, true));
      return;
    }
    queue.addLines(message.lines, message.stepEnd);
  });
}
