/**
 * Live export: spans pushed to a collector while the session runs (config `otel.endpoint`).
 *
 * The session's thread does only what `emit` can afford: it copies each written trail line into
 * a ring of memory shared with a worker thread (one for the process, shared by its sessions) and,
 * once the current synchronous step is over, tells the worker how far the ring is filled; the
 * worker builds the spans, batches them and sends them (live-queue.ts). So a slow collector, span
 * building and protobuf encoding never cost `emit` more than copying the line's bytes (a message
 * carrying the text costs several times that to clone); `close` waits for the worker at most the
 * configured `close_timeout_ms` (plus a margin for the thread to answer).
 *
 * The worker runs at a lower priority, so on a busy machine it falls behind and the ring fills: a
 * line that does not fit then goes as text in a message, while the text waiting stays under a
 * bound; past it the line is left out and counted as dropped, so a summary never reports spans as
 * exported that the collector could not have had.
 */

import * as fs from 'node:fs';
import type { Worker } from 'node:worker_threads';
import type { OtelSettings } from '../config/otel.js';
import { besideModule, startModuleWorker } from '../worker-thread.js';
import type { LiveExportLimits, LiveQueueOptions, OtelExportStats } from './live-queue.js';
import type { LiveWorkerMessage, LiveWorkerReport } from './live-worker.js';
import { resolveOtlpTarget } from './otlp-http.js';

export type { OtelExportStats } from './live-queue.js';

const DEFAULT_LIMITS: LiveExportLimits = { maxQueue: 2048, maxBatch: 512, delayMs: 200 };
// Lines kept before they go to the worker even mid-step: a long synchronous loop stays bounded.
const MAX_PENDING_LINES = 4096;
// The shared ring of a session: lines the worker has not taken yet.
const DEFAULT_RING_BYTES = 16 * 1024 * 1024;
// A line the ring cannot take (longer than the ring, or the worker is behind) goes as text in a
// message, while this much such text is waiting at most.
const DEFAULT_BACKLOG_CHARS = 64 * 1024 * 1024;
// UTF-8 takes at most three bytes for each UTF-16 code unit.
const MAX_BYTES_PER_CHAR = 3;
// Time for the worker to answer after its own deadline.
const STOP_MARGIN_MS = 500;

/** The live exporter of one session. */
export class LiveExport {
  private readonly session = ++sessionCount;
  private readonly ring: Buffer<SharedArrayBuffer>;
  /** Bytes written into the ring since the session opened (the worker reads up to where it is told). */
  private written = 0;
  /** Bytes of the ring the worker has taken: the rest must not be written over. */
  private taken = 0;
  private pendingLines = 0;
  private flushScheduled = false;
  /** Characters of lines posted as text that the worker has not yet taken. */
  private textBacklog = 0;
  private readonly maxBacklogChars: number;
  /** Lines left out since the last message: the worker counts them as dropped. */
  private leftOut = 0;
  /** The worker's last account, what close reports if the worker does not answer in time. */
  private latest: OtelExportStats;
  private readonly onReport = (report: LiveWorkerReport): void => {
    if (report.session !== this.session) return;
    if ('taken' in report) {
      this.taken = report.taken;
      this.textBacklog -= report.textTaken;
    }
    else this.latest = report.stats;
  };

  private constructor(
    private readonly closeTimeoutMs: number,
    options: LiveQueueOptions,
  ) {
    this.ring = Buffer.from(new SharedArrayBuffer(options.limits.ringBytes ?? DEFAULT_RING_BYTES));
    this.maxBacklogChars = options.limits.backlogChars ?? DEFAULT_BACKLOG_CHARS;
    this.latest = { endpoint: options.target.endpoint, protocol: options.target.protocol, exported: 0, dropped: 0 };
    const worker = liveWorker();
    worker.on('message', this.onReport);
    // A 'message' listener refs the thread's port: an open session must not keep the process alive.
    if (closingSessions === 0) worker.unref();
    this.post({ session: this.session, open: options, ring: this.ring.buffer });
  }

  /**
   * The live exporter the config asks for (`otel.endpoint`), or null when live export is off.
   * @throws OtlpConfigError (at open, before the trail exists)
   */
  static fromSettings(settings: OtelSettings, env: Readonly<Record<string, string | undefined>> = process.env, limits: LiveExportLimits = DEFAULT_LIMITS): LiveExport | null {
    if (settings.endpoint === null) return null;
    const target = resolveOtlpTarget(settings, env);
    if (target === null) return null;
    const resourceEnv = { OTEL_SERVICE_NAME: env['OTEL_SERVICE_NAME'], OTEL_RESOURCE_ATTRIBUTES: env['OTEL_RESOURCE_ATTRIBUTES'] };
    return new LiveExport(settings.close_timeout_ms, { target, closeTimeoutMs: settings.close_timeout_ms, limits, captureToolContent: settings.capture_tool_content, resourceEnv });
  }

