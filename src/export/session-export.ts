/**
 * A session's evidence, built from its trail on disk: the summary and the spans, committed
 * together or not at all. Closing a session and `aura export` both come through here.
 */

import { readTrail, type TrailRead } from '../spine/trail-reader.js';
import type { SessionFiles } from '../store/session-files.js';
import { commitFiles } from './commit.js';
import { otelLines } from './otel.js';
import type { SpanOptions } from './spans.js';
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
  options: SummaryOptions & { readonly beforeCommit?: (summary: SessionSummary) => void; readonly spans?: SpanOptions } = {},
): SessionExport {
  const trail = readTrail(files.trail);
  const summary = buildSummary(files.sessionId, trail, files.trail, options);
  options.beforeCommit?.(summary);
  if (!write) return { summary, trail, written: null };
  commitFiles(files.sessionId, [
    { path: files.summary, content: summaryText(summary) },
    { path: files.otel, content: otelLines(trail.events, options.spans) },
  ]);
  return { summary, trail, written: { summary: files.summary, otel: files.otel } };
}

/**
 * Writes only the spans of a session (`aura export-otel`).
 * @returns the events the spans were built from.
 */
export function exportSpans(files: SessionFiles, options: SpanOptions = {}): TrailRead {
  const trail = readTrail(files.trail);
  commitFiles(files.sessionId, [{ path: files.otel, content: otelLines(trail.events, options) }]);
  return trail;
}
