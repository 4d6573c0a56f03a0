/**
 * `aura push`: a host's sessions folder into the fleet store. Hosts keep writing locally (nothing
 * on the emit path touches the network); pushing reads the files as they are on disk and ships
 * their bytes unchanged: every line, the summary, the session's seal-log entry (checkpoints are
 * lines of the trail), and, where the seal log has an anchor copy, what the copy says of that
 * seal (the store cannot read the copy). Closed sessions go whole, each inside one transaction
 * (checked on worker threads and written in batches: postgres/ingest.ts); `--follow` also ships
 * the complete lines of open sessions as they grow, and closes them in the store when they close.
 *
 * What is stored is asked of the store, never remembered here: a push killed at any point and run
 * again finds what was committed and goes on, so every session ends up stored once and whole.
 */

import * as fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { NotFoundError } from '../errors.js';
import { KeyRing } from '../spine/signing.js';
import { trailWriter } from '../spine/writer.js';
import { CheckPool } from './postgres/check-pool.js';
import type { StoreConnection } from './postgres/connection.js';
import { storeCall } from './postgres/connection.js';
import { ingestSessions, storedStates, type IngestOutcome } from './postgres/ingest.js';
import { splitLines, type CheckTask, type StoredState } from './postgres/ingest-check.js';
import { requireSchema } from './postgres/schema.js';
import { anchorWord } from './material.js';
import { readSealLogBytes, sealLogPlaces, walkedSealLog, type SealLogEntry, type SealLogPlace, type SealLogView } from './seal-log.js';
import { anchoredView } from './seal-log-anchor.js';
import { sealLogViewOf } from './session-status.js';
import { listSessionIds, resolveSessionKey, sessionFiles, type SessionFiles } from './session-files.js';
import { parseJsonStrict } from '../spine/fast-record.js';
import { readRegularFile, readRegularFileShared } from '../spine/regular-file.js';

/** What to push. */
export interface PushOptions {
  readonly sessionsDir: string;
  readonly sealLog: string;
  /** That log's anchor copy (config `anchor_dir`), or null (the default). */
  readonly anchorLog?: string | null;
  /** The host's keys folder: its public keys go to the store, and signatures are checked with them at ingest. */
  readonly keysDir: string;
  /** Names this host in the store. */
  readonly host: string;
  /** Session ids (or keys) to push, or null for every session of the folder. */
  readonly ids: readonly string[] | null;
  /** Called after each session. */
  readonly onSession?: (session: PushedSession) => void;
  /** Worker threads that check sessions (default one a core but one, at least one). */
  readonly workers?: number;
}

/** What happened to one session. */
export interface PushedSession {
  readonly session_id: string;
  /** `stored` (new lines or its close), `present` (the store holds it already), `open` (its writer lives: --follow ships it), `refused`. */
  readonly outcome: 'stored' | 'present' | 'open' | 'refused';
  readonly lines?: number;
  /** Stored closed (with its close record), not only lines so far. */
  readonly closed?: boolean;
  readonly status?: string;
  readonly reason?: string;
  readonly message?: string;
}

/** The report of a push. */
export interface PushReport {
  readonly store: string;
  readonly host: string;
  readonly sessions: readonly PushedSession[];
  readonly counts: Readonly<Record<PushedSession['outcome'], number>>;
  /** Lines stored by this push. */
  readonly lines: number;
  /** Nothing was refused. */
  readonly ok: boolean;
}

/**
 * Pushes the closed sessions asked for (open ones are reported as such).
 * @throws StoreError (what was committed before it stays: run push again), NotFoundError for an
 *   asked session the folder lacks, CheckFailedError for a session that could not be checked
 */
export async function pushSessions(store: StoreConnection, options: PushOptions): Promise<PushReport> {
  const ids = options.ids === null ? listSessionIds(options.sessionsDir) : options.ids.map((key) => localSession(options.sessionsDir, key));
  const pusher = await Pusher.start(store, options, ids.length);
  try {
    const results: PushedSession[] = [];
    let lines = 0;
    const stored = await storeCall(store.label, () => storedStates(store.sql, ids));
    await pusher.push(ids, stored, false, (session) => {
      results.push(session);
      if (session.outcome === 'stored') lines += session.lines ?? 0;
      options.onSession?.(session);
    });
    // Only a push that got through records itself: one that failed on the store has said why.
    await pusher.heartbeat(results.filter((s) => s.outcome === 'stored').length, lines);
    const order = new Map(ids.map((id, i) => [id, i]));
    return reportOf(store.label, options.host, results.sort((a, b) => (order.get(a.session_id) ?? 0) - (order.get(b.session_id) ?? 0)), lines);
  } finally {
    await pusher.close();
  }
}

