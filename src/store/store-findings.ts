/**
 * The findings of a sessions folder (DESIGN §6), as the findings channel delivers them.
 * Store-level findings (broken or truncated chains, summaries that disagree with their trail,
 * sessions left open by a dead writer, closed trails with no summary, torn tails, artifacts with
 * no trail, a broken seal log) always cover every session of the folder; session findings (what
 * the detector finds in one session) cover the session named by `session_key`, or every session.
 *
 * Results are computed from the files at each call. Work is reused only for a session whose files
 * have the same fingerprint (size, mtime, ctime, inode) as when last read: any write, even one
 * that restores the mtime, changes the ctime, so a reused result is never stale. A ctime younger
 * than the coarsest clock tick is not trusted (a later write could share it), and a session with a
 * lock also rests on whether its writer lives, which is checked at every call.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Finding } from '../audit/detector.js';
import type { FindingKind } from '../audit/kinds.js';
import { sessionReport } from '../audit/session-report.js';
import { sessionKeyOf } from '../session/ids.js';
import { trailWriter } from '../spine/writer.js';
import { SESSION_ID_PATTERN, sessionFiles } from './session-files.js';
import type { SealLogView } from './seal-log.js';
import { materialStatus, sealLogView } from './session-status.js';
import { folderMaterial } from './material.js';

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
  'SIGNATURE_MISSING',
  'SEAL_MISSING',
  'TRAIL_INCOMPLETE',
  'CHECK_CRASHED',
]);

/** How old a ctime must be to be trusted as a fingerprint: no filesystem ticks coarser (FAT: 2 s). */
const RACY_WINDOW_MS = 2000;

/**
 * One session as the current listing holds it, with what was last computed for it. `stamps`
 * holds the fingerprint of each of `files` taken before that computation (four numbers a file),
 * so a write during it shows at the next call.
 */
interface SessionEntry {
  readonly id: string;
  /** The session's files that a result rests on and the listing holds: trail, summary, lock. */
  readonly files: readonly string[];
  /** The trail's path when the session has a lock: its writer's liveness is checked every call. */
  readonly lockedTrail: string | null;
  stamps: number[] | null;
  writerAlive: boolean | null;
  findings: readonly Finding[];
  /** The session key it declared, if any (SuperAuditor §7). */
  sessionKey: string | null;
}

interface Listing {
  readonly stamp: number[];
  /** In session id order: findings come in session order. */
  readonly entries: readonly SessionEntry[];
  readonly ids: ReadonlySet<string>;
}

/** The findings of one sessions folder, with the fingerprint cache of a long-running server. */
export class StoreFindings {
  // path.join normalises on every call; ten thousand sessions a listing make that show.
  private readonly prefix: string;
  private listingCache: Listing | null = null;
  private sealLogCache: { readonly stamp: number[]; readonly findings: readonly Finding[]; readonly view: SealLogView } | null = null;

  constructor(
    readonly sessionsDir: string,
    readonly sealLog: string,
  ) {
    this.prefix = path.join(sessionsDir, path.sep);
  }

  /** True when the folder holds a file of session `id`. */
  hasSession(id: string): boolean {
    return this.listing().ids.has(id);
  }

  /**
   * Every finding of the folder: store-level ones for every session, session ones for the
   * sessions `sessionKey` names (its id, or the key it declared) or for all when it is null, each
   * naming its `session_id`, in session then detector order.
   */
  findings(sessionKey: string | null): Finding[] {
    const out: Finding[] = [...this.sealLogFindings()];
    for (const entry of this.listing().entries) {
      if (!isCurrent(entry)) this.recompute(entry);
      if (entry.findings.length === 0) continue;
      out.push(...(sessionKey === null || names(entry, sessionKey) ? entry.findings : entry.findings.filter((f) => STORE_KINDS.has(f.kind))));
    }
    return out;
  }

  /** The ids of the sessions `sessionKey` names: the session with that id, and those that declared it. */
  sessionsNamed(sessionKey: string): string[] {
    return this.listing().entries.filter((entry) => {
      if (!isCurrent(entry)) this.recompute(entry);
      return names(entry, sessionKey);
    }).map((entry) => entry.id);
  }

  /**
   * One read of the folder: its sessions and which of their files exist. Creating, removing or
   * renaming an entry changes the folder's own mtime and ctime, so an unchanged folder
   * fingerprint means an unchanged listing (file contents are checked per file, at every call).
   */
  private listing(): Listing {
    const cached = this.listingCache;
    if (cached !== null && unchanged(this.sessionsDir, cached.stamp, 0)) return cached;
    const stamp = stampOf(this.sessionsDir);
    const listing = this.readListing(stamp, cached);
    this.listingCache = listing;
    return listing;
  }

