/**
 * A session's evidence, built from its trail on disk: the summary and the spans, committed
 * together or not at all. Closing a session and `aura export` both come through here.
 */

import { readTrail, type TrailRead } from '../spine/trail-reader.js';
import type { SessionFiles } from '../store/session-files.js';
import { commitFiles } from './commit.js';
import type { OtelExportStats } from './live-queue.js';
import { spanLines } from './otel.js';
import { buildSpans, type Span, type SpanOptions } from './spans.js';
import { buildSummary, summaryText, type SessionSummary, type SummaryOptions } from './summary.js';

/** What exporting a session produced. */
export interface SessionExport {
  readonly summary: SessionSummary;
  readonly trail: TrailRead;
  /** The paths written, when written. */
  readonly written: { readonly summary: string; readonly otel: string } | null;
}

/**
 * Reads the session's trail and builds its summary and spans; with `write`, commits both files.
 * @throws NotFoundError (no trail), ReadError, ExportError (nothing was committed)
 */
export function exportSession(
  files: SessionFiles,
  write: boolean,
  options: Omit<SummaryOptions, 'otel'> & {
    readonly beforeCommit?: (summary: SessionSummary) => void;
    readonly spans?: SpanOptions;
    readonly live?: OtelExportStats;
    /** The trail, when the caller has read it already. */
    readonly trail?: TrailRead;
  } = {},
): SessionExport {
  const trail = options.trail ?? readTrail(files.trail);
  const spans = write || options.live !== undefined ? buildSpans(trail.events, options.spans) : [];
  // Whatever the collector did not take is dropped: the file has every span, so the count is exact.
  const otel = options.live === undefined ? undefined : { ...options.live, dropped: Math.max(0, spans.length - options.live.exported) };
  const summary = buildSummary(files.sessionId, trail, files.trail, { ...options, ...(otel === undefined ? {} : { otel }) });
  options.beforeCommit?.(summary);
  if (!write) return { summary, trail, written: null };
  commitFiles(files.sessionId, [
    { path: files.summary, content: summaryText(summary) },
    { path: files.otel, content: spanLines(trail.events, spans) },
  ]);
  return { summary, trail, written: { summary: files.summary, otel: files.otel } };
}

/**
 * Writes only the spans of a session (`aura export-otel`).
 * @returns the trail read and the spans written.
 */
export function exportSpans(files: SessionFiles, options: SpanOptions = {}): { trail: TrailRead; spans: Span[] } {
  const trail = readTrail(files.trail);
  const spans = buildSpans(trail.events, options);
  commitFiles(files.sessionId, [{ path: files.otel, content: spanLines(trail.events, spans) }]);
  return { trail, spans };
}
