/**
 * One streaming pass over a trail's lines that gives what a closed session's evidence is built
 * from: the chain verified, the digest its summary reads, and its spans written to their staging
 * file as they end. At close over the whole trail (session-export.ts), or ahead of close, on
 * another thread, while the trail grows (close-ahead-worker.ts).
 */

import { TrailDigester, type TrailRead } from '../spine/trail-reader.js';
import type { TrailLine } from '../spine/trail-lines.js';
import type { StagedFile } from './commit.js';
import { spanLineOf, spanSourceOf } from './otel.js';
import { SpanBuilder, type Span, type SpanOptions } from './spans.js';
import { summaryKeeps } from './summary.js';

/** A trail read in one pass, and how many spans it gave. */
export interface EvidenceRead {
  readonly trail: TrailRead;
  readonly spanCount: number;
}

/** The pass over one trail. */
export class EvidencePass {
  private readonly digester: TrailDigester;
  private readonly builder: SpanBuilder | null;
  private spanLine: ((span: Span) => string) | null = null;
  private spans = 0;

  /**
   * @param otel where the spans' lines go, or null
   * @param buildSpans build the spans even with nowhere to write them (live export counts them)
   */
  constructor(otel: StagedFile | null, buildSpans: boolean, options: SpanOptions = {}) {
    this.builder = !buildSpans && otel === null
      ? null
      : new SpanBuilder((span) => {
          this.spans++;
          if (otel !== null && this.spanLine !== null) otel.write(this.spanLine(span));
        }, options);
    this.digester = new TrailDigester(summaryKeeps(), (event) => {
      this.spanLine ??= spanLineOf(spanSourceOf(event.session_id, event.aura_id));
      this.builder?.add(event);
    });
  }

  /** The text of each line the summary keeps (see {@link TrailDigester.keptLines}). */
  get keptLines(): readonly string[] {
    return this.digester.keptLines;
  }

  add(line: TrailLine): void {
    this.digester.add(line);
  }

  /** Ends the spans still open (the session's root) and returns the trail as read. */
  finish(): EvidenceRead {
    this.builder?.finish();
    return { trail: this.digester.result(), spanCount: this.spans };
  }
}
