/** Builders of real sessions and trails on disk, with fixed ids and times so runs are repeatable. */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { demoCommand } from '../../src/cli/demo.js';
import { resolveConfig } from '../../src/config/config.js';
import { agent, type AgentOptions } from '../../src/session/agent.js';
import type { Clock, IdSource } from '../../src/session/ids.js';
import type { Session, SessionOptions } from '../../src/session/session.js';
import { readCanonicalPairs } from '../../src/spine/json-reader.js';
import { contentHash } from '../../src/spine/hash.js';
import { tempDir } from './temp.js';

/** Ids counting up from 1, so every run writes the same trail. */
export function countingIds(seed = 1): IdSource {
  let n = seed;
  const hex = (width: number): string => (n++).toString(16).padStart(width, '0');
  return { sessionId: () => `aura_sess_${hex(12)}`, eventId: () => hex(32), traceId: () => hex(32) };
}

/** A clock that starts at 2026-01-01T00:00:00 and moves 1.5 ms per reading. */
export function steppingClock(): Clock {
  let micros = Date.UTC(2026, 0, 1) * 1000;
  return () => (micros += 1500);
}

/** A session in a new AURA home, with repeatable ids and times unless told otherwise. */
export function openSession(options: { readonly agent?: AgentOptions; readonly session?: SessionOptions; readonly home?: string; readonly ref?: string } = {}): {
  session: Session;
  home: string;
} {
  const home = options.home ?? tempDir();
  const ag = agent(options.ref ?? 'acme/tester', { home, ...options.agent });
  const session = ag.session({ ids: countingIds(), clock: steppingClock(), ...options.session });
  return { session, home };
}

/** Writes a closed session of a few events and returns its trail path and summary path. */
export async function writeSampleTrail(events = 5): Promise<{ trail: string; summary: string; home: string; sessionId: string }> {
  const { session, home } = openSession();
  for (let i = 0; i < events; i++) session.emit('tool.call', { tool: 'search', args: { q: `query ${i}`, page: i }, score: i + 0.5 });
  const result = await session.close();
  return { trail: result.log_path, summary: result.exports.summary ?? '', home, sessionId: result.session_id };
}

/** The lines of a file (without the final empty one). */
export function lines(file: string): string[] {
  return fs.readFileSync(file, 'utf8').split('\n').filter((line, i, all) => line !== '' || i < all.length - 1);
}

/** Writes lines to a new file beside `like` and returns its path. */
export function writeLines(like: string, name: string, content: readonly string[], trailingNewline = true): string {
  const file = path.join(path.dirname(like), name);
  fs.writeFileSync(file, content.join('\n') + (trailingNewline ? '\n' : ''));
  return file;
}

/**
 * Recomputes every hash of a list of record lines, as an adversary who can write the file would:
 * the result is a valid chain over whatever the lines now hold.
 */
export function rehash(recordLines: readonly string[]): string[] {
  let prev: string | null = null;
  return recordLines.map((line) => {
    const record = JSON.parse(line) as Record<string, unknown>;
    record['prev_hash'] = prev;
    delete record['content_hash'];
    const body = readCanonicalPairs(JSON.stringify({ ...record, prev_hash: null }))
      .filter(([key]) => key !== 'prev_hash')
      .map(([key, value]) => `${JSON.stringify(key)}: ${value}`)
      .join(', ');
    const hash = contentHash(prev, `{${body}}`);
    prev = hash;
    return JSON.stringify({ ...record, content_hash: hash });
  });
}

/**
 * Runs `aura demo` in this process (the command's own code, without starting a CLI process) and
 * returns its session id: a store of demo sessions costs milliseconds, not a process start each.
 */
export async function demoSession(home: string): Promise<string> {
  const result = await demoCommand(resolveConfig({ home }));
  return String((result.json as { session_id: string }).session_id);
}