/** How `push --follow` runs. */
export interface FollowOptions extends Omit<PushOptions, 'ids'> {
  /** Time between rounds (default 1000 ms). */
  readonly intervalMs?: number;
  /** Stops following after the round in progress. */
  readonly signal: AbortSignal;
}

/**
 * Follows the folder until `signal` aborts: each round ships the new complete lines of open
 * sessions, and closed sessions whole.
 * @throws StoreError, CheckFailedError
 */
export async function followSessions(store: StoreConnection, options: FollowOptions): Promise<PushReport> {
  const pusher = await Pusher.start(store, options);
  try {
    const results = new Map<string, PushedSession>();
    const done = new Set<string>();
    let lines = 0;
    await pusher.heartbeat(0, 0);
    while (!options.signal.aborted) {
      const ids = listSessionIds(options.sessionsDir).filter((id) => !done.has(id));
      const stored = await storeCall(store.label, () => storedStates(store.sql, ids));
      let roundLines = 0;
      await pusher.push(ids, stored, true, (session) => {
        const id = session.session_id;
        // Stored closed, refused, or already there whole: nothing more will come of it.
        if (session.outcome === 'refused' || session.outcome === 'present' || session.closed === true) done.add(id);
        if (session.outcome === 'stored' || session.outcome === 'refused') {
          roundLines += session.lines ?? 0;
          results.set(id, session);
          options.onSession?.(session);
        }
      });
      lines += roundLines;
      if (roundLines > 0) await pusher.heartbeat(0, roundLines);
      await sleep(options.intervalMs ?? 1000, undefined, { signal: options.signal }).catch(() => undefined);
    }
    return reportOf(store.label, options.host, [...results.values()], lines);
  } finally {
    await pusher.close();
  }
}

/** The pushing of one folder's sessions to one store. */
class Pusher {
  private constructor(
    private readonly store: StoreConnection,
    private readonly options: Omit<PushOptions, 'ids'>,
    private readonly pool: CheckPool,
  ) {}

  /** @param sessions how many sessions will be pushed, when known (no more workers than that) */
  static async start(store: StoreConnection, options: Omit<PushOptions, 'ids'>, sessions?: number): Promise<Pusher> {
    await requireSchema(store.sql, store.label);
    const keys = KeyRing.load(options.keysDir);
    const texts = keys.list().map((entry) => ({ key_id: entry.keyId, public_key: fs.readFileSync(entry.path, 'utf8'), host: options.host }));
    if (texts.length > 0) await storeCall(store.label, () => store.sql`INSERT INTO aura.host_keys ${store.sql(texts)} ON CONFLICT (key_id) DO NOTHING`);
    const pool = new CheckPool({
      publicKeys: texts.map((text) => text.public_key),
      keysOrigin: options.keysDir,
      ...(options.workers === undefined ? {} : { size: options.workers }),
      ...(sessions === undefined ? {} : { sessions }),
    });
    return new Pusher(store, options, pool);
  }

  /** Ships sessions: closed ones whole, open ones (when following) up to their last complete line; `record` hears of each. */
  async push(ids: readonly string[], stored: ReadonlyMap<string, StoredState>, follow: boolean, record: (session: PushedSession) => void): Promise<void> {
    const sessions = ids.map((id) => {
      const files = sessionFiles(this.options.sessionsDir, id);
      return { files, open: trailWriter(files.trail)?.alive === true || closing(files.trail, files.summary) };
    });
    // Read after the sessions are found closed, not once a push: a close logs its seal before it
    // writes its summary, so the log read now holds the seal of each, one that closed while
    // --follow ran too.
    const logs = sessions.some((session) => !session.open) ? this.hostLogs() : null;
    const closed = new Map<string, boolean>();
    const tasks = function* (this: Pusher): Generator<CheckTask> {
      for (const { files, open } of sessions) {
        const id = files.sessionId;
        const task = open && !follow ? null : this.task(files, !open, stored.get(id) ?? null, logs);
        if (task === null) record({ session_id: id, outcome: 'open' });
        else {
          closed.set(id, task.closed);
          yield task;
        }
      }
    }.call(this);
    await ingestSessions(this.store.sql, this.store.label, this.pool, tasks, (id, outcome) => record(pushedOf(id, outcome, closed.get(id) === true)));
  }

  /** Records that this host pushed (what `HOST_SILENT` reads). */
  async heartbeat(sessions: number, lines: number): Promise<void> {
    await storeCall(this.store.label, () => this.store.sql`INSERT INTO aura.pushes (host, sessions, lines) VALUES (${this.options.host}, ${sessions}, ${lines})`);
  }

  /** Stops the checking workers. */
  async close(): Promise<void> {
    await this.pool.close();
  }

