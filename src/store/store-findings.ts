/**
 * The findings of a sessions folder (DESIGN §6), as the findings channel delivers them.
 * Store-level findings (broken or truncated chains, summaries that disagree with their trail,
 * sessions left open by a dead writer, closed trails with no summary, torn tails, artifacts with
 * no trail, sealed sessions whose trail is gone, a broken seal log) always cover every session of the folder; session findings (what
 * the detector finds in one session) cover the session named by `session_key`, or every session.
 *
 * Results are those of the files at each call: the folder's index (store/session-index.ts) reads a
 * session again whenever anything its findings rest on changed, and every write made before a call
 * is in its answer.
 */

import type { Finding } from '../audit/detector.js';
import { severityOf, type FindingKind } from '../audit/kinds.js';
import { SessionIndex, type IndexedSession, type IndexOptions } from './session-index.js';
import { goneSessions } from './session-list.js';

/** Kinds about the store's state that are reported whatever session the caller names. */
export const STORE_KINDS: ReadonlySet<string> = new Set<FindingKind>([
  'HASH_CHAIN_BROKEN',
  'TRAIL_TRUNCATED',
  'TRAIL_MISSING',
  'SIGNATURE_INVALID',
  'TRAIL_TORN_TAIL',
  'SUMMARY_MISMATCH',
  'SESSION_ABANDONED',
  'SUMMARY_MISSING',
  'ORPHAN_ARTIFACT',
  'SEAL_LOG_BROKEN',
  'SIGNATURE_MISSING',
  'SEAL_MISSING',
  'TRAIL_INCOMPLETE',
  'CHECK_CRASHED',
]);

/** The findings of a call, and the sessions its `session_key` named. */
export interface FolderFindings {
  /** Store-level ones for every session, session ones for the sessions named (or all), each naming its `session_id`, in session then detector order. */
  readonly findings: readonly Finding[];
  /** The ids of the sessions `sessionKey` names: the session with that id, and those that declared it. */
  readonly named: readonly string[];
}

/** The findings of one sessions folder, over its index. */
export class StoreFindings {
  readonly index: SessionIndex;

  /** @param options default: signatures unchecked, changes learnt from the kernel where it tells them */
  constructor(
    readonly sessionsDir: string,
    readonly sealLog: string,
    options: IndexOptions = { keys: null, watch: true },
  ) {
    this.index = new SessionIndex(sessionsDir, sealLog, options);
  }

  /** Every finding of the folder now, with session ones for the sessions `sessionKey` names (its id, or the key it declared) or for all when it is null. */
  async findings(sessionKey: string | null): Promise<FolderFindings> {
    const sessions = await this.index.sessions();
    const log = this.index.sealLogView;
    const problem = log.read.problem;
    const findings: Finding[] = problem === null ? [] : [{ kind: 'SEAL_LOG_BROKEN', severity: 'critical', message: problem.message, event_ids: [], line: problem.line }];
    const copyProblem = log.anchorProblem ?? null;
    if (copyProblem !== null) findings.push({ kind: 'SEAL_LOG_BROKEN', severity: 'critical', message: `the seal log's anchor copy: ${copyProblem.message}`, event_ids: [], line: copyProblem.line, anchor: true });
    const named: string[] = [];
    // A session the log seals but the folder no longer holds: deleted. Its finding is the one its
    // status gives on every surface (the fleet store's too).
    for (const gone of goneSessions(sessions, log)) findings.push(...gone.findings);
    // One only the anchor copy seals, of which neither the folder nor the log has a trace: deleted
    // with its seal, as verify store finds it (or the copy is another store's).
    const held = new Set(sessions.map((session) => session.id));
    for (const [id, why] of log.anchor ?? []) {
      if (!held.has(id) && !log.places.has(id)) findings.push({ kind: 'TRAIL_MISSING', severity: severityOf('TRAIL_MISSING'), message: `${why}, and no file of it is left (deleted with its seal, or the copy is another store's)`, event_ids: [], session_id: id });
    }
    for (const session of sessions) {
      const names = sessionKey !== null && (sessionKey === session.id || sessionKey === session.view.sessionKey);
      if (names) named.push(session.id);
      const own = session.view.findings;
      if (own.length > 0) findings.push(...(sessionKey === null || names ? own : own.filter((f) => STORE_KINDS.has(f.kind))));
    }
    return { findings, named };
  }

  /** True when the folder holds a file of session `id` now. */
  async hasSession(id: string): Promise<boolean> {
    return (await this.index.sessions()).some((session: IndexedSession) => session.id === id);
  }

  /** Stops watching the folder. */
  close(): void {
    this.index.close();
  }
}
