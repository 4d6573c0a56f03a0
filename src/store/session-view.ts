/**
 * What one session of a sessions folder shows to the readers of the whole folder: its row in
 * `sessions list` (and the list page, and `list_sessions`) and its findings in the findings
 * channel, both from one status (store/session-status.ts) and one detector pass on the trail as
 * it is now. Nothing is taken from a stored summary that the trail can say: a summary is a copy
 * anyone with write access can forge. A session with no trail shows what its summary says, marked
 * as such. Findings name the session's files by their names in the folder: the channel's callers
 * include aura mcp's tenants, who may not learn where the server keeps it.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { storeCrash, type Finding } from '../audit/detector.js';
import { sessionReport, statusFindings } from '../audit/session-report.js';
import { sessionKeyOf } from '../session/ids.js';
import { objectOf, stringOf } from '../spine/json-shape.js';
import { trailWriter } from '../spine/writer.js';
import type { KeyRing } from '../spine/signing.js';
import { describeNaming } from '../errors.js';
import { readJsonFile } from './json-file.js';
import { channelMaterial } from './material.js';
import type { SealLogPlace, SealLogView } from './seal-log.js';
import { refusalOf, type SessionFiles } from './session-files.js';
import { anchorVerdict, materialStatus, sessionStatus, type SessionStatusName, type SignatureFacet, type StatusReason } from './session-status.js';

/** Where a session stands. */
export type SessionState =
  /** Closed with a summary. */
  | 'closed'
  /** A live process is writing it. */
  | 'open'
  /** Its writer died before closing it. */
  | 'abandoned'
  /** No summary and no writer: closed without export, or its export failed. */
  | 'unexported'
  /** The seal log seals it, but its trail is gone. */
  | 'deleted';

/** Findings by severity. */
export interface FindingCounts {
  readonly critical: number;
  readonly warn: number;
  readonly info: number;
}

/** One row of the listing. */
export interface SessionListing {
  readonly session_id: string;
  readonly agent_ref: string | null;
  readonly opened_at: string | null;
  readonly events: number;
  /** The detector's verdict on the trail as it is now (null without a trail). */
  readonly verdict: string | null;
  readonly hash_chain_valid: boolean | null;
  readonly state: SessionState;
  /** The session's status (store/session-status.ts), its signature facet, and why. */
  readonly status: SessionStatusName;
  readonly signatures: SignatureFacet;
  readonly reason: StatusReason | null;
  /** The detector's findings on the trail as it is now, by severity (null without a trail). */
  readonly findings: FindingCounts | null;
}

/** One session as the folder's readers show it. */
export interface SessionView {
  /** Its row, or null when it has no trail that may be read (the list shows sessions by their trails). */
  readonly row: SessionListing | null;
  /** Its findings, each naming the session: the detector's, and the store-level ones of DESIGN §6. */
  readonly findings: readonly Finding[];
  /** The session key it declared, if any (SuperAuditor §7). */
  readonly sessionKey: string | null;
}

/** The view of one session of a folder, from its files now, placed in its folder's seal log. */
export function sessionView(files: SessionFiles, log: SealLogView | null, keys: KeyRing | null): SessionView {
  const id = files.sessionId;
  try {
    const refusal = refusalOf(files.trail);
    if (refusal !== null) return { row: null, findings: [crashed(id, `cannot read ${path.basename(files.trail)}: ${refusal}`)], sessionKey: null };
    if (!fs.existsSync(files.trail)) {
      const summary = fs.existsSync(files.summary) ? files.summary : null;
      const artifact = path.basename(summary ?? files.otel);
      const orphan: Finding = { kind: 'ORPHAN_ARTIFACT', severity: 'warn', message: `${artifact} has no trail beside it`, event_ids: [], path: artifact, session_id: id };
      // A session the seal log seals lost its trail, whatever was left beside it: as verify store says.
      const place = log?.places.get(id);
      if (place === undefined) return { row: null, findings: [orphan], sessionKey: null };
      const deleted = deletedSession(id, place, summary, log?.anchor?.get(id));
      return { row: deleted.row, findings: [...deleted.findings, orphan], sessionKey: null };
    }
    return viewOf(files, log, keys);
  } catch (error) {
    return { row: null, findings: [crashed(id, describeNaming(error, path.basename))], sessionKey: null };
  }
}

