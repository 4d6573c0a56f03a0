/**
 * The trail writer (DESIGN §3): appends whole lines with one `write` each (or several lines that
 * belong together with one `write`), so an event whose append returned is in the kernel's hands
 * and survives the process being killed. One writer a
 * session: a lock file beside the trail names the writing process, and a second writer is
 * refused while that process lives.
 *
 * A shared trail (one session written by many short processes in turn, such as the hooks of a
 * Claude Code session) keeps the rule one process at a time: each takes the trail's append lock
 * (`{trail}.append.lock`, waiting while another live process holds it), finds the chain head in
 * the trail itself, appends, and lets go. Between processes, the lock file is a lease naming the
 * process whose life the session shares, so readers see the session open while that process runs.
 */

import * as fs from 'node:fs';
import * as os from 'node:os';
import { InvalidOptionError, SessionLockedError, TrailWriteError } from '../errors.js';
import { removeFile } from '../store/fs-write.js';
import { parseJson } from './native-json.js';
import { readRegularFileStart } from './regular-file.js';

/** When the trail is flushed to stable storage. */
export type FsyncPolicy = 'close' | 'every' | 'none';

// Most lines are under a kilobyte; larger ones get a buffer of their own.
const LINE_BUFFER_BYTES = 16 * 1024;

/** The values {@link FsyncPolicy} may take. */
export const FSYNC_POLICIES: readonly FsyncPolicy[] = ['close', 'every', 'none'];

/** Checks an fsync setting from outside. */
export function parseFsyncPolicy(value: unknown): FsyncPolicy {
  if (typeof value === 'string' && (FSYNC_POLICIES as readonly string[]).includes(value)) return value as FsyncPolicy;
  throw new InvalidOptionError('fsync', value, FSYNC_POLICIES.map((p) => `'${p}'`).join(', '));
}

/** The lock file of a trail. */
export function lockPathOf(trailPath: string): string {
  return `${trailPath}.lock`;
}

/** How a process takes a shared trail ({@link TrailWriter.attach}). */
export interface SharedTrailOptions {
  /** The process whose life the session shares: the session is open while it runs. */
  readonly ownerPid: number;
  /** How long to wait for another process appending to it. */
  readonly waitMs: number;
}

// A process appending to a shared trail holds it for milliseconds; waiting is polled this often.
const APPEND_WAIT_STEP_MS = 2;

/** Appends lines to a new trail, or to a shared one. */
export class TrailWriter {
  private size: number;
  private closed = false;
  /** Lines appended inside {@link together}, not yet written. */
  private held: Buffer[] | null = null;
  private readonly lineBuffer = Buffer.allocUnsafe(LINE_BUFFER_BYTES);

  private constructor(
    readonly path: string,
    readonly sessionId: string,
    private readonly fsync: FsyncPolicy,
    private readonly fd: number,
    /** Whether the trail is shared, and had lines before this process took it. */
    readonly shared: { readonly existed: boolean } | null,
  ) {
    this.size = shared === null ? 0 : fs.fstatSync(fd).size;
  }

  /** Creates the trail at `path` and takes its lock. */
  static create(path: string, sessionId: string, fsync: FsyncPolicy): TrailWriter {
    acquireLock(path, sessionId);
    try {
      // 'ax': a new trail only, so two sessions can never merge into one file.
      return new TrailWriter(path, sessionId, fsync, fs.openSync(path, 'ax', 0o644), null);
    } catch (error) {
      releaseLock(path);
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw new SessionLockedError(sessionId, null);
      throw new TrailWriteError(path, error);
    }
  }

