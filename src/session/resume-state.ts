/**
 * What a process of a shared session leaves beside the trail for the next one (`{trail}.resume`),
 * so that the next takes the session up from the trail's last line instead of reading every event
 * and handing it out again: the count, the checkpoint cadence, whether the goal was reached, the
 * approval requests, an observer's stop and the observers' own states. The chain head itself (the
 * last event's hash, id, time and identity trailer) is read from the trail's last line.
 *
 * It is saved under the trail's append lock after the process's last append, and trusted only
 * where it matches the trail's bytes: the trail ends at the offset it was saved at, and the line
 * that ends there is the one it names (its length and SHA-256). Anything else (a process killed
 * before saving, an append by another writer, a trail cut back, a file that is not one this
 * module wrote) leaves the trail to be read whole, as before: the trail stays the one source.
 */

import * as fs from 'node:fs';
import type { ApprovalBook, ApprovalRequest } from '../policy/approvals.js';
import { digestOf } from '../spine/hash.js';
import { isCount } from '../spine/json-shape.js';
import { parseJson } from '../spine/native-json.js';
import { openRegularFile } from '../spine/regular-file.js';
import type { TrailWriter } from '../spine/writer.js';
import { removeFile, replaceWhole } from '../store/fs-write.js';
import type { LoopStop } from './hold.js';
import { pastEventOf, traceParentOf, type PastEvent } from './resume.js';
import type { TraceParent } from './trace-context.js';

const VERSION = 1;
const NEWLINE = 0x0a;
// Approval requests and observers' windows: kilobytes. A larger file is not one saved here.
const MAX_STATE_BYTES = 4 * 1024 * 1024;

/** What the trail's events say of the session, beyond its chain head. */
export interface SavedSession {
  /** Events in the trail. */
  readonly count: number;
  /** Events since the last checkpoint. */
  readonly checkpointSince: number;
  readonly goalReached: boolean;
  readonly traceParent: TraceParent | null;
  readonly approvals: readonly Readonly<ApprovalRequest>[];
  readonly stop: LoopStop | null;
  /** Each observer's saved state, in order. */
  readonly observers: readonly unknown[];
}

/** A shared session as the last process left it: what it saved, and the trail's last event. */
export interface ResumePoint {
  readonly saved: SavedSession;
  readonly last: PastEvent;
}

/** Where a trail's resume state is. */
export function resumePathOf(trailPath: string): string {
  return `${trailPath}.resume`;
}

/**
 * The resume state beside the trail, when it matches the trail as the writer holds it.
 * @returns null when there is none, or it cannot be trusted (read the trail whole)
 * @throws ReadError, SessionClosedError: the trail's last line is not a record of this session, or is its close
 */
export function readResumePoint(writer: TrailWriter, sessionId: string): ResumePoint | null {
  const text = readSmallFile(resumePathOf(writer.path));
  const saved = text === null ? null : parseSaved(text, sessionId, writer.length);
  if (saved === null) return null;
  // The line before the last ends at the byte before it: read that newline too, unless the last line is the first.
  const { offset, tailBytes, tailSha256 } = saved;
  const from = offset - tailBytes - (offset > tailBytes ? 1 : 0);
  const bytes = writer.readBack(from, offset - from);
  if (bytes.length !== offset - from || bytes[bytes.length - 1] !== NEWLINE || (from < offset - tailBytes && bytes[0] !== NEWLINE)) return null;
  const line = bytes.subarray(bytes.length - tailBytes);
  if (digestOf([line]) !== tailSha256) return null;
  const last = pastEventOf(line.subarray(0, line.length - 1).toString('utf8'), saved.session.count, saved.session.count, writer.path, sessionId);
  return { saved: saved.session, last };
}

/**
 * Saves the resume state of a shared trail whose last line is `lastLine` (with its newline), as
 * the writer holds it. Written whole (a staging file, then a rename); a failure leaves the next
 * process to read the trail whole.
 */
export function saveResumeState(writer: TrailWriter, lastLine: string, session: SavedSession): void {
  const line = Buffer.from(lastLine, 'utf8');
  const body = {
    version: VERSION,
    session_id: writer.sessionId,
    offset: writer.length,
    tail: { bytes: line.length, sha256: digestOf([line]) },
    count: session.count,
    checkpoint_since: session.checkpointSince,
    goal_reached: session.goalReached,
    trace_parent: session.traceParent,
    approvals: session.approvals.map(({ request_id, digest, tool, state, principal }) => ({ request_id, digest, tool, state, principal })),
    stop: session.stop,
    observers: session.observers,
  };
  if (!replaceWhole(resumePathOf(writer.path), JSON.stringify(body))) removeResumeState(writer.path);
}

