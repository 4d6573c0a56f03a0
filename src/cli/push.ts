/** `aura push [session_id… | --all] [--follow]`: this host's sessions into the fleet store. */

import * as os from 'node:os';
import * as path from 'node:path';
import type { AuraConfig } from '../config/config.js';
import { InvalidOptionError } from '../errors.js';
import type { PushedSession, PushReport } from '../store/push.js';
import { storeUrlFor, type StoreOptions } from './context.js';
import { colors, EXIT, table, type CommandResult } from './output.js';

/** The flags of `push`. */
export interface PushFlags {
  readonly all?: boolean;
  readonly follow?: boolean;
  readonly interval?: string;
  readonly host?: string;
  readonly nice?: string;
}

// What a host's name is written with (DNS names, a Windows machine's, an IPv6 address): it is printed and stored as it is.
const HOST_NAME = /^[A-Za-z0-9._:-]{1,200}$/;

/** How much a push yields the CPU by default: checking a million lines is minutes of every core, which the host's agents need more. */
const DEFAULT_NICE = 10;

/**
 * Pushes; exit 0 when nothing was refused, 1 when a session was refused (the store keeps what it
 * had). With `--follow`, runs until SIGINT or SIGTERM.
 * @throws InvalidOptionError (no store, no sessions named), StoreError (what was committed stays: push again)
 */
export async function pushCommand(ids: readonly string[], flags: PushFlags & StoreOptions, config: AuraConfig): Promise<CommandResult> {
  const url = await storeUrlFor(flags, config);
  if (url === null) throw new InvalidOptionError('--store', flags.store ?? null, 'a postgres:// URL (or the config key store): where to push');
  if (flags.follow !== true && flags.all !== true && ids.length === 0) throw new InvalidOptionError('session_id', null, 'one or more session ids, --all, or --follow');
  if (flags.all === true && ids.length > 0) throw new InvalidOptionError('--all', ids.join(' '), 'either --all or session ids, not both');
  const interval = flags.interval === undefined ? 1000 : Number(flags.interval);
  if (!/^\d+$/.test(flags.interval ?? '1000') || interval < 10) throw new InvalidOptionError('--interval', flags.interval, 'milliseconds between rounds, at least 10');
  const host = flags.host ?? os.hostname();
  if (!HOST_NAME.test(host)) throw new InvalidOptionError('--host', host, "a host name of 1 to 200 letters, digits, '.', '-', '_' or ':'");
  const nice = flags.nice === undefined ? DEFAULT_NICE : Number(flags.nice);
  if (!/^\d+$/.test(flags.nice ?? '0') || nice > 19) throw new InvalidOptionError('--nice', flags.nice, 'a niceness from 0 to 19');
  yieldCpu(nice);
  const { openStore } = await import('../store/postgres/connection.js');
  const { pushSessions, followSessions } = await import('../store/push.js');
  const store = openStore(url, { applicationName: 'aura push' });
  const base = { sessionsDir: config.paths.sessions, sealLog: config.paths.sealLog, anchorLog: config.paths.anchorLog, keysDir: config.paths.keys, host };
  const progress = (session: PushedSession): void => {
    if (flags.follow === true || process.stderr.isTTY === true) process.stderr.write(`aura push: ${session.session_id} ${session.outcome}${session.lines === undefined ? '' : ` (${session.lines} lines)`}${session.message === undefined ? '' : `: ${session.message}`}\n`);
  };
  let report: PushReport;
  try {
    if (flags.follow === true) {
      const stop = new AbortController();
      const abort = (): void => stop.abort();
      process.once('SIGINT', abort);
      process.once('SIGTERM', abort);
      process.stderr.write(`aura push: following ${path.resolve(config.paths.sessions)} into ${store.label} (Ctrl-C to stop)\n`);
      try {
        report = await followSessions(store, { ...base, intervalMs: interval, signal: stop.signal, onSession: progress });
      } finally {
        process.off('SIGINT', abort);
        process.off('SIGTERM', abort);
      }
    } else {
      report = await pushSessions(store, { ...base, ids: flags.all === true ? null : ids, onSession: progress });
    }
  } finally {
    await store.sql.end({ timeout: 5 });
  }
  return { exitCode: report.ok ? EXIT.ok : EXIT.checkFailed, json: report, human: describe(report) };
}

/**
 * Lowers this thread's priority to `nice` (never raises it: a shell's nice stays), before the
 * checking workers start, so they start with it. Where the platform refuses, the push runs as it is.
 */
function yieldCpu(nice: number): void {
  try {
    if (os.getPriority() < nice) os.setPriority(nice);
  } catch {
    // A platform without priorities for a process: nothing to yield.
  }
}

function describe(report: PushReport): string {
  const { counts } = report;
  const lines = [
    `${report.ok ? colors.green('✓ pushed') : colors.red('✗ pushed, with refusals')} to ${report.store} as ${report.host}: ${counts.stored} stored (${report.lines} lines), ${counts.present} already there, ${counts.open} open${counts.open > 0 ? ' (push --follow ships them)' : ''}, ${counts.refused} refused`,
  ];
  const refused = report.sessions.filter((s) => s.outcome === 'refused');
  if (refused.length > 0) lines.push(table(['SESSION', 'REASON', 'DETAIL'], refused.map((s) => [s.session_id, s.reason ?? '', s.message ?? ''])));
  const damaged = report.sessions.filter((s) => s.outcome === 'stored' && s.status === 'damaged');
  if (damaged.length > 0) lines.push(colors.yellow(`  ${damaged.length} stored as damaged (their chain or seal does not verify): ${damaged.map((s) => s.session_id).join(' ')}`));
  return lines.join('\n');
}
