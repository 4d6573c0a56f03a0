/**
 * The sessions folder at a glance: one row a session, with its status from the one status module
 * (store/session-status.ts) and its verdict and findings from the detector re-run on its trail.
 * Nothing is taken from a stored summary that the trail can say: a summary is a copy anyone with
 * write access can forge. A session with no trail shows what its summary says, marked as such.
 */

import { objectOf, stringOf } from '../spine/json-shape.js';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { sessionReport } from '../audit/session-report.js';
import type { KeyRing } from '../spine/signing.js';
import { readJsonFile } from './json-file.js';
import { listSessionIds, sessionFiles } from './session-files.js';
import { materialStatus, sealLogView, type SessionStatusName, type SignatureFacet, type StatusReason } from './session-status.js';
import { folderMaterial } from './material.js';

/** Where a session stands. */
export type SessionState =
  /** Closed with a summary. */
  | 'closed'
  /** A live process is writing it. */
  | 'open'
  /** Its writer died before closing it. */
  | 'abandoned'
  /** No summary and no writer: closed without export, or its export failed. */
  | 'unexported';

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

/** Where to list, and the keys to check signatures against. */
export interface ListOptions {
  /** The folder's seal log (default: `seals.jsonl` beside the sessions folder). */
  readonly sealLog?: string;
  readonly keys?: KeyRing | null;
}

/** Lists the sessions in the folder, oldest first. */
export function listSessions(sessionsDir: string, options: ListOptions = {}): SessionListing[] {
  const log = sealLogView(options.sealLog ?? path.join(path.dirname(sessionsDir), 'seals.jsonl'));
  const rows = listSessionIds(sessionsDir).map((id) => listingOf(sessionsDir, id, log, options.keys ?? null));
  return rows.sort((a, b) => (a.opened_at ?? '').localeCompare(b.opened_at ?? '') || a.session_id.localeCompare(b.session_id));
}

function listingOf(sessionsDir: string, sessionId: string, log: ReturnType<typeof sealLogView>, keys: KeyRing | null): SessionListing {
  const files = sessionFiles(sessionsDir, sessionId);
  const material = folderMaterial(files, log);
  const status = materialStatus(material, keys);
  const writer = material.writer ?? 'none';
  const state: SessionState = writer === 'alive' ? 'open' : fs.existsSync(files.summary) ? 'closed' : writer === 'gone' ? 'abandoned' : 'unexported';
  const first = status.trail?.events[0];
  const base = { session_id: sessionId, opened_at: first?.timestamp ?? null, state, status: status.status, signatures: status.signatures, reason: status.reason, hash_chain_valid: status.chain?.hash_chain_valid ?? null };
  if (status.trail === null) {
    const summary = fs.existsSync(files.summary) ? summaryFacts(files.summary) : null;
    return { ...base, agent_ref: summary?.agent_ref ?? null, events: summary?.events ?? 0, verdict: null, findings: null };
  }
  const firstRef = stringOf(objectOf(first?.payload)['agent_ref']) ?? stringOf(objectOf(first?.agent_ids)['agent_ref']);
  try {
    const report = sessionReport(material, false, status);
    const counts = { critical: 0, warn: 0, info: 0 };
    for (const finding of report.summary.audit_report.findings) counts[finding.severity]++;
    const verdict = report.summary.audit_report['verdict'];
    // A session still being written has no verdict yet.
    const judged = state !== 'open' && typeof verdict === 'string' ? verdict : null;
    return { ...base, agent_ref: stringOf(report.summary['agent_ref']) ?? firstRef, events: status.chain?.events ?? 0, verdict: judged, findings: counts };
  } catch {
    // A summary the reader refuses (a newer format, not JSON): the status says what the trail says.
    return { ...base, agent_ref: firstRef, events: status.chain?.events ?? 0, verdict: null, findings: null };
  }
}

function summaryFacts(path: string): { agent_ref: string | null; events: number; verdict: string | null; hash_chain_valid: boolean | null } | null {
  try {
    const summary = objectOf(readJsonFile(path, 'summary').value);
    const report = objectOf(summary['audit_report']);
    return {
      agent_ref: stringOf(summary['agent_ref']),
      events: typeof summary['event_count'] === 'number' ? summary['event_count'] : 0,
      verdict: stringOf(report['verdict']),
      hash_chain_valid: typeof report['hash_chain_valid'] === 'boolean' ? report['hash_chain_valid'] : null,
    };
  } catch {
    // A summary that cannot be read lists as if there were none; `aura export --rebuild` mends it.
    return null;
  }
}

