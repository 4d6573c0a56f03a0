/**
 * The rows of the sessions list page: the listing of `aura sessions list`, with each session's
 * findings counted by severity (from its summary, read through the same vocabulary as
 * `report show`) and its chain re-checked against its seal, since the list is where a damaged
 * trail should catch the eye.
 */

import * as fs from 'node:fs';
import { readSummary } from '../audit/session-report.js';
import type { KeyRing } from '../spine/signing.js';
import { verifyTrail, type ChainSeal } from '../spine/verify.js';
import { sessionFiles } from '../store/session-files.js';
import { listSessions } from '../store/session-list.js';
import type { SessionOverview } from '../store/source.js';
import { summarySeal } from '../store/summary-seal.js';

/** One row of the sessions list page. */
export type SessionsListRow = SessionOverview;

/** One row a session of the folder, newest first. */
export function sessionsListRows(sessionsDir: string, keys: KeyRing | null): SessionsListRow[] {
  return listSessions(sessionsDir)
    .reverse()
    .map((listing) => {
      const files = sessionFiles(sessionsDir, listing.session_id);
      return {
        session_id: listing.session_id,
        agent_ref: listing.agent_ref,
        opened_at: listing.opened_at,
        events: listing.events,
        verdict: listing.verdict,
        findings: findingCounts(files.summary),
        chain: chainOf(files.trail, files.summary, keys, listing.state),
        state: listing.state,
      };
    });
}

function findingCounts(summaryPath: string): SessionsListRow['findings'] {
  if (!fs.existsSync(summaryPath)) return null;
  try {
    const counts = { critical: 0, warn: 0, info: 0 };
    for (const finding of readSummary(summaryPath).audit_report.findings) counts[finding.severity]++;
    return counts;
  } catch {
    // An unreadable summary shows no counts; its report page says why.
    return null;
  }
}

function chainOf(trail: string, summary: string, keys: KeyRing | null, state: string): string {
  let seal: ChainSeal | undefined;
  try {
    seal = state === 'closed' ? summarySeal(summary) : undefined;
  } catch {
    seal = undefined;
  }
  try {
    const report = verifyTrail(trail, seal, keys === null ? {} : { keys });
    if (report.reason !== undefined) return `${report.hash_chain_valid ? 'damaged' : 'broken'}: ${report.reason}`;
    return report.complete ? 'valid' : 'valid, incomplete';
  } catch {
    return 'unreadable';
  }
}
