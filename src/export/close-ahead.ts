/**
 * Close ahead: a long session's evidence pass (evidence-pass.ts) made while the session runs, on
 * a thread of its own that follows the trail on disk as it grows, in the session's pauses (a model
 * call, a tool's own work): while the session records as fast as it can, the thread waits, so it
 * never slows the session down. At close only what was written since its last read is left, so a
 * session that ran for hours closes in about the time its last lines take, where a pass over the
 * whole trail took 18 s for a million events.
 *
 * What close reports is still read from the bytes on disk, as they were read: the thread reads
 * the file, verifying each line as the pass at close does. A thread that fails, or a trail that
 * is shorter than what was read, leaves the pass to close, as if no thread had run.
 */

import type { Worker } from 'node:worker_threads';
import { eventOfLine } from '../spine/trail-reader.js';
import type { AuraEvent } from '../spine/record.js';
import { besideModule, startModuleWorker } from '../worker-thread.js';
import { DurableStagedFile } from './commit.js';
import type { CloseAheadMessage, CloseAheadReport, CloseAheadStart } from './close-ahead-worker.js';
import type { EvidenceRead } from './evidence-pass.js';

/**
 * The trail size at which a session starts its close-ahead thread: below it, the pass at close
 * takes about half a second or less, less than a thread's start and its memory are worth.
 */
export const CLOSE_AHEAD_BYTES = 32 * 1024 * 1024;

/** The close-ahead thread of one session. */
export class CloseAhead {
  private readonly report: Promise<CloseAheadReport | null>;
  /** The spans file the thread stages, when spans are written. */
  private readonly staged: DurableStagedFile | null;

  private constructor(
    private readonly worker: Worker,
    otel: string | null,
  ) {
    this.staged = otel === null ? null : new DurableStagedFile(otel);
    this.report = new Promise((resolve) => {
      worker.once('message', (report: CloseAheadReport) => resolve(report));
      worker.once('error', () => resolve(null));
      worker.once('exit', () => resolve(null));
    });
    // The thread never keeps the process alive on its own: only a close waiting for it does. After
    // the listeners: a 'message' listener refs the thread's port again.
    worker.unref();
  }

  /** Starts the thread; null when it cannot start (the pass is then made at close). */
  static start(options: CloseAheadStart): CloseAhead | null {
    try {
      return new CloseAhead(startModuleWorker(besideModule('close-ahead-worker', import.meta.url), { workerData: options }), options.otel);
    } catch {
      return null;
    }
  }

  /**
   * Tells the thread the trail is whole and waits for its pass, the spans (when written) staged
   * and durable. Null when the thread failed: the caller makes the pass itself.
   */
  async finish(): Promise<EvidenceRead | null> {
    this.worker.ref();
    this.post('finish');
    const report = await this.report;
    void this.worker.terminate();
    if (report === null || !report.done) {
      this.discard();
      return null;
    }
    const events: AuraEvent[] = [];
    for (const text of report.keptLines) {
      const event = eventOfLine(text);
      if (event === null) {
        this.discard();
        return null;
      }
      events.push(event);
    }
    return { trail: { chain: report.chain, events, digest: { count: report.count, kinds: report.kinds, positions: report.positions } }, spanCount: report.spanCount };
  }

  /** Stops the thread and removes what it staged: no evidence is wanted (a session given up). */
  abandon(): void {
    this.post('abandon');
    void this.worker.terminate().then(() => this.discard());
  }

  private discard(): void {
    this.staged?.discard();
  }

  private post(message: CloseAheadMessage): void {
    try {
      this.worker.postMessage(message);
    } catch {
      // A thread that is gone answers through its exit.
    }
  }
}