  /**
   * Takes a shared trail, creating it when it is not there: its append lock (waiting while another
   * live process appends), and its lease. A line cut by a process that died mid-write is cut back
   * first: its event was never recorded.
   * @throws SessionLockedError when another process keeps appending past `waitMs`, or an unshared writer holds the trail
   */
  static attach(path: string, sessionId: string, fsync: FsyncPolicy, options: SharedTrailOptions): TrailWriter {
    const appendLock = appendLockPathOf(path);
    const until = Date.now() + options.waitMs;
    for (let holder = tryLock(appendLock, sessionId, path); holder !== null; holder = tryLock(appendLock, sessionId, path)) {
      if (Date.now() > until) throw new SessionLockedError(sessionId, holder.pid);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, APPEND_WAIT_STEP_MS);
    }
    try {
      const lease = readLock(lockPathOf(path));
      if (lease !== null && lease.shared !== true && holderAlive(lease)) throw new SessionLockedError(sessionId, lease.pid);
      const body: LockBody = { pid: options.ownerPid, host: os.hostname(), session_id: sessionId, shared: true };
      // Every hook of one Claude Code session names the same owner: its lease is written once, not once a hook.
      if (lease?.shared !== true || lease.pid !== body.pid || lease.host !== body.host || lease.session_id !== body.session_id) writeLease(path, body);
      const fd = fs.openSync(path, 'a+', 0o644);
      const existed = cutTornTail(fd) > 0;
      return new TrailWriter(path, sessionId, fsync, fd, { existed });
    } catch (error) {
      removeFile(appendLock);
      throw error instanceof SessionLockedError || error instanceof TrailWriteError ? error : new TrailWriteError(path, error);
    }
  }

  /** The trail's size in bytes: where the next line goes. */
  get length(): number {
    return this.size;
  }

  /**
   * Bytes the trail already holds (a shared trail's last line, read back to check what an earlier
   * process saved beside it).
   */
  readBack(position: number, length: number): Buffer {
    const bytes = Buffer.allocUnsafe(length);
    const read = fs.readSync(this.fd, bytes, 0, length, position);
    return bytes.subarray(0, read);
  }

  /**
   * Appends one line (which ends with a newline). On a failed or short write the file is cut back
   * to its last whole line and a {@link TrailWriteError} is thrown: the event is not recorded, and
   * nothing recorded before it is lost.
   */
  append(line: string): void {
    if (this.held !== null) {
      this.held.push(Buffer.from(line, 'utf8'));
      return;
    }
    // Encoding once gives the length to check a short write against, without a second scan; into
    // one reused buffer when the line fits (at most 3 bytes a UTF-16 unit), so a line costs no allocation.
    if (line.length * 3 <= this.lineBuffer.length) this.write(this.lineBuffer, this.lineBuffer.write(line));
    else this.write(Buffer.from(line, 'utf8'));
  }

  /**
   * Runs `appends` with the lines it appends held, then writes them all with one `write`: a
   * crash or a full disk leaves all of them or none, so records that only make sense together
   * (`session.close` and the final checkpoint of a signed session) are never split by one. When
   * `appends` throws, nothing it appended is written.
   * @throws TrailWriteError as {@link append} does, with none of the lines recorded
   */
  together(appends: () => void): void {
    if (this.held !== null) {
      appends();
      return;
    }
    const held: Buffer[] = [];
    this.held = held;
    try {
      appends();
    } finally {
      this.held = null;
    }
    if (held.length > 0) this.write(held.length === 1 ? (held[0] as Buffer) : Buffer.concat(held));
  }

  /** Writes the first `bytes` of `data`. */
  private write(data: Buffer, bytes = data.length): void {
    try {
      const written = fs.writeSync(this.fd, data, 0, bytes);
      if (written !== bytes) throw Object.assign(new Error(`short write: ${written} of ${bytes} bytes`), { code: 'ENOSPC' });
      if (this.fsync === 'every') fs.fsyncSync(this.fd);
    } catch (error) {
      this.cutBack();
      throw new TrailWriteError(this.path, error);
    }
    this.size += bytes;
  }

  /**
   * Gives up a trail whose session could not open: closes it, releases the lock, and removes the
   * file when nothing was written to it, so a failed open leaves no empty trail behind.
   */
  abandon(): void {
    if (this.closed) return;
    this.closed = true;
    fs.closeSync(this.fd);
    if (this.size === 0) removeFile(this.path);
    if (this.shared === null || this.size === 0) releaseLock(this.path);
    if (this.shared !== null) removeFile(appendLockPathOf(this.path));
  }

  /** Flushes (unless fsync is `none`), closes the file and releases the lock (and a shared trail's lease). Idempotent. */
  close(): void {
    this.release(true);
  }

  /**
   * Lets the next process of a shared trail append: flushes as at close and releases the append
   * lock, keeping the lease (the session stays open). On an unshared trail, the same as close.
   */
  detach(): void {
    this.release(this.shared === null);
  }

  private release(ending: boolean): void {
    if (this.closed) return;
    this.closed = true;
    try {
      if (this.fsync !== 'none') fs.fsyncSync(this.fd);
    } catch (error) {
      throw new TrailWriteError(this.path, error);
    } finally {
      fs.closeSync(this.fd);
      if (ending) releaseLock(this.path);
      if (this.shared !== null) removeFile(appendLockPathOf(this.path));
    }
  }

  private cutBack(): void {
    try {
      fs.ftruncateSync(this.fd, this.size);
    } catch {
      // Nothing more can be done here; the reader reports what is left as a torn tail.
    }
  }
}

interface LockBody {
  readonly pid: number;
  readonly host: string;
  readonly session_id: string;
  /** A shared trail's lease: `pid` is the process whose life the session shares. */
  readonly shared?: boolean;
}

/** The append lock of a shared trail. */
export function appendLockPathOf(trailPath: string): string {
  return `${trailPath}.append.lock`;
}

