/** `aura pull <id>`: a session of the fleet store written back as files, byte for byte as pushed. */

import * as fs from 'node:fs';
import * as path from 'node:path';
import type { AuraConfig } from '../config/config.js';
import { AuraError, InvalidOptionError } from '../errors.js';
import { commitFiles } from '../export/commit.js';
import { digestOf } from '../spine/hash.js';
import { makeFolder } from '../store/fs-write.js';
import { checkedSessionId, sessionFiles } from '../store/session-files.js';
import { storeUrlFor, type StoreOptions } from './context.js';
import { EXIT, type CommandResult } from './output.js';

/** Options of `pull`. */
export interface PullOptions extends StoreOptions {
  /** The folder to write into (default: the sessions folder). */
  readonly output?: string;
}

/**
 * Writes `{id}.jsonl` and, when it was pushed with one, `{id}.summary.json`. Files already there
 * with the same bytes are left as they are; different ones are never overwritten.
 * @throws InvalidOptionError (no store), NotFoundError, StoreError, AuraError `READ_FAILED` (a different local copy)
 */
export async function pullCommand(sessionKey: string, options: PullOptions, config: AuraConfig): Promise<CommandResult> {
  // A key that is no session id is refused before the store is reached.
  checkedSessionId(sessionKey);
  const url = await storeUrlFor(options, config);
  if (url === null) throw new InvalidOptionError('--store', null, 'a postgres:// URL (or the config key store): where to pull from');
  const { PostgresSource } = await import('../store/postgres/pg-source.js');
  const source = await PostgresSource.open(url);
  const stored = await source.session(sessionKey).finally(() => source.close());
  const dir = path.resolve(options.output ?? config.paths.sessions);
  const files = sessionFiles(dir, stored.sessionId);
  const trail = Buffer.concat(stored.lines as Buffer[]);
  // What was pushed, as its close record (or its last check) says: rows added or taken since are not written back as the session.
  const pushed = stored.closed?.lines ?? stored.pushedLines;
  const problem =
    pushed !== null && pushed !== stored.lines.length
      ? `the store holds ${stored.lines.length} lines of it where ${pushed} were pushed`
      : stored.closed !== null && digestOf([trail]) !== stored.closed.trailSha256
        ? 'its stored lines are not the bytes that were pushed (their digest differs from its close record)'
        : null;
  if (problem !== null) {
    return { exitCode: EXIT.checkFailed, json: { session_id: stored.sessionId, host: stored.host, store: source.label, problem, written: [] }, human: `✗ ${stored.sessionId} not pulled: ${problem} (aura verify store --store names what changed)` };
  }
  const wanted = [
    { path: files.trail, content: trail },
    ...(stored.summary === null ? [] : [{ path: files.summary, content: stored.summary }]),
  ];
  const toWrite = wanted.filter((file) => {
    if (!fs.existsSync(file.path)) return true;
    if (fs.readFileSync(file.path).equals(file.content)) return false;
    throw new AuraError('READ_FAILED', `${file.path} exists with other bytes than the stored session: not overwritten (pull into another folder with -o DIR)`, { data: { path: file.path } });
  });
  makeFolder(dir);
  if (toWrite.length > 0) commitFiles(stored.sessionId, toWrite);
  return {
    exitCode: EXIT.ok,
    json: { session_id: stored.sessionId, host: stored.host, store: source.label, closed: stored.closed !== null, lines: stored.lines.length, files: wanted.map((f) => f.path), written: toWrite.map((f) => f.path) },
    human: `${stored.sessionId} (from ${stored.host}): ${stored.lines.length} lines${stored.closed === null ? ', still open in the store' : ''}\n${wanted.map((f) => `  ${f.path}${toWrite.includes(f) ? '' : ' (already there, identical)'}`).join('\n')}`,
  };
}
