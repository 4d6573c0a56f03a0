/**
 * The findings of a sessions folder (DESIGN §6), as the findings channel delivers them.
 * Store-level findings (broken or truncated chains, summaries that disagree with their trail,
 * sessions left open by a dead writer, closed trails with no summary, torn tails, artifacts with
 * no trail, a broken seal log) always cover every session of the folder; session findings (what
 * the detector finds in one session) cover the session named by `session_key`, or every session.
 *
 * Results are computed from the files at each call. Work is reused only for a session whose files
 * have the same fingerprint (size, mtime, ctime, inode) as when last read: any write, even one
 * that restores the mtime, changes the ctime, so a reused result is never stale.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Finding } from '../audit/detector.js';
import type { FindingKind } from '../audit/kinds.js';
import { sessionReport } from '../audit/session-report.js';
import { trailWriter } from '../spine/writer.js';
import { readSealLog } from './seal-log.js';
import { SESSION_ID_PATTERN, sessionFiles } from './session-files.js';

/** Kinds about the store's state that are reported whatever session the caller names. */
export const STORE_KINDS: ReadonlySet<string> = new Set<FindingKind>([
  'HASH_CHAIN_BROKEN',
  'TRAIL_TRUNCATED',
  'SIGNATURE_INVALID',
  'TRAIL_TORN_TAIL',
  'SUMMARY_MISMATCH',
  'SESSION_ABANDONED',
  'SUMMARY_MISSING',
  'ORPHAN_ARTIFACT',
  'SEAL_LOG_BROKEN',
  'TRAIL_INCOMPLETE',
  'CHECK_CRASHED',
]);

interface Cached {
  readonly fingerprint: string;
  readonly findings: readonly Finding[];
}

/** The findings of one sessions folder, with the fingerprint cache of a long-running server. */
export class StoreFindings {
  private readonly cache = new Map<string, Cached>();
  // path.join normalises on every call; ten thousand sessions a call make that show.
  private readonly prefix: string;

  constructor(
    readonly sessionsDir: string,
    private readonly sealLog: string,
  ) {
    this.prefix = path.join(sessionsDir, path.sep);
  }

  /** The ids of the sessions in the folder (any of their files), sorted. */
  sessionIds(): string[] {
    return [...this.listing().ids].sort();
  }

  private listingCache: { readonly fingerprint: string; readonly ids: Set<string>; readonly names: Set<string> } | null = null;

  /**
   * One read of the folder: its session ids, and which of their files exist. Creating, removing
   * or renaming an entry changes the folder's own mtime and ctime, so an unchanged folder
   * fingerprint means an unchanged listing (file contents are checked per file, below).
   */
  private listing(): { ids: Set<string>; names: Set<string> } {
    const fingerprint = fingerprintOf(this.sessionsDir);
    if (this.listingCache?.fingerprint === fingerprint) return this.listingCache;
    const listed = this.readListing();
    this.listingCache = { fingerprint, ...listed };
    return listed;
  }