  /** Bytes and characters handed to the export thread that it has not taken yet. */
  get behind(): number {
    return this.written - this.taken + this.textBacklog;
  }

  /** Takes a trail line as written. Never throws, never waits. */
  add(line: string): void {
    if (!this.write(line)) {
      this.leftOut++;
      return;
    }
    if (++this.pendingLines >= MAX_PENDING_LINES) this.flush(false);
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    // After the current synchronous step: a result and the policy checks of it travel together.
    queueMicrotask(() => {
      this.flushScheduled = false;
      this.flush(true);
    });
  }

  /** Sends the rest and waits for the worker's account, at most the close timeout (and a margin). */
  async close(): Promise<OtelExportStats> {
    this.flush(true);
    const worker = liveWorker();
    // Keep the process alive while the collector gets its last chance.
    closingSessions++;
    worker.ref();
    let timer: NodeJS.Timeout | undefined;
    let onFinal: ((report: LiveWorkerReport) => void) | undefined;
    try {
      return await Promise.race([
        new Promise<OtelExportStats>((resolve) => {
          onFinal = (report) => {
            if (report.session === this.session && 'final' in report && report.final) resolve(report.stats);
          };
          worker.on('message', onFinal);
          this.post({ session: this.session, close: true });
        }),
        new Promise<OtelExportStats>((resolve) => (timer = setTimeout(() => resolve(this.latest), this.closeTimeoutMs + STOP_MARGIN_MS))),
      ]);
    } finally {
      clearTimeout(timer);
      if (onFinal !== undefined) worker.off('message', onFinal);
      worker.off('message', this.onReport);
      if (--closingSessions === 0) worker.unref();
    }
  }

  /** Copies a line into the ring, or posts it when the ring cannot take it; false when it is left out. */
  private write(line: string): boolean {
    const size = this.ring.length;
    const at = this.written % size;
    const free = size - (this.written - this.taken);
    const most = line.length * MAX_BYTES_PER_CHAR;
    if (most <= free && most <= size - at) {
      this.written += this.ring.write(line, at, 'utf8');
      return true;
    }
    const bytes = Buffer.from(line, 'utf8');
    if (bytes.length <= free) {
      // The line wraps around the end of the ring.
      const head = Math.min(bytes.length, size - at);
      bytes.copy(this.ring, at, 0, head);
      bytes.copy(this.ring, 0, head);
      this.written += bytes.length;
      return true;
    }
    if (this.textBacklog > this.maxBacklogChars) return false;
    // Order: what the ring holds before it goes first.
    this.post({ session: this.session, upTo: this.written, text: line, stepEnd: false, leftOut: this.takeLeftOut() });
    this.textBacklog += line.length;
    this.pendingLines = 0;
    return true;
  }

  private flush(stepEnd: boolean): void {
    if (this.pendingLines === 0 && this.leftOut === 0 && !stepEnd) return;
    this.post({ session: this.session, upTo: this.written, text: '', stepEnd, leftOut: this.takeLeftOut() });
    this.pendingLines = 0;
  }

  private takeLeftOut(): number {
    const count = this.leftOut;
    this.leftOut = 0;
    return count;
  }

  private post(message: LiveWorkerMessage): void {
    try {
      liveWorker().postMessage(message);
    } catch {
      // A worker that is gone takes nothing: close reports what it last said.
    }
  }
}

let sessionCount = 0;
/** Sessions waiting for the thread's last account: while there are some, it keeps the process alive. */
let closingSessions = 0;
let worker: Worker | null = null;

/** The process's live-export thread, started with the first session that needs it. */
function liveWorker(): Worker {
  if (worker === null) {
    // The worker lowers its own priority, and threads inherit their creator's: libuv's pool must
    // be started here first, or a lookup of the collector's host from the worker would start it
    // and slow every async file, crypto and zlib call of the host process.
    fs.access('.', () => undefined);
    const started = startModuleWorker(besideModule('live-worker', import.meta.url));
    // Only a closing session keeps the process alive for it.
    started.unref();
    // Each open session listens for its own reports.
    started.setMaxListeners(0);
    started.on('error', () => undefined);
    started.on('exit', () => {
      if (worker === started) worker = null;
    });
    worker = started;
  }
  return worker;
}
