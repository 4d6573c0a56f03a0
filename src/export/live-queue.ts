/**
 * The span side of live export, run in its own thread (see live-export.ts): recorded trail lines
 * go into the span builder; each span that ends (a call, a policy decision) joins a bounded queue
 * that is sent in batches, one request at a time, and the root span joins at close.
 *
 * Nothing here may fail the session: a full queue drops the span and counts it, every failure is
 * counted rather than thrown, and `close` waits for the collector at most `closeTimeoutMs`, then
 * gives up on what is left and counts it as dropped.
 */

import { parseJsonLossless } from '../spine/json-reader.js';
import { parseJson } from '../spine/native-json.js';
import type { AuraEvent } from '../spine/record.js';
import { TrailLineReader } from './live-line.js';
import { spanSourceOf, type SpanSource } from './otel.js';
import { sendSpans, type OtlpTarget } from './otlp-http.js';
import { SpanBuilder, type Span } from './spans.js';

/** What live export did, as the summary reports it (never a header). */
export interface OtelExportStats {
  readonly endpoint: string;
  readonly protocol: string;
  /** Spans the collector accepted. */
  readonly exported: number;
  /**
   * Spans given up on: queue full, refused, or not delivered by the close deadline; and each trail
   * line the export thread fell too far behind to take, counted as one.
   */
  readonly dropped: number;
}

/** Queue and batch sizes (tests and benchmarks shrink them). */
export interface LiveExportLimits {
  readonly maxQueue: number;
  readonly maxBatch: number;
  readonly delayMs: number;
  /** Bytes of the ring that carries lines to the export thread (live-export.ts). */
  readonly ringBytes?: number;
  /** Characters of lines the ring could not take that may wait as messages, before lines are left out. */
  readonly backlogChars?: number;
}

/** How the queue is set up (what crosses to its thread). */
export interface LiveQueueOptions {
  readonly target: OtlpTarget;
  readonly closeTimeoutMs: number;
  readonly limits: LiveExportLimits;
  readonly captureToolContent: boolean;
  /** The session's `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES` (a thread keeps the environment it started with). */
  readonly resourceEnv: Readonly<Record<string, string | undefined>>;
}

/** The span builder and send queue of one session's live export. */
export class LiveSpanQueue {
  private readonly builder: SpanBuilder;
  private readonly queue: Span[] = [];
  private readonly abort = new AbortController();
  private readonly target: OtlpTarget;
  private readonly limits: LiveExportLimits;
  private source: SpanSource | null = null;
  private timer: NodeJS.Timeout | null = null;
  private sending: Promise<void> | null = null;
  private exported = 0;
  private dropped = 0;
  /**
   * How a line is read. Spans use strings, booleans and the session's own integers, which the
   * native parser reads as the trail reader does; captured tool content is written out again, so
   * it needs the lossless reader (`1.0` stays `1.0`, big integers stay exact).
   */
  private readonly parse: (text: string) => unknown;
  private readonly reader: TrailLineReader;

  /** `onSent` hears the counts after each batch. */
  constructor(
    private readonly options: LiveQueueOptions,
    private readonly onSent: (stats: OtelExportStats) => void = () => undefined,
  ) {
    this.target = options.target;
    this.limits = options.limits;
    this.builder = new SpanBuilder((span) => this.enqueue(span), { captureToolContent: options.captureToolContent });
    this.parse = options.captureToolContent ? parseJsonLossless : parseJson;
    this.reader = new TrailLineReader(this.parse);
  }

  /**
   * Takes trail lines as written, `\n`-terminated. `stepEnd` says the session finished a
   * synchronous step with the last of them: a result and the checks of it are then all in, so a
   * call waiting on them can end. `leftOut` lines never reached this thread: each counts as dropped.
   * Never throws.
   */
  addLines(text: string, stepEnd: boolean, leftOut = 0): void {
    this.dropped += leftOut;
    for (const line of text.split('\n')) {
      if (line === '') continue;
      try {
        const event = this.reader.read(line) ?? (this.parse(line) as AuraEvent);
        this.source ??= spanSourceOf(event.session_id, event.aura_id, this.options.resourceEnv);
        this.builder.add(event);
      } catch {
        // A span that cannot be built is one dropped, never a failed event.
        this.dropped++;
      }
    }
    if (stepEnd) this.builder.settle();
  }

  /** What was exported and dropped so far. */
  stats(): OtelExportStats {
    return { endpoint: this.target.endpoint, protocol: this.target.protocol, exported: this.exported, dropped: this.dropped };
  }

  /** Ends the root span and waits (at most the close timeout) for the queue to drain. */
  async close(): Promise<OtelExportStats> {
    this.builder.finish();
    if (this.timer !== null) clearTimeout(this.timer);
    const deadline = setTimeout(() => this.abort.abort(), this.options.closeTimeoutMs);
    try {
      while (this.queue.length > 0 || this.sending !== null) {
        if (this.abort.signal.aborted) break;
        await (this.sending ?? this.send());
      }
    } finally {
      clearTimeout(deadline);
      this.abort.abort();
    }
    this.dropped += this.queue.splice(0).length;
    return this.stats();
  }
  private enqueue(span: Span): void {
    if (this.queue.length >= this.limits.maxQueue) {
      this.dropped++;
      return;
    }
    this.queue.push(span);
    if (this.sending !== null || this.timer !== null) return;
    this.timer = setTimeout(() => void this.send(), this.queue.length >= this.limits.maxBatch ? 0 : this.limits.delayMs);
    // A session left open must not keep the process alive for its spans.
    this.timer.unref();
  }

  /** Sends batches until the queue is empty; one request at a time, in order. */
  private send(): Promise<void> {
    this.timer = null;
    this.sending ??= (async () => {
      while (this.queue.length > 0 && !this.abort.signal.aborted && this.source !== null) {
        const batch = this.queue.splice(0, this.limits.maxBatch);
        const outcome = await sendSpans(this.target, this.source, batch, this.abort.signal);
        if (outcome.delivered) this.exported += batch.length;
        else this.dropped += batch.length;
        this.onSent(this.stats());
      }
    })()
      .catch(() => undefined)
      .finally(() => {
        this.sending = null;
        // A span that came in as the loop was ending still gets its turn.
        if (this.queue.length > 0 && !this.abort.signal.aborted) void this.send();
      });
    return this.sending;
  }
}
