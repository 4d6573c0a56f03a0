/**
 * A session's evidence, built from its trail on disk: the summary and the spans, committed
 * together or not at all. Closing a session and `aura export` both come through here.
 */

import { trailLines } from '../spine/trail-lines.js';
import { readTrail, type TrailRead } from '../spine/trail-reader.js';
import type { SessionFiles } from '../store/session-files.js';
import { commitFiles, DurableStagedFile, StagedFile } from './commit.js';
import { EvidencePass, type EvidenceRead } from './evidence-pass.js';
import type { OtelExportStats } from './live-queue.js';
import { spanLines } from './otel.js';
import { buildSpans, type Span, type SpanOptions } from './spans.js';
import { buildSummary, summaryText, type SessionSummary, type SummaryOptions } from './summary.js';

/** What exporting a session produced. */
export interface SessionExport {
  readonly summary: SessionSummary;
  /** The trail as verified: its chain, and a digest of its events (see `TrailDigester`). */
  readonly trail: TrailRead;
  /** The paths written, when written. */
  readonly written: { readonly summary: string; readonly otel: string } | null;
}

/**
 * Reads the session's trail in one streaming pass, verifying it and building its spans on the
 * way, then its summary from a digest of the events; with `write`, commits both files. Memory
 * stays flat however long the trail: spans are staged to disk as they end.
 * @throws NotFoundError (no trail), ReadError, ExportError (nothing was committed)
 */
export function exportSession(
  files: SessionFiles,
  write: boolean,
  options: Omit<SummaryOptions, 'otel'> & {
    readonly beforeCommit?: (summary: SessionSummary) => void;
    readonly spans?: SpanOptions;
    readonly live?: OtelExportStats;
    /** The pass already made ahead of close (close-ahead.ts), its spans staged when `write`. */
    readonly ahead?: EvidenceRead;
  } = {},
): SessionExport {
  const otel = write ? (options.ahead === undefined ? new StagedFile(files.sessionId, files.otel) : new DurableStagedFile(files.otel)) : null;
  try {
    let read = options.ahead;
    if (read === undefined) {
      const pass = new EvidencePass(otel instanceof StagedFile ? otel : null, options.live !== undefined, options.spans);
      for (const line of trailLines(files.trail)) pass.add(line);
      read = pass.finish();
    }
    const { trail, spanCount } = read;
    // Whatever the collector did not take is dropped: the file has every span, so the count is exact.
    const live = options.live === undefined ? undefined : { ...options.live, dropped: Math.max(0, spanCount - options.live.exported) };
    const summary = buildSummary(files.sessionId, trail, files.trail, { ...options, ...(live === undefined ? {} : { otel: live }) });
    options.beforeCommit?.(summary);
    if (otel === null) return { summary, trail, written: null };
    commitFiles(files.sessionId, [{ path: files.summary, content: summaryText(summary) }, otel]);
    return { summary, trail, written: { summary: files.summary, otel: files.otel } };
  } catch (error) {
    otel?.discard();
    throw error;
  }
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
