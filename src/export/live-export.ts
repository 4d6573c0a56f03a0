/**
 * Live export: spans pushed to a collector while the session runs. Each recorded event goes into
 * the span builder; each span that ends (a call, a policy decision) joins a bounded queue that is
 * sent in batches in the background, and the root span joins at close.
 *
 * Nothing here may slow or fail the session: `add` is synchronous and cheap (a full queue drops
 * the span and counts it), every failure is counted rather than thrown, and `close` waits for the
 * collector at most `close_timeout_ms`, then gives up on what is left and counts it as dropped.
 */

import type { OtelSettings } from '../config/otel.js';
import { parseJsonLossless } from '../spine/json-reader.js';
import type { AuraEvent, EventFields, JsonObject } from '../spine/record.js';
import { spanSourceOf, type SpanSource } from './otel.js';
import { resolveOtlpTarget, sendSpans, type OtlpTarget } from './otlp-http.js';
import { SpanBuilder, type Span } from './spans.js';

/** What live export did, as the summary reports it (never a header). */
export interface OtelExportStats {
  readonly endpoint: string;
  readonly protocol: string;
  /** Spans the collector accepted. */
  readonly exported: number;
  /** Spans given up on: queue full, refused, or not delivered by the close deadline. */
  readonly dropped: number;
}

/** Queue and batch sizes (tests and benchmarks shrink them). */
export interface LiveExportLimits {
  readonly maxQueue: number;
  readonly maxBatch: number;
  readonly delayMs: number;
}

const DEFAULT_LIMITS: LiveExportLimits = { maxQueue: 2048, maxBatch: 512, delayMs: 200 };

/** The live exporter of one session. */
export class LiveExport {
  private readonly builder: SpanBuilder;
  private readonly queue: Span[] = [];
  private readonly abort = new AbortController();
  private source: SpanSource | null = null;
  private agentIds: { text: string; value: JsonObject } | null = null;
  private timer: NodeJS.Timeout | null = null;
  private settleScheduled = false;
  private sending: Promise<void> | null = null;
  private exported = 0;
  private dropped = 0;

  /**
   * How a recorded text is read back. Spans use strings, booleans and the session's own integers,
   * which the native parser reads as the trail reader does; captured tool content is written out
   * again, so it needs the lossless reader (`1.0` stays `1.0`, big integers stay exact).
   */
  private readonly parse: (text: string) => unknown;

  private constructor(
    private readonly target: OtlpTarget,
    private readonly closeTimeoutMs: number,
    private readonly limits: LiveExportLimits,
    captureToolContent: boolean,
  ) {
    this.builder = new SpanBuilder((span) => this.enqueue(span), { captureToolContent });
    this.parse = captureToolContent ? parseJsonLossless : JSON.parse;
  }

  /**
   * The live exporter the config asks for (`otel.endpoint`), or null when live export is off.
   * @throws OtlpConfigError (at open, before the trail exists)
   */
  static fromSettings(settings: OtelSettings, env: Readonly<Record<string, string | undefined>> = process.env, limits: LiveExportLimits = DEFAULT_LIMITS): LiveExport | null {
    if (settings.endpoint === null) return null;
    const target = resolveOtlpTarget(settings, env);
    return target === null ? null : new LiveExport(target, settings.close_timeout_ms, limits, settings.capture_tool_content);
  }

  /** Takes a recorded event (its fields as written). Never throws. */
  add(fields: EventFields, contentHash: string): void {
    try {
      this.source ??= spanSourceOf(fields.session_id, fields.aura_id);
      if (this.agentIds?.text !== fields.agent_ids) this.agentIds = { text: fields.agent_ids, value: parseJsonLossless(fields.agent_ids) as JsonObject };
      const event: AuraEvent = {
        ...fields,
        agent_ids: this.agentIds.value,
        payload: this.parse(fields.payload) as JsonObject,
        telemetry: fields.telemetry === '{}' ? {} : (this.parse(fields.telemetry) as JsonObject),
        content_hash: contentHash,
      };
      this.builder.add(event);
      if (this.builder.settling && !this.settleScheduled) {
        this.settleScheduled = true;
        queueMicrotask(() => {
          this.settleScheduled = false;
          this.builder.settle();
        });
      }
    } catch {
      // A span that cannot be built is one dropped, never a failed event.
      this.dropped++;
    }
  }

  /** Ends the root span and waits (at most the close timeout) for the queue to drain. */
  async close(): Promise<OtelExportStats> {
    this.builder.finish();
    if (this.timer !== null) clearTimeout(this.timer);
    const deadline = setTimeout(() => this.abort.abort(), this.closeTimeoutMs);
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
    return { endpoint: this.target.endpoint, protocol: this.target.protocol, exported: this.exported, dropped: this.dropped };
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
