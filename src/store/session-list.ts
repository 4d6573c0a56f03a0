/**
 * The sessions folder at a glance: one row a session, from its summary when it has one, else from
 * its trail's first line and its lock. Cheap enough for a folder of thousands: no trail is read
 * whole unless it has no summary, and then only counted.
 */

import { objectOf, stringOf } from '../spine/json-shape.js';
import * as fs from 'node:fs';
import { parseJsonLossless } from '../spine/json-reader.js';
import { openRegularFile } from '../spine/regular-file.js';
import { trailWriter } from '../spine/writer.js';
import { readJsonFile } from './json-file.js';
import { listSessionIds, sessionFiles } from './session-files.js';

/** Where a session stands. */
export type SessionState =
  /** Closed with a summary. */
  | 'closed'
  /** A live process is writing it. */
  | 'open'
  /** Its writer died before closing it. */
  | 'abandoned'
  /** No summary and no writer: closed without export, or its export failed. */
  | 'unexported';

/** One row of the listing. */
export interface SessionListing {
  readonly session_id: string;
  readonly agent_ref: string | null;
  readonly opened_at: string | null;
  readonly events: number;
  readonly verdict: string | null;
  readonly hash_chain_valid: boolean | null;
  readonly state: SessionState;
}

/** Lists the sessions in the folder, oldest first. */
export function listSessions(sessionsDir: string): SessionListing[] {
  const rows = listSessionIds(sessionsDir).map((id) => listingOf(sessionsDir, id));
  return rows.sort((a, b) => (a.opened_at ?? '').localeCompare(b.opened_at ?? '') || a.session_id.localeCompare(b.session_id));
}

function listingOf(sessionsDir: string, sessionId: string): SessionListing {
  const files = sessionFiles(sessionsDir, sessionId);
  const first = firstEvent(files.trail);
  const writer = trailWriter(files.trail);
  const live = writer?.alive === true;
  const summary = !live && fs.existsSync(files.summary) ? summaryFacts(files.summary) : null;
  const payload = objectOf(first['payload']);
  const agentIds = objectOf(first['agent_ids']);
  const agentRef = stringOf(payload['agent_ref']) ?? stringOf(agentIds['agent_ref']);
  if (summary !== null) {
    return {
      session_id: sessionId,
      agent_ref: summary.agent_ref ?? agentRef,
      opened_at: stringOf(first['timestamp']),
      events: summary.events,
      verdict: summary.verdict,
      hash_chain_valid: summary.hash_chain_valid,
      state: 'closed',
    };
  }
  return {
    session_id: sessionId,
    agent_ref: agentRef,
    opened_at: stringOf(first['timestamp']),
    events: countLines(files.trail),
    verdict: null,
    hash_chain_valid: null,
    state: live ? 'open' : writer !== null ? 'abandoned' : 'unexported',
  };
}

function summaryFacts(path: string): { agent_ref: string | null; events: number; verdict: string | null; hash_chain_valid: boolean | null } | null {
  try {
    const summary = objectOf(readJsonFile(path, 'summary').value);
    const report = objectOf(summary['audit_report']);
    return {
      agent_ref: stringOf(summary['agent_ref']),
      events: typeof summary['event_count'] === 'number' ? summary['event_count'] : 0,
      verdict: stringOf(report['verdict']),
      hash_chain_valid: typeof report['hash_chain_valid'] === 'boolean' ? report['hash_chain_valid'] : null,
    };
  } catch {
    // A summary that cannot be read lists as if there were none; `aura export --rebuild` mends it.
    return null;
  }
}

/** The first line of a trail, parsed, or an empty object when it cannot be. */
function firstEvent(path: string): Record<string, unknown> {
  let fd: number;
  try {
    fd = openRegularFile(path, 'trail');
  } catch {
    return {};
  }
  try {
    const buffer = Buffer.alloc(64 * 1024);
    const read = fs.readSync(fd, buffer, 0, buffer.length, 0);
    const end = buffer.indexOf(0x0a);
    const text = buffer.toString('utf8', 0, end < 0 || end > read ? read : end);
    return objectOf(parseJsonLossless(text));
  } catch {
    return {};
  } finally {
    fs.closeSync(fd);
  }
}

function countLines(path: string): number {
  let count = 0;
  const fd = openRegularFile(path, 'trail');
  try {
    const buffer = Buffer.allocUnsafe(1024 * 1024);
    for (;;) {
      const read = fs.readSync(fd, buffer, 0, buffer.length, null);
      if (read === 0) return count;
      let at = buffer.indexOf(0x0a, 0);
      while (at >= 0 && at < read) {
        count++;
        at = buffer.indexOf(0x0a, at + 1);
      }
    }
  } finally {
    fs.closeSync(fd);
  }
}