  /**
   * The host's seal log now, as the folder's readers take it (up to its first broken line or link:
   * an entry after it seals nothing for them, and so for the store): each entry with its line as
   * the log holds it, each entry's place, and, when it has an anchor copy, the log's view with it,
   * so the store hears from the copy what they would say.
   * @throws ReadError when either is there but cannot be read
   */
  private hostLogs(): HostLogs {
    const anchorLog = this.options.anchorLog ?? null;
    // Read once for both: the view its readers take, and each entry's line as the log holds it.
    const bytes = readSealLogBytes(this.options.sealLog);
    const view = anchoredView(sealLogViewOf(walkedSealLog(bytes), null), anchorLog);
    const read = new Set(view.read.entries.map((entry) => entry.hash));
    const seals = new Map([...sealEntries(bytes)].filter(([, seal]) => read.has(seal.entry.hash)));
    return {
      seals,
      places: sealLogPlaces([...seals.values()].map((seal) => seal.entry)),
      anchored: anchorLog === null ? null : view,
    };
  }

  /** The session's bytes as the files hold them (an open one's only up to its last complete line), or null for an open one with none; a closed one's seal as the host's `logs` hold it. */
  private task(files: SessionFiles, closed: boolean, stored: StoredState | null, logs: HostLogs | null): CheckTask | null {
    // Shared with the worker that checks it: a trail crosses to it without a copy.
    const whole = readRegularFileShared(files.trail, 'trail');
    const trail = closed ? whole : whole.subarray(0, whole.lastIndexOf(0x0a) + 1);
    if (!closed && trail.length === 0) return null;
    const summary = closed && fs.existsSync(files.summary) ? readRegularFile(files.summary, 'summary') : null;
    const id = files.sessionId;
    const log = closed ? logs : null;
    return { sessionId: id, host: this.options.host, trail, summary, sealEntry: log?.seals.get(id) ?? null, sealPlace: log?.places.get(id) ?? null, logRead: log !== null, anchor: anchorWord(log?.anchored ?? null, id), closed, stored };
  }
}

/** A host's seal log as a push read it (Pusher.hostLogs). */
interface HostLogs {
  readonly seals: ReadonlyMap<string, { readonly entry: SealLogEntry; readonly raw: Buffer }>;
  readonly places: ReadonlyMap<string, SealLogPlace>;
  readonly anchored: SealLogView | null;
}

function pushedOf(id: string, outcome: IngestOutcome, closed: boolean): PushedSession {
  if (outcome.outcome === 'stored') return { session_id: id, outcome: 'stored', lines: outcome.added, closed, status: outcome.status };
  if (outcome.outcome === 'present') return { session_id: id, outcome: closed ? 'present' : 'open' };
  return { session_id: id, outcome: 'refused', reason: outcome.reason, message: outcome.message };
}

/**
 * A session closes in steps: its writer records `session.close` and lets go of the trail, then
 * seals it and writes its summary. A trail with no writer and no summary that changed moments ago
 * is between those steps: it is taken for open until its summary lands, or long enough has passed
 * for its close to have failed (then it goes without one, as a session that was never exported).
 */
const CLOSE_GRACE_MS = 10_000;

function closing(trail: string, summary: string): boolean {
  if (fs.existsSync(summary)) return false;
  const changed = fs.statSync(trail, { throwIfNoEntry: false })?.mtimeMs;
  return changed !== undefined && Date.now() - changed < CLOSE_GRACE_MS;
}

/** A session key from the command line, as a session of the folder. */
function localSession(sessionsDir: string, key: string): string {
  const files = resolveSessionKey(sessionsDir, key);
  if (!fs.existsSync(files.trail)) throw new NotFoundError('trail', files.trail);
  return files.sessionId;
}


/**
 * The seal-log entries by session (of the log's bytes, null when there is none), with each entry's
 * line as the log holds it. A line that does not parse is skipped here: its session then goes as
 * one the log has no entry for, as the folder's readers, which stop at that line, take it.
 */
function sealEntries(bytes: Buffer | null): Map<string, { entry: SealLogEntry; raw: Buffer }> {
  const entries = new Map<string, { entry: SealLogEntry; raw: Buffer }>();
  if (bytes === null) return entries;
  for (const raw of splitLines(bytes)) {
    try {
      const entry = parseJsonStrict(raw.toString('utf8')) as SealLogEntry;
      // A copy of its own: the view would take the whole log along to the worker that checks it.
      if (typeof entry.seal?.session_id === 'string') entries.set(entry.seal.session_id, { entry, raw: Buffer.from(raw) });
    } catch {
      continue;
    }
  }
  return entries;
}

function reportOf(store: string, host: string, sessions: readonly PushedSession[], lines: number): PushReport {
  const counts = { stored: 0, present: 0, open: 0, refused: 0 };
  for (const session of sessions) counts[session.outcome]++;
  return { store, host, sessions, counts, lines, ok: counts.refused === 0 };
}