  private readListing(): { ids: Set<string>; names: Set<string> } {
    let names: string[];
    try {
      names = fs.readdirSync(this.sessionsDir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { ids: new Set(), names: new Set() };
      throw error;
    }
    const ids = new Set<string>();
    for (const name of names) {
      // Suffix checks before the pattern: on 30,000 names the cheap test decides most.
      if (!(name.endsWith('.jsonl') || name.endsWith('.summary.json'))) continue;
      const id = name.slice(0, 22);
      const rest = name.slice(22);
      if ((rest === '.jsonl' || rest === '.summary.json' || rest === '.otel.jsonl') && SESSION_ID_PATTERN.test(id)) ids.add(id);
    }
    // Sorted once a listing: findings come in session order.
    return { ids: new Set([...ids].sort()), names: new Set(names) };
  }

  /**
   * Every finding of the folder: store-level ones for every session, session ones for `sessionKey`
   * (or all when it is null), each naming its `session_id`, in session then detector order.
   */
  findings(sessionKey: string | null): Finding[] {
    const out: Finding[] = [...this.sealLogFindings()];
    const { ids, names } = this.listing();
    for (const id of ids) {
      const all = this.sessionFindings(id, names);
      if (all.length === 0) continue;
      out.push(...(sessionKey === null || sessionKey === id ? all : all.filter((f) => STORE_KINDS.has(f.kind))));
    }
    if (this.cache.size > ids.size) for (const id of [...this.cache.keys()]) if (!ids.has(id)) this.cache.delete(id);
    return out;
  }

  private sealLogCache: Cached | null = null;

  /** The seal log's finding, re-read only when its fingerprint changed. */
  private sealLogFindings(): readonly Finding[] {
    const fingerprint = fingerprintOf(this.sealLog);
    if (this.sealLogCache?.fingerprint === fingerprint) return this.sealLogCache.findings;
    const log = readSealLog(this.sealLog);
    const findings: Finding[] = log.problem === null ? [] : [{ kind: 'SEAL_LOG_BROKEN', severity: 'critical', message: log.problem.message, event_ids: [], line: log.problem.line }];
    this.sealLogCache = { fingerprint, findings };
    return findings;
  }

  private sessionFindings(id: string, names: ReadonlySet<string>): readonly Finding[] {
    // Only files the listing holds are stat'ed: on a quiet store most sessions have no lock, and a
    // stat of a missing file is the costliest kind. The spans file bears on no finding.
    const trail = `${id}.jsonl`;
    const summary = `${id}.summary.json`;
    const lock = `${id}.jsonl.lock`;
    const fingerprint =
      `${names.has(trail) ? fingerprintOf(this.prefix + trail) : '-'}|` +
      `${names.has(summary) ? fingerprintOf(this.prefix + summary) : '-'}|` +
      `${names.has(lock) ? fingerprintOf(this.prefix + lock) : '-'}`;
    const cached = this.cache.get(id);
    if (cached !== undefined && cached.fingerprint === fingerprint) return cached.findings;
    const findings = this.compute(id).map((f) => ({ ...f, session_id: id }));
    this.cache.set(id, { fingerprint, findings });
    return findings;
  }

  private compute(id: string): Finding[] {
    const files = sessionFiles(this.sessionsDir, id);
    try {
      if (!fs.existsSync(files.trail)) {
        const artifact = fs.existsSync(files.summary) ? files.summary : files.otel;
        return [{ kind: 'ORPHAN_ARTIFACT', severity: 'warn', message: `${artifact} has no trail beside it`, event_ids: [], path: artifact }];
      }
      const report = sessionReport(files).summary.audit_report;
      const findings: Finding[] = report.findings.filter((f) => f.kind !== 'TRAIL_INCOMPLETE');
      const complete = report['chain_complete'] === true;
      const writer = trailWriter(files.trail);
      const writerAlive = writer?.alive === true;
      if (!complete && writer !== null && !writerAlive) {
        findings.push({ kind: 'SESSION_ABANDONED', severity: 'warn', message: `its writer (pid ${writer.pid}) is gone and the session was never closed`, event_ids: [], pid: writer.pid });
      } else if (!complete && !writerAlive && report.findings.some((f) => f.kind === 'TRAIL_INCOMPLETE')) {
        // Not closed, and no writer: incomplete. A live writer's session is simply still open.
        findings.push(...report.findings.filter((f) => f.kind === 'TRAIL_INCOMPLETE'));
      }
      if (complete && !writerAlive && !fs.existsSync(files.summary)) {
        findings.push({ kind: 'SUMMARY_MISSING', severity: 'warn', message: 'the trail is closed but has no summary', event_ids: [] });
      }
      return findings;
    } catch (error) {
      // One unreadable session must not hide the others' findings (SuperAuditor v1.1 §5.4).
      return [{ kind: 'CHECK_CRASHED', severity: 'warn', message: `reading ${id} failed: ${error instanceof Error ? error.message : String(error)}`, event_ids: [], probe: 'store' }];
    }
  }
}

function fingerprintOf(file: string): string {
  const s = fs.statSync(file, { throwIfNoEntry: false });
  // Milliseconds as doubles keep the nanoseconds Linux records to well under a microsecond.
  return s === undefined ? '-' : `${s.size}:${s.mtimeMs}:${s.ctimeMs}:${s.ino}`;
}