function viewOf(files: SessionFiles, log: SealLogView | null, keys: KeyRing | null): SessionView {
  const id = files.sessionId;
  const material = channelMaterial(files, log);
  const status = materialStatus(material, keys);
  const writer = material.writer ?? 'none';
  const hasSummary = fs.existsSync(files.summary);
  const state: SessionState = writer === 'alive' ? 'open' : hasSummary ? 'closed' : writer === 'gone' ? 'abandoned' : 'unexported';
  const first = status.trail?.events[0];
  const base = { session_id: id, opened_at: first?.timestamp ?? null, state, status: status.status, signatures: status.signatures, reason: status.reason, hash_chain_valid: status.chain?.hash_chain_valid ?? null };
  if (status.trail === null) {
    const summary = hasSummary ? summaryFacts(files.summary) : null;
    const row = { ...base, agent_ref: summary?.agent_ref ?? null, events: summary?.events ?? 0, verdict: null, findings: null };
    return { row, findings: [crashed(id, status.error === undefined ? (status.message ?? status.status) : describeNaming(status.error, path.basename))], sessionKey: null };
  }
  const firstRef = stringOf(objectOf(first?.payload)['agent_ref']) ?? stringOf(objectOf(first?.agent_ids)['agent_ref']);
  let report: ReturnType<typeof sessionReport>;
  try {
    report = sessionReport(material, false, status);
  } catch (error) {
    // A summary the reader refuses (a newer format, not JSON): the status says what the trail says.
    const row = { ...base, agent_ref: firstRef, events: status.chain?.events ?? 0, verdict: null, findings: null };
    return { row, findings: [crashed(id, describeNaming(error, path.basename))], sessionKey: null };
  }
  const audit = report.summary.audit_report;
  const counts = { critical: 0, warn: 0, info: 0 };
  for (const finding of audit.findings) counts[finding.severity]++;
  const verdict = audit['verdict'];
  // A session still being written has no verdict yet.
  const judged = state !== 'open' && typeof verdict === 'string' ? verdict : null;
  const row = { ...base, agent_ref: stringOf(report.summary['agent_ref']) ?? firstRef, events: status.chain?.events ?? 0, verdict: judged, findings: counts };
  return { row, findings: channelFindings(audit.findings, audit['chain_complete'] === true, writer, writer === 'gone' ? (trailWriter(files.trail)?.pid ?? null) : null, hasSummary, id), sessionKey: sessionKeyOf(report.summary['session_key']) };
}

/**
 * The findings the channel delivers for a session: the detector's, with the store-level ones on
 * how it was left. A session its writer still holds is simply open; one whose writer is gone was
 * abandoned; one with neither is incomplete.
 */
function channelFindings(detected: readonly Finding[], complete: boolean, writer: 'alive' | 'gone' | 'none', pid: number | null, hasSummary: boolean, id: string): Finding[] {
  const findings: Finding[] = detected.filter((f) => f.kind !== 'TRAIL_INCOMPLETE');
  if (!complete && writer === 'gone') {
    findings.push({ kind: 'SESSION_ABANDONED', severity: 'warn', message: `its writer (pid ${String(pid)}) is gone and the session was never closed`, event_ids: [], pid });
  } else if (!complete && writer === 'none') {
    findings.push(...detected.filter((f) => f.kind === 'TRAIL_INCOMPLETE'));
  }
  if (complete && writer !== 'alive' && !hasSummary) findings.push({ kind: 'SUMMARY_MISSING', severity: 'warn', message: 'the trail is closed but has no summary', event_ids: [] });
  return findings.map((f) => ({ ...f, session_id: id }));
}

/**
 * A session the seal log seals whose trail is gone, as the lists and the findings show it: its
 * row (`missing_trail`, what its seal and any summary left say of it, or `damaged: seal_mismatch`
 * when the log's anchor copy disagrees on its seal, as verify store says) and its findings.
 */
export function deletedSession(id: string, place: SealLogPlace, summary: string | null, anchorDisagreement?: string): { readonly row: SessionListing; readonly findings: readonly Finding[] } {
  const gone = sessionStatus({ sessionId: id, lines: null, summaryText: null, sealPlace: place, keys: null, writer: 'none' });
  const status = anchorVerdict(gone, anchorDisagreement);
  const facts = summary === null ? null : summaryFacts(summary);
  const row: SessionListing = {
    session_id: id,
    agent_ref: facts?.agent_ref ?? null,
    opened_at: null,
    events: place.entry.seal.events,
    verdict: null,
    hash_chain_valid: null,
    state: 'deleted',
    status: status.status,
    signatures: status.signatures,
    reason: status.reason,
    findings: null,
  };
  return { row, findings: status === gone ? statusFindings(gone) : [...statusFindings(gone), ...statusFindings(status)] };
}

/** One unreadable session must not hide the others' findings (SuperAuditor v1.1 §5.4). */
function crashed(id: string, why: string): Finding {
  return storeCrash(`reading ${id} failed: ${why}`, { session_id: id });
}

function summaryFacts(path: string): { agent_ref: string | null; events: number } | null {
  try {
    const summary = objectOf(readJsonFile(path, 'summary').value);
    return { agent_ref: stringOf(summary['agent_ref']), events: typeof summary['event_count'] === 'number' ? summary['event_count'] : 0 };
  } catch {
    // A summary that cannot be read lists as if there were none; `aura export --rebuild` mends it.
    return null;
  }
}
