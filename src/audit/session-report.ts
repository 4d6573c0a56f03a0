/**
 * A session's report as the CLI shows it: the detector re-run on the trail when the trail is
 * there (the trail is the record; a stored summary is only a copy), the stored summary otherwise,
 * and what the two disagree on. Summaries written by Python Aura are read through the same
 * vocabulary: a finding's `code` becomes its `kind`, and Aura's own grade moves to
 * `aura_severity` (SuperAuditor v1.1 §3), never overwriting a key that is there.
 */

import { AuraError, NotFoundError } from '../errors.js';
import { buildSummary, type SessionSummary } from '../export/summary.js';
import { readTextFile } from '../store/json-file.js';
import { readTrailLines, type TrailRead } from '../spine/trail-reader.js';
import type { SessionFiles } from '../store/session-files.js';
import { materialOf, type SessionMaterial } from '../store/source.js';
import type { Finding } from './detector.js';
import { severityOf } from './kinds.js';

/** The summary format this aura writes (`summary_version`); Python Aura's summaries have none. */
export const SUMMARY_VERSION = 1;

/** What the CLI shows for a session. */
export interface SessionReport {
  /** The summary the report comes from: rebuilt from the trail, or the stored one. */
  readonly summary: Readonly<Record<string, unknown>> & { readonly audit_report: Readonly<Record<string, unknown>> & { readonly findings: readonly Finding[] } };
  readonly source: 'trail' | 'summary';
  /** Who wrote the stored summary, if there is one. */
  readonly stored_by: 'aura' | 'python-aura' | null;
  /** What the stored summary says that the trail does not. */
  readonly disagreements: readonly string[];
}

/**
 * Builds the report of one session, from `trail` when the caller has read it already (the
 * report page reads it once, against its seal and keys, for the timeline too).
 * @throws NotFoundError when there is neither a trail nor a summary; AuraError `READ_FAILED` for
 *   a summary that is not JSON, of a newer format, or whose findings cannot be moved to the vocabulary
 */
export function sessionReport(session: SessionFiles | SessionMaterial, exportPii = false, trail?: TrailRead): SessionReport {
  const material = materialOf(session);
  if (material.summaryText === null && material.lines === null) throw new NotFoundError('summary', material.summaryName);
  const stored = material.summaryText === null ? null : parseSummary(material.summaryText(), material.summaryName);
  if (material.lines === null) {
    return { summary: stored as SessionReport['summary'], source: 'summary', stored_by: writerOf(stored), disagreements: [] };
  }
  const read = trail ?? readTrailLines(material.lines());
  const fresh = buildSummary(material.sessionId, read, material.trailName, { exportPii, seal: () => (stored?.['seal'] as SessionSummary['seal'] | undefined) ?? null });
  const disagreements = stored === null ? [] : disagreementsOf(stored, fresh);
  const findings: Finding[] = [...fresh.audit_report.findings];
  if (disagreements.length > 0) {
    findings.unshift({ kind: 'SUMMARY_MISMATCH', severity: severityOf('SUMMARY_MISMATCH'), message: `the stored summary disagrees with the trail: ${disagreements.join('; ')}`, event_ids: [], session_id: material.sessionId });
  }
  const verdict = disagreements.length > 0 ? 'fail' : fresh.audit_report.verdict;
  return {
    summary: { ...fresh, audit_report: { ...fresh.audit_report, verdict, findings } },
    source: 'trail',
    stored_by: writerOf(stored),
    disagreements,
  };
}

/**
 * Reads a stored summary, Python Aura's or aura's, into aura's vocabulary.
 * @throws NotFoundError, ReadError, AuraError `READ_FAILED`
 */
export function readSummary(path: string): StoredSummary {
  return parseSummary(readTextFile(path, 'summary'), path);
}

/** A stored summary in aura's vocabulary. */
export type StoredSummary = Record<string, unknown> & { audit_report: Record<string, unknown> & { findings: Finding[] } };

