/**
 * The files of a session in the sessions folder (DESIGN §3), and the one gate through which a
 * session key from outside (CLI argument, MCP parameter) becomes a path: it must be a session id,
 * optionally with one of the session's own file suffixes, so nothing resolves outside the folder.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { describeCause, InvalidSessionIdError, ReadError } from '../errors.js';
import { notRegularFile } from '../spine/regular-file.js';

/** `aura_sess_` + 12 lowercase hex. */
export const SESSION_ID_PATTERN = /^aura_sess_[0-9a-f]{12}$/;

// Longest first: '.otel.jsonl' also ends with '.jsonl'.
const SUFFIXES = ['.summary.json', '.otel.jsonl', '.jsonl'] as const;

/** The paths of one session's files. */
export interface SessionFiles {
  readonly sessionId: string;
  readonly trail: string;
  readonly summary: string;
  readonly otel: string;
}

/** The files of a session with a known-good id. */
export function sessionFiles(sessionsDir: string, sessionId: string): SessionFiles {
  return {
    sessionId,
    trail: path.join(sessionsDir, `${sessionId}.jsonl`),
    summary: path.join(sessionsDir, `${sessionId}.summary.json`),
    otel: path.join(sessionsDir, `${sessionId}.otel.jsonl`),
  };
}

/**
 * Turns an untrusted session key into the session's files.
 * @throws InvalidSessionIdError for anything but `aura_sess_<12 hex>` (with an optional file suffix).
 */
export function resolveSessionKey(sessionsDir: string, key: string): SessionFiles {
  return sessionFiles(sessionsDir, sessionIdOfKey(key));
}

/**
 * The session id an untrusted session key names: `aura_sess_<12 hex>`, with an optional file suffix.
 * @throws InvalidSessionIdError for anything else
 */
export function sessionIdOfKey(key: string): string {
  const suffix = SUFFIXES.find((end) => key.endsWith(end));
  const id = suffix === undefined ? key : key.slice(0, -suffix.length);
  if (!SESSION_ID_PATTERN.test(id)) throw invalidId(key);
  return id;
}

/**
 * An untrusted key that must be a session id, with no file suffix (the fleet store's sessions).
 * @throws InvalidSessionIdError for anything but `aura_sess_<12 hex>`
 */
export function checkedSessionId(key: string): string {
  if (!SESSION_ID_PATTERN.test(key)) throw invalidId(key);
  return key;
}

function invalidId(key: string): InvalidSessionIdError {
  return new InvalidSessionIdError(key, "expected 'aura_sess_' followed by 12 lowercase hex digits");
}

/** A file named like a session's trail that is not read, and why. */
export interface SkippedFile {
  readonly path: string;
  readonly why: string;
}

/** The sessions of a folder, and the files named like trails that are not read. */
export interface SessionFolderScan {
  readonly ids: string[];
  readonly skipped: SkippedFile[];
}

/**
 * The ids of the sessions that have a trail in the folder, sorted; none when there is no folder.
 * @throws ReadError when the folder cannot be read (a file where it should be, no permission)
 */
export function listSessionIds(sessionsDir: string): string[] {
  return scanSessionFolder(sessionsDir).ids;
}

/**
 * The sessions of a folder, sorted, with the files named like a trail that are no session's: a
 * FIFO, a device, a folder, a socket, a symlink loop, or a symlink leading out of the folder
 * (never followed: nothing from outside is read as evidence). Only the type of each is looked at,
 * so nothing here can block.
 * @throws ReadError when the folder cannot be read (a file where it should be, no permission)
 */
export function scanSessionFolder(sessionsDir: string): SessionFolderScan {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(sessionsDir, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { ids: [], skipped: [] };
    throw new ReadError(sessionsDir, error);
  }
  const ids = new Set<string>();
  const skipped: SkippedFile[] = [];
  for (const entry of entries) {
    const name = entry.name;
    if (!name.endsWith('.jsonl') || name.endsWith('.otel.jsonl')) continue;
    const id = name.slice(0, -'.jsonl'.length);
    if (!SESSION_ID_PATTERN.test(id)) continue;
    const file = path.join(sessionsDir, name);
    const refusal = entry.isFile() ? null : refusalOf(file);
    if (refusal === null) ids.add(id);
    else skipped.push({ path: file, why: refusal });
  }
  return { ids: [...ids].sort(), skipped: skipped.sort((a, b) => a.path.localeCompare(b.path)) };
}

/**
 * Why a session's file is not read, or null when it may be: a regular file, or a symlink to one
 * inside the sessions folder (the file's own folder). A missing file is null: its readers say so.
 */
export function refusalOf(file: string): string | null {
  let stats: fs.Stats;
  try {
    stats = fs.lstatSync(file);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? null : describeCause(error);
  }
  if (stats.isSymbolicLink()) {
    let target: string;
    try {
      target = fs.realpathSync(file);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      return code === 'ELOOP' ? 'it is a symlink loop' : code === 'ENOENT' ? 'it is a symlink to nothing' : describeCause(error);
    }
    try {
      const folder = fs.realpathSync(path.dirname(file));
      // Where it leads is not said: the message reaches readers of this folder (aura mcp's tenants),
      // to whom a path outside it is none of their business.
      if (!target.startsWith(folder + path.sep)) return 'it is a symlink leading outside the sessions folder: not followed';
      stats = fs.statSync(target);
    } catch (error) {
      return describeCause(error);
    }
  }
  const refusal = notRegularFile(stats);
  return refusal === null ? null : describeCause(refusal);
}

/**
 * Refuses a session's file that {@link refusalOf} refuses.
 * @throws ReadError naming the file and why
 */
export function assertReadable(file: string): void {
  const refusal = refusalOf(file);
  if (refusal !== null) throw new ReadError(file, new Error(refusal));
}
