/**
 * Approvals handed to a live session from another process. A trail has one writer (DESIGN §3), so
 * `aura approve` never touches it: it appends one line to `{id}.approvals.jsonl` beside the trail,
 * under a lock file taken as the writer takes its own, and the process writing the session (the
 * proxy) reads new lines before each guarded call and records them through `session.approve()`.
 * The approval is bound to the call digest the request holds (DESIGN §7), checked here against the
 * trail before anything is handed over.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { ApprovalError, InvalidOptionError, NotFoundError, ReadError, SessionClosedError, SessionLockedError, TrailWriteError } from '../errors.js';
import { objectOf, stringOf } from '../spine/json-shape.js';
import { trailLines } from '../spine/trail-lines.js';
import { trailWriter, tryLock } from '../spine/writer.js';
import { resolveSessionKey, type SessionFiles } from './session-files.js';
import { parseJsonStrict, parseLineText } from '../spine/fast-record.js';
import { removeFile } from './fs-write.js';

/** One handed-over approval, as a line of the hand-off file. */
export interface HandedApproval {
  readonly request_id: string;
  readonly principal: string;
  readonly approved_at: string;
}

/** What `aura approve` handed over. */
export interface ApprovalHandoff extends HandedApproval {
  readonly session_id: string;
  readonly tool: string | null;
  readonly digest: string | null;
  readonly path: string;
}

// Hand-offs are rare and quick: a lock held longer than this belongs to a stuck process.
const LOCK_TRIES = 100;
const LOCK_WAIT_MS = 20;
const MAX_TEXT = 256;

/** The hand-off file of a session. */
export function handoffPathOf(files: SessionFiles): string {
  return path.join(path.dirname(files.trail), `${files.sessionId}.approvals.jsonl`);
}

/**
 * Hands an approval of `requestId` to the live session `sessionKey`.
 * @throws InvalidSessionIdError (a key that is not a session id), NotFoundError (no such trail),
 *   SessionClosedError (closed, or no live writer), ApprovalError (never requested, already approved or used),
 *   InvalidOptionError (empty request id or principal), SessionLockedError (the hand-off file stays locked)
 */
export function handOffApproval(sessionsDir: string, sessionKey: string, requestId: string, principal: string): ApprovalHandoff {
  const files = resolveSessionKey(sessionsDir, sessionKey);
  if (requestId === '' || requestId.length > MAX_TEXT) throw new InvalidOptionError('request_id', requestId, `a request id of 1 to ${MAX_TEXT} characters, as the refused call named it`);
  if (principal.trim() === '' || principal.length > MAX_TEXT) throw new InvalidOptionError('--principal', principal, `who approves, 1 to ${MAX_TEXT} characters`);
  if (!fs.existsSync(files.trail)) throw new NotFoundError('session', files.trail);
  const state = requestState(files.trail, requestId);
  if (state.closed || trailWriter(files.trail)?.alive !== true) throw new SessionClosedError(files.sessionId, `approve ${requestId}: ${state.closed ? 'it has ended' : 'no live process writes it'}`);
  if (state.requested === null) throw new ApprovalError(requestId, 'unknown_request');
  if (state.used) throw new ApprovalError(requestId, 'already_used');
  if (state.approved) throw new ApprovalError(requestId, 'already_approved');

  const file = handoffPathOf(files);
  const lock = `${file}.lock`;
  acquire(lock, files.sessionId, file);
  try {
    if (readHandoffs(file).some((a) => a.request_id === requestId)) throw new ApprovalError(requestId, 'already_approved');
    const approval: HandedApproval = { request_id: requestId, principal, approved_at: new Date().toISOString() };
    try {
      fs.appendFileSync(file, `${JSON.stringify(approval)}\n`, { mode: 0o644 });
    } catch (error) {
      throw new TrailWriteError(file, error);
    }
    return { session_id: files.sessionId, ...approval, tool: state.requested.tool, digest: state.requested.digest, path: file };
  } finally {
    removeFile(lock);
  }
}

/** Reads a session's hand-off file from where the last read stopped: the approvals not yet taken. */
export class ApprovalInbox {
  private offset = 0;

  constructor(readonly path: string) {}

  /** New whole lines since the last call (a line still being written waits for the next). */
  take(): HandedApproval[] {
    const size = fs.statSync(this.path, { throwIfNoEntry: false })?.size ?? 0;
    if (size <= this.offset) return [];
    const fd = fs.openSync(this.path, 'r');
    let text: string;
    try {
      const bytes = Buffer.alloc(size - this.offset);
      fs.readSync(fd, bytes, 0, bytes.length, this.offset);
      const end = bytes.lastIndexOf(0x0a) + 1;
      text = bytes.subarray(0, end).toString('utf8');
      this.offset += end;
    } finally {
      fs.closeSync(fd);
    }
    return parseHandoffs(text);
  }
}

function readHandoffs(file: string): HandedApproval[] {
  try {
    return parseHandoffs(fs.readFileSync(file, 'utf8'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new ReadError(file, error);
  }
}

/** Lines of a hand-off file; one that is not a well-formed approval is skipped (it releases nothing). */
function parseHandoffs(text: string): HandedApproval[] {
  const out: HandedApproval[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    let value: Record<string, unknown>;
    try {
      value = objectOf(parseJsonStrict(line));
    } catch {
      continue;
    }
    const requestId = stringOf(value['request_id']);
    const principal = stringOf(value['principal']);
    if (requestId !== null && principal !== null) out.push({ request_id: requestId, principal, approved_at: stringOf(value['approved_at']) ?? '' });
  }
  return out;
}

interface RequestState {
  requested: { tool: string | null; digest: string | null } | null;
  approved: boolean;
  used: boolean;
  closed: boolean;
}

/** What the trail says of a request (untrusted file: a line that is not JSON says nothing). */
function requestState(trail: string, requestId: string): RequestState {
  const state: RequestState = { requested: null, approved: false, used: false, closed: false };
  for (const line of trailLines(trail)) {
    let event: Record<string, unknown>;
    try {
      event = objectOf(parseLineText(line.text));
    } catch {
      continue;
    }
    const payload = objectOf(event['payload']);
    switch (event['kind']) {
      case 'constraint.approval_required':
        if (payload['request_id'] === requestId) state.requested = { tool: stringOf(objectOf(objectOf(payload['pending_event'])['payload'])['tool']), digest: stringOf(payload['digest']) };
        break;
      case 'constraint.violated': {
        // A session an observer stopped waits for the approval of the stop's own request.
        const rule = objectOf(payload['rule']);
        if (rule['type'] === 'observer_break' && rule['request_id'] === requestId) state.requested = { tool: stringOf(objectOf(objectOf(payload['event'])['payload'])['tool']), digest: null };
        break;
      }
      case 'constraint.approved':
        if (payload['request_id'] === requestId) state.approved = true;
        break;
      case 'tool.call':
        if (objectOf(payload['approval'])['request_id'] === requestId) state.used = true;
        break;
      case 'session.close':
        state.closed = true;
        break;
    }
  }
  return state;
}

function acquire(lock: string, label: string, file: string): void {
  for (let attempt = 0; attempt < LOCK_TRIES; attempt++) {
    const holder = tryLock(lock, label, file);
    if (holder === null) return;
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, LOCK_WAIT_MS);
  }
  throw new SessionLockedError(label, null);
}