/**
 * Reads a stored summary's text (named `path` in messages), Python Aura's or aura's, into aura's vocabulary.
 * @throws AuraError `READ_FAILED`
 */
export function parseSummary(text: string, path: string): StoredSummary {
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (error) {
    throw new AuraError('READ_FAILED', `${path} is not a JSON summary: ${(error as Error).message}`, { data: { path } });
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new AuraError('READ_FAILED', `${path} is not a summary: expected a JSON object`, { data: { path } });
  const summary = value as Record<string, unknown>;
  const version = summary['summary_version'];
  if (version !== undefined && (typeof version !== 'number' || version > SUMMARY_VERSION)) {
    throw new AuraError('READ_FAILED', `${path} has summary_version ${JSON.stringify(version)}: it was written by a newer aura (this one reads up to ${SUMMARY_VERSION})`, { data: { path } });
  }
  const report = (summary['audit_report'] ?? {}) as Record<string, unknown>;
  const findings = Array.isArray(report['findings']) ? report['findings'].map((finding, i) => toVocabulary(finding, path, i)) : [];
  return { ...summary, audit_report: { ...report, findings } };
}

/** One stored finding in aura's vocabulary. */
function toVocabulary(value: unknown, path: string, index: number): Finding {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new AuraError('READ_FAILED', `${path}: finding ${index} is not an object`, { data: { path } });
  const finding = { ...(value as Record<string, unknown>) };
  const kind = typeof finding['kind'] === 'string' ? finding['kind'] : typeof finding['code'] === 'string' ? finding['code'] : 'UNKNOWN';
  const ownSeverity = finding['severity'];
  if (ownSeverity !== undefined && ownSeverity !== severityOf(kind)) {
    // A detector's own grade is kept, under another name, and never over a key already there.
    if ('aura_severity' in finding) throw new AuraError('READ_FAILED', `${path}: finding ${index} has both a severity and an aura_severity: refusing to overwrite either`, { data: { path } });
    finding['aura_severity'] = ownSeverity;
  }
  delete finding['code'];
  const eventIds = Array.isArray(finding['event_ids']) ? (finding['event_ids'] as string[]) : typeof finding['event_id'] === 'string' ? [finding['event_id']] : [];
  const message = typeof finding['message'] === 'string' ? finding['message'] : kind;
  return { ...finding, kind, severity: severityOf(kind), message, event_ids: eventIds };
}

function writerOf(summary: Record<string, unknown> | null): SessionReport['stored_by'] {
  if (summary === null) return null;
  return summary['generator'] === undefined ? 'python-aura' : 'aura';
}

/** The facts a summary and its trail must agree on. */
function disagreementsOf(stored: Record<string, unknown>, fresh: SessionSummary): string[] {
  const report = stored['audit_report'] as Record<string, unknown>;
  const out: string[] = [];
  if (typeof stored['event_count'] === 'number' && stored['event_count'] !== fresh.event_count) out.push(`event_count ${stored['event_count']} vs ${fresh.event_count} in the trail`);
  if (typeof report['hash_chain_valid'] === 'boolean' && report['hash_chain_valid'] !== fresh.audit_report.hash_chain_valid) {
    out.push(`hash_chain_valid ${String(report['hash_chain_valid'])} vs ${String(fresh.audit_report.hash_chain_valid)} now`);
  }
  const chain = stored['chain'] as { head_hash?: unknown } | undefined;
  if (chain !== undefined && chain.head_hash !== fresh.chain.head_hash) out.push(`sealed head ${String(chain.head_hash).slice(0, 12)}… vs ${String(fresh.chain.head_hash).slice(0, 12)}… now`);
  // Verdicts are compared only between summaries aura wrote: Python Aura grades by other rules.
  if (stored['generator'] !== undefined && report['verdict'] !== fresh.audit_report.verdict) out.push(`verdict ${String(report['verdict'])} vs ${fresh.audit_report.verdict} now`);
  return out;
}
