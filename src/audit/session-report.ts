/**
 * A session's report as the CLI shows it: the detector re-run on the trail when the trail is
 * there (the trail is the record; a stored summary is only a copy), the stored summary otherwise,
 * and what the two disagree on. Summaries written by Python Aura are read through the same
 * vocabulary: a finding's `code` becomes its `kind`, and Aura's own grade moves to
 * `aura_severity` (SuperAuditor v1.1 §3), never overwriting a key that is there.
 */

import { AuraError, NotFoundError, ReadError } from '../errors.js';
import { buildSummary, type SessionSummary } from '../export/summary.js';
import { objectOf, stringOf } from '../spine/json-shape.js';
import { readTextFile } from '../store/json-file.js';
import { readTrailLines, type TrailRead } from '../spine/trail-reader.js';
import type { SessionFiles } from '../store/session-files.js';
import { materialStatus, type SessionStatus, type SessionStatusName, type SessionStatusRead } from '../store/session-status.js';
import type { KeyRing } from '../spine/signing.js';
import { materialOf, type SessionMaterial } from '../store/material.js';
import type { Finding } from './detector.js';
import { severityOf } from './kinds.js';
import { parseJsonStrict } from '../spine/fast-record.js';
import { verdictOf } from './report.js';

/** The passing statuses of a closed session: those whose summary must say what the trail says. */
const CLOSED_PASSING: ReadonlySet<SessionStatusName> = new Set(['verified', 'intact']);

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
 * Builds the report of one session, from its status when the caller has read it already (read
 * with its events: the trail checked against its seal and keys, once for the status, the
 * findings and the timeline). Without one, the trail is read alone.
 * @throws NotFoundError when there is neither a trail nor a summary; AuraError `READ_FAILED` for
 *   a summary that is not JSON, of a newer format, or whose findings cannot be moved to the vocabulary
 */
export function sessionReport(session: SessionFiles | SessionMaterial, exportPii = false, status?: SessionStatusRead): SessionReport {
  const material = materialOf(session);
  if (material.summaryText === null && material.lines === null) throw new NotFoundError('summary', material.summaryName);
  let stored: StoredSummary | null = null;
  let unreadable: string | null = null;
  try {
    stored = material.summaryText === null ? null : parseSummary(material.summaryText(), material.summaryName);
  } catch (error) {
    // With the trail, the report is the trail's, and a summary that is not one (nulled, not JSON)
    // is a disagreement it names: it hides none of the trail's findings. One that cannot be read
    // is named as it is everywhere, and one of a newer aura is read by that aura.
    if (material.lines === null || !(error instanceof AuraError) || error instanceof ReadError || error.code !== 'READ_FAILED' || objectOf(error.data)['newer_version'] !== undefined) throw error;
    unreadable = error.message;
  }
  const storedBy = writerOf(stored);
  if (material.lines === null) {
    // Without its trail, the report is the summary's own: one without a verdict has none to give.
    if (typeof stored?.audit_report['verdict'] !== 'string') throw new AuraError('READ_FAILED', `${material.summaryName} is not a summary a report can be read from: it has no audit_report verdict, and there is no trail to build one from`, { data: { path: material.summaryName } });
    return { summary: stored as SessionReport['summary'], source: 'summary', stored_by: storedBy, disagreements: [] };
  }
  const read: TrailRead = status?.trail ?? readTrailLines(material.lines());
  const fresh = buildSummary(material.sessionId, read, material.trailName, {
    exportPii,
    seal: () => (stored?.['seal'] as SessionSummary['seal'] | undefined) ?? null,
    declaredSteps: summaryDeclaredSteps(stored),
  });
  const differences = unreadable !== null ? [{ text: `it cannot be read (${unreadable})`, mismatch: true }] : stored === null ? [] : differencesOf(stored, fresh);
  // A summary beside a trail its writer still holds was written while it ran (`aura export`): a
  // snapshot the trail has moved past, whose differences are told but are no finding.
  const mismatches = status?.status === 'open' ? [] : differences.filter((d) => d.mismatch).map((d) => d.text);
  const findings: Finding[] = [...(status === undefined ? [] : statusFindings(status)), ...fresh.audit_report.findings];
  if (mismatches.length > 0) {
    findings.unshift({ kind: 'SUMMARY_MISMATCH', severity: severityOf('SUMMARY_MISMATCH'), message: `the stored summary disagrees with the trail: ${mismatches.join('; ')}`, event_ids: [], session_id: material.sessionId });
  }
  const verdict = mismatches.length > 0 ? 'fail' : verdictOf(findings, fresh.conformance.passed);
  return {
    summary: { ...fresh, audit_report: { ...fresh.audit_report, verdict, findings } },
    source: 'trail',
    stored_by: storedBy,
    disagreements: differences.map((d) => d.text),
  };
}

