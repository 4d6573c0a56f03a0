/**
 * Where a session's trail is opened: a new one under a fresh id (another id when the first is
 * taken), or a shared one taken up under its lease (DESIGN §3: one process writes a session).
 */

import { InvalidSessionIdError, SessionLockedError } from '../errors.js';
import { TrailWriter, type FsyncPolicy } from '../spine/writer.js';
import { SESSION_ID_PATTERN, sessionFiles, type SessionFiles } from '../store/session-files.js';
import type { IdSource } from './ids.js';
import type { SharedSessionOptions } from './types.js';

// Three tries at a fresh id: a collision of 48 random bits is already unheard of.
const OPEN_ATTEMPTS = 3;
// A process appending to a shared trail holds it for milliseconds; ten seconds means it is stuck.
const SHARED_WAIT_MS = 10_000;

/** An opened trail and the writer that holds it. */
export interface OpenedTrail {
  readonly files: SessionFiles;
  readonly writer: TrailWriter;
}

export function attachTrail(sessionsDir: string, shared: SharedSessionOptions, fsync: FsyncPolicy): OpenedTrail {
  const files = sessionFiles(sessionsDir, shared.sessionId);
  return { files, writer: TrailWriter.attach(files.trail, files.sessionId, fsync, { ownerPid: shared.ownerPid, waitMs: shared.waitMs ?? SHARED_WAIT_MS }) };
}

export function openTrail(sessionsDir: string, firstId: string, ids: IdSource, fsync: FsyncPolicy): OpenedTrail {
  let id = firstId;
  for (let attempt = 1; ; attempt++) {
    const files = sessionFiles(sessionsDir, id);
    try {
      return { files, writer: TrailWriter.create(files.trail, files.sessionId, fsync) };
    } catch (error) {
      if (!(error instanceof SessionLockedError) || attempt >= OPEN_ATTEMPTS) throw error;
    }
    id = ids.sessionId();
    if (!SESSION_ID_PATTERN.test(id)) throw new InvalidSessionIdError(id, "the id source must give 'aura_sess_' + 12 lowercase hex");
  }
}
