/** `aura logs <id> [--kind K] [--since T]`: the timeline of a session, one event a line. */

import type { AuraConfig } from '../config/config.js';
import { InvalidOptionError } from '../errors.js';
import { compileGlob, GlobSyntaxError } from '../policy/glob.js';
import { readTrail } from '../spine/trail-reader.js';
import { assertReadable, resolveSessionKey } from '../store/session-files.js';
import { objectOf } from '../spine/json-shape.js';
import { EXIT, printable, type CommandResult } from './output.js';

const ISO_TIME = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/** Filters of `logs`. */
export interface LogsOptions {
  /** A kind, or a glob such as `tool.*`. */
  readonly kind?: string;
  /** Only events at or after this ISO 8601 time. */
  readonly since?: string;
}

/** Lists the session's events; `--json` gives the events themselves. */
export function logsCommand(sessionKey: string, options: LogsOptions, config: AuraConfig): CommandResult {
  const files = resolveSessionKey(config.paths.sessions, sessionKey);
  let kind: ((k: string) => boolean) | null = null;
  if (options.kind !== undefined) {
    try {
      kind = compileGlob(options.kind).test;
    } catch (error) {
      if (error instanceof GlobSyntaxError) throw new InvalidOptionError('--kind', options.kind, `a kind or a glob (${error.message})`);
      throw error;
    }
  }
  // Date.parse alone takes "-5" or "5" for years: only an ISO 8601 date or time is a --since.
  const since = options.since === undefined ? null : ISO_TIME.test(options.since) ? Date.parse(options.since) : Number.NaN;
  if (since !== null && Number.isNaN(since)) throw new InvalidOptionError('--since', options.since, 'an ISO 8601 time such as 2026-12-02T10:00:00Z');
  assertReadable(files.trail);
  const { events, chain } = readTrail(files.trail);
  // A trail that does not verify may hold fields of any type: they are shown as text.
  const shown = events.filter((e) => (kind === null || kind(String(e.kind))) && (since === null || Date.parse(String(e.timestamp)) >= since));
  const lines = shown.map((e) => printable(`${String(e.timestamp).slice(0, 26)}  ${String(e.kind).padEnd(28)}  ${gist(objectOf(e.payload))}`));
  if (chain.reason !== undefined) lines.push(`(the chain does not verify: ${chain.reason} at line ${String(chain.line)}; run aura verify chain)`);
  return { exitCode: EXIT.ok, json: { session_id: files.sessionId, events: shown, hash_chain_valid: chain.hash_chain_valid }, human: lines.join('\n') };
}

/** A one-line gist of a payload: its first few keys and short values. */
function gist(payload: Readonly<Record<string, unknown>>): string {
  const parts = Object.entries(payload)
    .slice(0, 4)
    .map(([key, value]) => `${key}=${short(value)}`);
  return parts.join(' ');
}

function short(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value) ?? String(value);
  return text.length > 40 ? `${text.slice(0, 39)}…` : text;
}