/** Writes a shared trail's lease whole (a staging file and a rename), so a reader never sees half of one. */
function writeLease(trailPath: string, body: LockBody): void {
  const staging = `${lockPathOf(trailPath)}.${process.pid}.tmp`;
  fs.writeFileSync(staging, JSON.stringify(body), { mode: 0o644 });
  fs.renameSync(staging, lockPathOf(trailPath));
}

/** Cuts a shared trail back to its last whole line; returns its size. */
function cutTornTail(fd: number): number {
  const size = fs.fstatSync(fd).size;
  if (size === 0) return 0;
  const tail = Buffer.alloc(Math.min(size, 64 * 1024));
  let end = size;
  // Read backwards until a newline: the last whole line ends there.
  for (let at = size; at > 0; ) {
    const from = Math.max(0, at - tail.length);
    fs.readSync(fd, tail, 0, at - from, from);
    const newline = tail.subarray(0, at - from).lastIndexOf(0x0a);
    if (newline !== -1) {
      end = from + newline + 1;
      break;
    }
    at = from;
    end = 0;
  }
  if (end !== size) fs.ftruncateSync(fd, end);
  return end;
}

function acquireLock(trailPath: string, sessionId: string): void {
  const holder = tryLock(lockPathOf(trailPath), sessionId, trailPath);
  if (holder !== null) throw new SessionLockedError(sessionId, holder.pid);
}

/**
 * Takes a lock file (created exclusively), taking over one whose process is gone.
 * @returns null when taken, else who holds it (pid null when unknown)
 * @throws TrailWriteError when the lock cannot be written at all (naming `forPath`)
 */
export function tryLock(lockPath: string, label: string, forPath: string): { pid: number | null } | null {
  const body: LockBody = { pid: process.pid, host: os.hostname(), session_id: label };
  for (let attempt = 0; attempt < 2; attempt++) {
    if (placeLock(lockPath, JSON.stringify(body), forPath)) return null;
    const holder = readLock(lockPath);
    if (holder !== null && !holderAlive(holder)) {
      // The process that held it is gone (killed): the lock is stale.
      removeFile(lockPath);
      continue;
    }
    return { pid: holder?.pid ?? null };
  }
  return { pid: null };
}

/** Codes of a filesystem that cannot make hard links. */
const NO_LINKS: ReadonlySet<string> = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS']);

/**
 * Creates the lock whole or not at all: its body is written to a file of this process's own, then
 * linked into place, which fails when a lock is there. A lock created empty and filled after (a
 * kill between the two) would name no writer and could never be found stale: every later writer
 * would wait on it for good.
 * @returns false when a lock is already there
 * @throws TrailWriteError when the body cannot be written (a full disk)
 */
function placeLock(lockPath: string, body: string, forPath: string): boolean {
  const staged = `${lockPath}.${process.pid}`;
  try {
    fs.writeFileSync(staged, body, { mode: 0o644 });
    try {
      fs.linkSync(staged, lockPath);
    } catch (error) {
      // A filesystem without hard links: created in place, the narrow window of an empty lock kept.
      if (!NO_LINKS.has(String((error as NodeJS.ErrnoException).code))) throw error;
      fs.writeFileSync(lockPath, body, { flag: 'wx', mode: 0o644 });
    }
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw new TrailWriteError(forPath, error);
  } finally {
    removeFile(staged);
  }
}

function releaseLock(trailPath: string): void {
  removeFile(lockPathOf(trailPath));
}

/** The lock's content, or null when it is unreadable. */
export function readLock(path: string): LockBody | null {
  try {
    // Read as evidence is: a FIFO, a device or a folder named like a lock is refused without
    // blocking (any reader of the folder would hang on it), a symlink is not followed out of the
    // folder, and no more than a lock's length is read.
    const body = parseJson(readRegularFileStart(path, 'lock', MAX_LOCK_BYTES).toString('utf8')) as Partial<LockBody>;
    if (typeof body.pid !== 'number' || typeof body.host !== 'string') return null;
    return { pid: body.pid, host: body.host, session_id: String(body.session_id), ...(body.shared === true ? { shared: true } : {}) };
  } catch {
    return null;
  }
}

// A lock is a line of JSON; anything longer is not one, and is not read whole.
const MAX_LOCK_BYTES = 4096;

/**
 * The writer a trail's lock names, and whether it still lives. A lock from another host counts as
 * alive: its process cannot be checked from here, so it is never taken over nor called abandoned.
 */
export function trailWriter(trailPath: string): { readonly pid: number; readonly alive: boolean } | null {
  const lock = readLock(lockPathOf(trailPath));
  return lock === null ? null : { pid: lock.pid, alive: holderAlive(lock) };
}

function holderAlive(lock: LockBody): boolean {
  return lock.host !== os.hostname() || processIsAlive(lock.pid);
}

/** True when a process with this pid exists (EPERM means it exists but is not ours). */
export function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
