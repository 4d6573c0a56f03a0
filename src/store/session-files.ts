/**
 * The files of a session in the sessions folder (DESIGN §3), and the one gate through which a
 * session key from outside (CLI argument, MCP parameter) becomes a path: it must be a session id,
 * optionally with one of the session's own file suffixes, so nothing resolves outside the folder.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { InvalidSessionIdError, ReadError } from '../errors.js';

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
  let id = key;
  for (const suffix of SUFFIXES) {
    if (key.endsWith(suffix)) {
      id = key.slice(0, -suffix.length);
      break;
    }
  }
  if (!SESSION_ID_PATTERN.test(id)) {
    throw new InvalidSessionIdError(key, "expected 'aura_sess_' followed by 12 lowercase hex digits");
  }
  return sessionFiles(sessionsDir, id);
}

/**
 * The ids of the sessions that have a trail in the folder, sorted; none when there is no folder.
 * A trail is a file: a folder (or a pipe, a socket) that has a trail's name is no session.
 * @throws ReadError when the folder cannot be read (a file where it should be, no permission)
 */
export function listSessionIds(sessionsDir: string): string[] {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(sessionsDir, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new ReadError(sessionsDir, error);
  }
  const ids = new Set<string>();
  for (const entry of entries) {
    const name = entry.name;
    if (!name.endsWith('.jsonl') || name.endsWith('.otel.jsonl')) continue;
    const id = name.slice(0, -'.jsonl'.length);
    if (!SESSION_ID_PATTERN.test(id)) continue;
    if (entry.isFile() || (entry.isSymbolicLink() && fs.statSync(path.join(sessionsDir, name), { throwIfNoEntry: false })?.isFile() === true)) ids.add(id);
  }
  return [...ids].sort();
}
