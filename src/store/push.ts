/**
 * `aura push`: a host's sessions folder into the fleet store. Hosts keep writing locally (nothing
 * on the emit path touches the network); pushing reads the files as they are on disk and ships
 * their bytes unchanged: every line, the summary, the session's seal-log entry (checkpoints are
 * lines of the trail). Closed sessions go whole, one transaction each; `--follow` also ships the
 * complete lines of open sessions as they grow, and closes them in the store when they close.
 *
 * What is stored is asked of the store, never remembered here: a push killed at any point and run
 * again finds what was committed and goes on, so every session ends up stored once and whole.
 */

import * as fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { NotFoundError } from '../errors.js';
import { KeyRing } from '../spine/signing.js';
import { trailWriter } from '../spine/writer.js';
import type { StoreConnection } from './postgres/connection.js';
import { storeCall } from './postgres/connection.js';
import { ingestSessions, storedStates, type SessionBundle, type StoredState } from './postgres/ingest.js';
import { requireSchema } from './postgres/schema.js';
import { sealLogPlaces, type SealLogEntry, type SealLogPlace } from './seal-log.js';
import { listSessionIds, resolveSessionKey, sessionFiles } from './session-files.js';
import { parseJsonStrict } from '../spine/fast-record.js';
import { readRegularFile } from '../spine/regular-file.js';