/**
 * How a session's stored summary disagrees with its trail, in the words of its `SUMMARY_MISMATCH`
 * finding, or null when it agrees (or there is no summary, or no trail, to compare): what `verify
 * store`, `verify chain` and `verify_session` add to a status, since a summary is a file anyone
 * with write access can edit (a verdict turned to pass, findings taken out) without touching the
 * chain. A summary that cannot be read here (of a newer aura, or gone since) disagrees too: it
 * cannot be vouched for. Only a closed session whose status passes is compared: a failing status
 * already says why its summary differs, and an open session's summary (`aura export` while it
 * runs) is a snapshot its writer has moved past.
 * @param status the session's status, its trail's events kept (`collectEvents`), so the trail is read once
 */
export function summaryDisagreement(material: SessionMaterial, status: SessionStatusRead): string | null {
  if (!CLOSED_PASSING.has(status.status) || material.summaryText === null || material.lines === null) return null;
  try {
    const findings = sessionReport(material, false, status).summary.audit_report.findings;
    return findings.find((finding) => finding.kind === 'SUMMARY_MISMATCH')?.message ?? null;
  } catch (error) {
    return `the stored summary cannot be read here: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/**
 * A session's status, its trail read once against its seal and the trusted keys, and the report
 * built from that read: what every reader shows, so none can pass a session another fails.
 * @throws as sessionReport
 */
export function checkedSessionReport(session: SessionFiles | SessionMaterial, keys: KeyRing | null, exportPii = false): { readonly status: SessionStatusRead; readonly report: SessionReport } {
  const material = materialOf(session);
  const status = materialStatus(material, keys);
  return { status, report: sessionReport(material, exportPii, status.trail === null ? undefined : status) };
}

/**
 * What a session's status adds to the detector's chain findings (which the trail, read against
 * its seal, already carries): a trail gone, a missing signature or seal, and records that disagree.
 */
export function statusFindings(status: SessionStatus): Finding[] {
  const finding = (kind: string): Finding[] => [{ kind, severity: severityOf(kind), message: status.message ?? kind, event_ids: [], session_id: status.session_id }];
  // Known to the store (sealed by its log, recorded by the fleet store) with no trail left: deleted.
  if (status.reason === 'missing_trail') return finding('TRAIL_MISSING');
  if (status.reason === 'unsigned') return finding('SIGNATURE_MISSING');
  if (status.reason === 'unsealed') return finding('SEAL_MISSING');
  if (status.reason === 'seal_mismatch') return finding('SUMMARY_MISMATCH');
  // A trail whose events name another session (a copy, a link): its chain holds, its identity does not.
  if (status.reason === 'malformed_record' && status.chain?.reason !== 'malformed_record') return finding('HASH_CHAIN_BROKEN');
  // A signature problem the chain did not see: the log entry's, or records that disagree.
  if (status.reason === 'signature_invalid' && status.chain?.reason !== 'signature_invalid') return finding('SIGNATURE_INVALID');
  return [];
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
    value = parseJsonStrict(text);
  } catch (error) {
    throw new AuraError('READ_FAILED', `${path} is not a JSON summary: ${(error as Error).message}`, { data: { path } });
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new AuraError('READ_FAILED', `${path} is not a summary: expected a JSON object`, { data: { path } });
  const summary = value as Record<string, unknown>;
  const version = summary['summary_version'];
  if (version !== undefined && (typeof version !== 'number' || version > SUMMARY_VERSION)) {
    throw new AuraError('READ_FAILED', `${path} has summary_version ${JSON.stringify(version)}: it was written by a newer aura (this one reads up to ${SUMMARY_VERSION})`, { data: { path, newer_version: version } });
  }
  const report = objectOf(summary['audit_report']);
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

/** One thing a stored summary says otherwise than its trail; a mismatch when it cannot be an honest difference. */
interface Difference {
  readonly text: string;
  readonly mismatch: boolean;
}

/**
 * What a stored summary says otherwise than its trail, re-checked now. The record (events, chain,
 * sealed head) must agree whoever wrote it; the verdict and conformance are compared for every
 * writer, but only a summary aura wrote is a mismatch for differing there: Python Aura grades by
 * other rules (its sequencer check fails retries, re-runs and subflows: reference §16.5), so its
 * different judgment is named, not taken for tampering.
 */
function differencesOf(stored: Record<string, unknown>, fresh: SessionSummary): Difference[] {
  // What is on disk may have any shape: a block that is not an object says nothing.
  const report = objectOf(stored['audit_report']);
  const ours = stored['generator'] !== undefined;
  const out: Difference[] = [];
  const fact = (text: string): void => void out.push({ text, mismatch: true });
  const judgment = (text: string): void => void out.push({ text, mismatch: ours });
  if (typeof stored['event_count'] === 'number' && stored['event_count'] !== fresh.event_count) fact(`event_count ${stored['event_count']} vs ${fresh.event_count} in the trail`);
  if (typeof report['hash_chain_valid'] === 'boolean' && report['hash_chain_valid'] !== fresh.audit_report.hash_chain_valid) {
    fact(`hash_chain_valid ${String(report['hash_chain_valid'])} vs ${String(fresh.audit_report.hash_chain_valid)} now`);
  }
  const chain = stored['chain'];
  if (chain !== undefined) {
    const head = objectOf(chain)['head_hash'];
    if (head !== fresh.chain.head_hash) fact(`sealed head ${String(head).slice(0, 12)}… vs ${String(fresh.chain.head_hash).slice(0, 12)}… now`);
  }
  if (report['verdict'] !== fresh.audit_report.verdict) judgment(`verdict ${String(report['verdict'])} vs ${fresh.audit_report.verdict} now`);
  const conformance = objectOf(stored['conformance']);
  const passed = (value: boolean): string => (value ? 'passed' : 'failed');
  if (typeof conformance['passed'] === 'boolean' && conformance['passed'] !== fresh.conformance.passed) judgment(`conformance ${passed(conformance['passed'])} vs ${passed(fresh.conformance.passed)} now`);
  for (const check of Array.isArray(conformance['checks']) ? conformance['checks'].map(objectOf) : []) {
    const type = stringOf(check['type']);
    if (type === null || typeof check['passed'] !== 'boolean') continue;
    const now = fresh.conformance.checks.find((c) => c.type === type)?.passed;
    if (now !== check['passed']) judgment(`${type} check ${passed(check['passed'])} vs ${now === undefined ? 'not made' : passed(now)} now`);
  }
  return out;
}

/**
 * The declared sequencer steps a stored summary names (its sequencer check's `declared_steps`), or
 * null. Python Aura records a session's declared steps there and nowhere else; they are used only
 * when the trail does not declare its own, and the check built from them says `declared_in: summary`.
 */
export function summaryDeclaredSteps(summary: Readonly<Record<string, unknown>> | null): string[] | null {
  const checks = objectOf(summary?.['conformance'])['checks'];
  const check = Array.isArray(checks) ? checks.map(objectOf).find((c) => c['type'] === 'sequencer') : undefined;
  const steps = check?.['declared_steps'];
  return Array.isArray(steps) && steps.length > 0 && steps.every((step) => typeof step === 'string') ? (steps as string[]) : null;
}