/**
 * Removes the resume state (the session has ended). One that cannot be removed (a folder put in
 * its place) never matches the trail again, which now ends with the close: it must not fail the close.
 */
export function removeResumeState(trailPath: string): void {
  try {
    removeFile(resumePathOf(trailPath));
  } catch {
    // Left behind, and never taken up.
  }
}

/** Puts saved approval requests back into an empty book, each in the state it was in. */
export function restoreApprovals(book: ApprovalBook, requests: readonly Readonly<ApprovalRequest>[]): void {
  for (const saved of requests) {
    const request = book.request(saved.digest, saved.tool, saved.request_id);
    if (saved.state === 'pending') continue;
    book.approve(request.request_id, saved.principal);
    if (saved.state === 'used') book.use(request);
  }
}

/**
 * The text of the file at `path`, or null when it is missing, not a regular file (a FIFO there
 * must not stall the hook) or larger than a resume state ever is.
 */
function readSmallFile(path: string): string | null {
  let fd: number;
  try {
    fd = openRegularFile(path, 'resume state');
  } catch {
    return null;
  }
  try {
    return fs.fstatSync(fd).size > MAX_STATE_BYTES ? null : fs.readFileSync(fd, 'utf8');
  } catch {
    return null;
  } finally {
    fs.closeSync(fd);
  }
}

interface ParsedState {
  readonly session: SavedSession;
  readonly offset: number;
  readonly tailBytes: number;
  readonly tailSha256: string;
}

/** The saved state, read as untrusted input: null unless every field has its shape and it is of this trail at this size. */
function parseSaved(text: string, sessionId: string, trailLength: number): ParsedState | null {
  let value: unknown;
  try {
    value = parseJson(text);
  } catch {
    return null;
  }
  const v = record(value);
  const tail = record(v?.['tail']);
  if (v === null || tail === null || v['version'] !== VERSION || v['session_id'] !== sessionId || v['offset'] !== trailLength) return null;
  const { count, checkpoint_since: since, goal_reached: goal, observers } = v;
  const tailBytes = tail['bytes'];
  const tailSha256 = tail['sha256'];
  if (!isCount(tailBytes) || tailBytes < 1 || tailBytes > trailLength || typeof tailSha256 !== 'string' || !isCount(count) || count < 1 || !isCount(since) || typeof goal !== 'boolean') return null;
  const traceParent = v['trace_parent'] === null ? null : traceParentOf(v['trace_parent']);
  const approvals = Array.isArray(v['approvals']) ? v['approvals'].map(approvalOf) : null;
  const stop = v['stop'] === null ? null : stopOf(v['stop']);
  if ((v['trace_parent'] !== null && traceParent === null) || approvals === null || approvals.includes(null) || (v['stop'] !== null && stop === null) || !Array.isArray(observers)) return null;
  const ids = new Set(approvals.map((request) => request?.request_id));
  if (ids.size !== approvals.length || (stop !== null && !ids.has(stop.request_id))) return null;
  const session: SavedSession = { count, checkpointSince: since, goalReached: goal, traceParent, approvals: approvals as ApprovalRequest[], stop, observers };
  return { session, offset: trailLength, tailBytes, tailSha256 };
}

function record(value: unknown): Partial<Record<string, unknown>> | null {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

const REQUEST_STATES: ReadonlySet<unknown> = new Set(['pending', 'approved', 'used']);

function approvalOf(value: unknown): ApprovalRequest | null {
  const v = record(value);
  if (v === null || typeof v['request_id'] !== 'string' || typeof v['digest'] !== 'string' || typeof v['tool'] !== 'string' || !REQUEST_STATES.has(v['state'])) return null;
  if (v['principal'] !== null && typeof v['principal'] !== 'string') return null;
  return { request_id: v['request_id'], digest: v['digest'], tool: v['tool'], state: v['state'] as ApprovalRequest['state'], principal: v['principal'] as string | null };
}

function stopOf(value: unknown): LoopStop | null {
  const v = record(value);
  if (v === null || typeof v['observer_id'] !== 'string' || typeof v['pattern'] !== 'string' || typeof v['alert_event_id'] !== 'string' || typeof v['request_id'] !== 'string') return null;
  return { observer_id: v['observer_id'], pattern: v['pattern'], alert_event_id: v['alert_event_id'], request_id: v['request_id'] };
}