/** What to push. */
export interface PushOptions {
  readonly sessionsDir: string;
  readonly sealLog: string;
  /** The host's keys folder: its public keys go to the store, and signatures are checked with them at ingest. */
  readonly keysDir: string;
  /** Names this host in the store. */
  readonly host: string;
  /** Session ids (or keys) to push, or null for every session of the folder. */
  readonly ids: readonly string[] | null;
  /** Called after each session. */
  readonly onSession?: (session: PushedSession) => void;
  /** Sessions in flight at once (default 3): one is checked here while another is written there. */
  readonly concurrency?: number;
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
 * @throws StoreError (what was committed before it stays: run push again), NotFoundError for an asked session the folder lacks
 */
export async function pushSessions(store: StoreConnection, options: PushOptions): Promise<PushReport> {
  const ids = options.ids === null ? listSessionIds(options.sessionsDir) : options.ids.map((key) => localSession(options.sessionsDir, key));
  const pusher = await Pusher.start(store, options);
  const results: PushedSession[] = [];
  let lines = 0;
  const record = (session: PushedSession): void => {
    results.push(session);
    if (session.outcome === 'stored') lines += session.lines ?? 0;
    options.onSession?.(session);
  };
  const stored = await storeCall(store.label, () => storedStates(store.sql, ids));
  await inPool(batchesOf(options.sessionsDir, ids), options.concurrency ?? 3, async (batch) => {
    for (const session of await pusher.push(batch, stored, false)) record(session);
  });
  // Only a push that got through records itself: one that failed on the store has said why.
  await pusher.heartbeat(results.filter((s) => s.outcome === 'stored').length, lines);
  return reportOf(store.label, options.host, results, lines);
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
 * @throws StoreError
 */
export async function followSessions(store: StoreConnection, options: FollowOptions): Promise<PushReport> {
  const pusher = await Pusher.start(store, options);
  const results = new Map<string, PushedSession>();
  const done = new Set<string>();
  let lines = 0;
  await pusher.heartbeat(0, 0);
  while (!options.signal.aborted) {
    const ids = listSessionIds(options.sessionsDir).filter((id) => !done.has(id));
    const stored = await storeCall(store.label, () => storedStates(store.sql, ids));
    let roundLines = 0;
    await inPool(batchesOf(options.sessionsDir, ids), options.concurrency ?? 3, async (batch) => {
      for (const session of await pusher.push(batch, stored, true)) {
        const id = session.session_id;
        // Stored closed, refused, or already there whole: nothing more will come of it.
        if (session.outcome === 'refused' || session.outcome === 'present' || session.closed === true) done.add(id);
        if (session.outcome === 'stored' || session.outcome === 'refused') {
          roundLines += session.lines ?? 0;
          results.set(id, session);
          options.onSession?.(session);
        }
      }
    });
    lines += roundLines;
    if (roundLines > 0) await pusher.heartbeat(0, roundLines);
    await sleep(options.intervalMs ?? 1000, undefined, { signal: options.signal }).catch(() => undefined);
  }
  return reportOf(store.label, options.host, [...results.values()], lines);
}

/** The pushing of one folder's sessions to one store. */
class Pusher {
  private constructor(
    private readonly store: StoreConnection,
    private readonly options: Omit<PushOptions, 'ids'>,
    private readonly keys: KeyRing,
    private readonly seals: ReadonlyMap<string, { entry: SealLogEntry; raw: Buffer }>,
    private readonly places: ReadonlyMap<string, SealLogPlace>,
  ) {}

  static async start(store: StoreConnection, options: Omit<PushOptions, 'ids'>): Promise<Pusher> {
    await requireSchema(store.sql, store.label);
    const keys = KeyRing.load(options.keysDir);
    const texts = keys.list().map((entry) => ({ key_id: entry.keyId, public_key: fs.readFileSync(entry.path, 'utf8'), host: options.host }));
    if (texts.length > 0) await storeCall(store.label, () => store.sql`INSERT INTO aura.host_keys ${store.sql(texts)} ON CONFLICT (key_id) DO NOTHING`);
    const seals = sealEntries(options.sealLog);
    return new Pusher(store, options, keys, seals, sealLogPlaces([...seals.values()].map((seal) => seal.entry)));
  }

  /** Ships a batch of sessions: closed ones whole, open ones (when following) up to their last complete line. */
  async push(ids: readonly string[], stored: ReadonlyMap<string, StoredState>, follow: boolean): Promise<PushedSession[]> {
    const results = new Map<string, PushedSession>();
    const bundles: SessionBundle[] = [];
    for (const id of ids) {
      const files = sessionFiles(this.options.sessionsDir, id);
      const open = trailWriter(files.trail)?.alive === true || closing(files.trail, files.summary);
      const bundle = open && !follow ? null : this.bundle(id, !open);
      if (bundle === null) results.set(id, { session_id: id, outcome: 'open' });
      else bundles.push(bundle);
    }
    const outcomes = await ingestSessions(this.store.sql, this.store.label, bundles, this.keys.list().length === 0 ? null : this.keys, stored);
    bundles.forEach((bundle, i) => {
      const id = bundle.sessionId;
      const outcome = outcomes[i] as (typeof outcomes)[number];
      if (outcome.outcome === 'stored') results.set(id, { session_id: id, outcome: 'stored', lines: outcome.added, closed: bundle.closed, status: outcome.status });
      else if (outcome.outcome === 'present') results.set(id, { session_id: id, outcome: bundle.closed ? 'present' : 'open' });
      else results.set(id, { session_id: id, outcome: 'refused', reason: outcome.reason, message: outcome.message });
    });
    return ids.map((id) => results.get(id) as PushedSession);
  }

  /** Records that this host pushed (what `HOST_SILENT` reads). */
  async heartbeat(sessions: number, lines: number): Promise<void> {
    await storeCall(this.store.label, () => this.store.sql`INSERT INTO aura.pushes (host, sessions, lines) VALUES (${this.options.host}, ${sessions}, ${lines})`);
  }

  /** The session's bytes as the files hold them; an open one only up to its last complete line. */
  private bundle(id: string, closed: boolean): SessionBundle | null {
    const files = sessionFiles(this.options.sessionsDir, id);
    const trail = readRegularFile(files.trail, 'trail');
    const lines = splitLines(trail);
    if (!closed && lines.length > 0 && (lines[lines.length - 1] as Buffer).at(-1) !== 0x0a) lines.pop();
    if (!closed && lines.length === 0) return null;
    const summary = closed && fs.existsSync(files.summary) ? readRegularFile(files.summary, 'summary') : null;
    return { sessionId: id, host: this.options.host, lines, summary, sealEntry: closed ? (this.seals.get(id) ?? null) : null, sealPlace: closed ? (this.places.get(id) ?? null) : null, closed };
  }
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

// A batch is one transaction: up to this many sessions, or this many bytes of trail.
const BATCH_SESSIONS = 100;
const BATCH_BYTES = 8 * 1024 * 1024;

/** The sessions in batches, in order. */
function batchesOf(sessionsDir: string, ids: readonly string[]): string[][] {
  const batches: string[][] = [];
  let batch: string[] = [];
  let bytes = 0;
  for (const id of ids) {
    const size = fs.statSync(sessionFiles(sessionsDir, id).trail, { throwIfNoEntry: false })?.size ?? 0;
    if (batch.length > 0 && (batch.length >= BATCH_SESSIONS || bytes + size > BATCH_BYTES)) {
      batches.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(id);
    bytes += size;
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}

/** A session key from the command line, as a session of the folder. */
function localSession(sessionsDir: string, key: string): string {
  const files = resolveSessionKey(sessionsDir, key);
  if (!fs.existsSync(files.trail)) throw new NotFoundError('trail', files.trail);
  return files.sessionId;
}


/** The lines of a file's bytes, each with its newline when it has one (views, not copies). */
export function splitLines(bytes: Buffer): Buffer[] {
  const lines: Buffer[] = [];
  let start = 0;
  while (start < bytes.length) {
    const end = bytes.indexOf(0x0a, start);
    const stop = end < 0 ? bytes.length : end + 1;
    lines.push(bytes.subarray(start, stop));
    start = stop;
  }
  return lines;
}

/**
 * The seal-log entries by session, with each entry's line as the log holds it. A line that does
 * not parse is skipped here: the session then goes without its entry, and is checked against its
 * summary's seal.
 */
function sealEntries(sealLog: string): Map<string, { entry: SealLogEntry; raw: Buffer }> {
  const entries = new Map<string, { entry: SealLogEntry; raw: Buffer }>();
  if (!fs.existsSync(sealLog)) return entries;
  for (const raw of splitLines(readRegularFile(sealLog, 'seal log'))) {
    try {
      const entry = parseJsonStrict(raw.toString('utf8')) as SealLogEntry;
      if (typeof entry.seal?.session_id === 'string') entries.set(entry.seal.session_id, { entry, raw });
    } catch {
      continue;
    }
  }
  return entries;
}

/** Runs `work` over `items`, `size` at a time; after a failure no new item starts, and the first failure is thrown. */
async function inPool<T>(items: readonly T[], size: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failed = false;
  const worker = async (): Promise<void> => {
    while (!failed && next < items.length) {
      try {
        await work(items[next++] as T);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  const settled = await Promise.allSettled(Array.from({ length: Math.max(1, Math.min(size, items.length)) }, worker));
  const failure = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failure !== undefined) throw failure.reason;
}

function reportOf(store: string, host: string, sessions: readonly PushedSession[], lines: number): PushReport {
  const counts = { stored: 0, present: 0, open: 0, refused: 0 };
  for (const session of sessions) counts[session.outcome]++;
  return { store, host, sessions, counts, lines, ok: counts.refused === 0 };
}