  private readListing(stamp: number[], previous: Listing | null): Listing {
    let names: string[];
    try {
      names = fs.readdirSync(this.sessionsDir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { stamp, entries: [], ids: new Set() };
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
    const present = new Set(names);
    const before = new Map(previous?.entries.map((entry) => [entry.id, entry]));
    const entries = [...ids].sort().map((id) => {
      // The spans file bears on no finding; a lock is rare on a quiet store, so only listed files count.
      const files = [`${id}.jsonl`, `${id}.summary.json`, `${id}.jsonl.lock`].filter((name) => present.has(name)).map((name) => this.prefix + name);
      const lockedTrail = present.has(`${id}.jsonl.lock`) ? `${this.prefix}${id}.jsonl` : null;
      const old = before.get(id);
      // Work done for the same set of files carries over; its fingerprints are still checked.
      const kept = old !== undefined && old.files.join('\0') === files.join('\0');
      return { id, files, lockedTrail, stamps: kept ? old.stamps : null, writerAlive: kept ? old.writerAlive : null, findings: kept ? old.findings : [], sessionKey: kept ? old.sessionKey : null };
    });
    return { stamp, entries, ids };
  }

  /** The seal log's finding, re-read only when its fingerprint changed. */
  private sealLogFindings(): readonly Finding[] {
    const cached = this.sealLogCache;
    if (cached !== null && unchanged(this.sealLog, cached.stamp, 0)) return cached.findings;
    const stamp = stampOf(this.sealLog);
    const view = sealLogView(this.sealLog);
    const log = view.read;
    const findings: Finding[] = log.problem === null ? [] : [{ kind: 'SEAL_LOG_BROKEN', severity: 'critical', message: log.problem.message, event_ids: [], line: log.problem.line }];
    // A session's status rests on its place in the log too: when the log says otherwise, every session is judged again.
    if (cached !== null && logIdentity(cached.view) !== logIdentity(view)) for (const entry of this.listingCache?.entries ?? []) entry.stamps = null;
    this.sealLogCache = { stamp, findings, view };
    return findings;
  }

  private recompute(entry: SessionEntry): void {
    // Fingerprints first: a write while the files are read then shows at the next call.
    entry.stamps = entry.files.flatMap(stampOf);
    entry.writerAlive = entry.lockedTrail === null ? null : trailWriter(entry.lockedTrail)?.alive ?? null;
    const computed = this.compute(entry.id);
    entry.findings = computed.findings.map((f) => ({ ...f, session_id: entry.id }));
    entry.sessionKey = computed.sessionKey;
  }

  private compute(id: string): { findings: Finding[]; sessionKey: string | null } {
    const files = sessionFiles(this.sessionsDir, id);
    try {
      if (!fs.existsSync(files.trail)) {
        const artifact = fs.existsSync(files.summary) ? files.summary : files.otel;
        return { findings: [{ kind: 'ORPHAN_ARTIFACT', severity: 'warn', message: `${artifact} has no trail beside it`, event_ids: [], path: artifact }], sessionKey: null };
      }
      this.sealLogFindings();
      const material = folderMaterial(files, this.sealLogCache?.view ?? null);
      const status = materialStatus(material, null);
      const { summary } = sessionReport(material, false, status.trail === null ? undefined : status);
      const report = summary.audit_report;
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
      return { findings, sessionKey: sessionKeyOf(summary['session_key']) };
    } catch (error) {
      // One unreadable session must not hide the others' findings (SuperAuditor v1.1 §5.4).
      return { findings: [{ kind: 'CHECK_CRASHED', severity: 'warn', message: `reading ${id} failed: ${error instanceof Error ? error.message : String(error)}`, event_ids: [], probe: 'store' }], sessionKey: null };
    }
  }
}

/** What a seal log says, in one string: its entries (each hash chains over those before it), their signatures, and its first problem. */
function logIdentity(view: SealLogView): string {
  const { entries, problem } = view.read;
  return `${entries.length} ${entries.at(-1)?.hash ?? '-'} ${entries.filter((entry) => typeof entry.signature === 'string').length} ${problem?.line ?? '-'}`;
}

/** True when `sessionKey` names the session of `entry`: its id, or the key it declared. */
function names(entry: SessionEntry, sessionKey: string): boolean {
  return sessionKey === entry.id || sessionKey === entry.sessionKey;
}

/**
 * True when the files of `entry` have the fingerprints its findings were computed from, and a
 * locked session's writer is as alive as it was: its cached findings are then current.
 */
function isCurrent(entry: SessionEntry): boolean {
  const stamps = entry.stamps;
  if (stamps === null) return false;
  for (let i = 0; i < entry.files.length; i++) if (!unchanged(entry.files[i] as string, stamps, i * 4)) return false;
  // A writer can die without touching a file: SESSION_ABANDONED rests on its process too.
  return entry.lockedTrail === null || (trailWriter(entry.lockedTrail)?.alive ?? null) === entry.writerAlive;
}

/**
 * The fingerprint of DESIGN §6 (size, mtime, ctime, inode), as numbers: comparing them needs no
 * string per file, and ten thousand sessions a call make that show. A missing file, or a ctime
 * too recent to trust, stamps NaN, which equals nothing, so it is never taken as unchanged.
 */
function stampOf(file: string): number[] {
  const now = Date.now();
  const s = statOf(file);
  if (s === undefined) return [NaN, NaN, NaN, NaN];
  // A ctime within a clock tick of now could be shared by a write still to come (a kernel that
  // stamps coarsely, FAT's 2 s): such a file is read again until its ctime is safely past.
  const ctime = now - s.ctimeMs < RACY_WINDOW_MS ? NaN : s.ctimeMs;
  // Milliseconds as doubles keep the nanoseconds Linux records to well under a microsecond.
  return [s.size, s.mtimeMs, ctime, s.ino];
}

/** True when `file` has the fingerprint stored at `stamps[at..at + 3]`. */
function unchanged(file: string, stamps: readonly number[], at: number): boolean {
  const s = statOf(file);
  return s !== undefined && s.size === stamps[at] && s.mtimeMs === stamps[at + 1] && s.ctimeMs === stamps[at + 2] && s.ino === stamps[at + 3];
}

/** A file's stat, or undefined when there is none to take (missing, or a symlink loop: its reader says why). */
function statOf(file: string): fs.Stats | undefined {
  try {
    return fs.statSync(file, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}
