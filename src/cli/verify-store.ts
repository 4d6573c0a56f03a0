/** `aura verify store`: every session of the sessions folder against the seal log. */

import type { AuraConfig } from '../config/config.js';
import type { FleetStoreReport } from '../store/postgres/verify.js';
import { verifyStore, type StoreReport, type StoreStatus } from '../store/verify-store.js';
import type { KeyRing } from '../spine/signing.js';
import { readerKeys, storeUrlFor, type StoreOptions } from './context.js';
import { colors, EXIT, skippedLines, table, type CommandResult } from './output.js';

/** Options of `verify store`. */
export interface VerifyStoreCommandOptions extends StoreOptions {
  /** The keys the reader named; the sessions folder falls back on the home's, the store on each host's. */
  readonly keys: KeyRing | null;
  readonly anchorLog: string | null;
}

/** Verifies the sessions folder, or the fleet store; exit 0 when nothing is edited or missing, else 1. */
export async function verifyStoreCommand(config: AuraConfig, options: VerifyStoreCommandOptions): Promise<CommandResult> {
  const progress = process.stderr.isTTY === true;
  const onProgress = (done: number, total: number): void => {
    process.stderr.write(`\rverifying sessions ${done}/${total}${done === total ? '\n' : ''}`);
  };
  const url = await storeUrlFor(options, config);
  if (url !== null) {
    const { openStore } = await import('../store/postgres/connection.js');
    const { requireSchema } = await import('../store/postgres/schema.js');
    const { verifyFleetStore } = await import('../store/postgres/verify.js');
    const store = openStore(url, { applicationName: 'aura verify store', max: 2 });
    try {
      await requireSchema(store.sql, store.label);
      const report = await verifyFleetStore(store.sql, store.label, options.keys, progress ? onProgress : undefined);
      return { exitCode: report.ok ? EXIT.ok : EXIT.checkFailed, json: report, human: describeFleet(report) };
    } finally {
      await store.sql.end({ timeout: 5 });
    }
  }
  const report = verifyStore({
    sessionsDir: config.paths.sessions,
    sealLog: config.paths.sealLog,
    anchorLog: options.anchorLog,
    keys: readerKeys({ kind: 'folder' }, options.keys, config),
    ...(progress ? { onProgress } : {}),
  });
  return { exitCode: report.ok ? EXIT.ok : EXIT.checkFailed, json: report, human: describe(report, options.keys !== null) };
}

function describe(report: StoreReport, signed: boolean): string {
  const { counts } = report;
  const lines = [
    `${report.ok ? colors.green('✓ store verified') : colors.red('✗ store has problems')} · ${tally(report.sessions.length, counts)}${disagreeing(report.sessions)}`,
    `  seal log  ${report.seal_log.path}: ${report.seal_log.entries} seals, ${report.seal_log.valid ? 'chain valid' : colors.red(report.seal_log.message ?? 'broken')}`,
  ];
  if (report.anchor !== null) {
    const state = report.anchor.valid && report.anchor.matches ? 'matches the seal log' : colors.red(report.anchor.message ?? 'differs');
    lines.push(`  anchor    ${report.anchor.path}: ${state}`);
  }
  if (!signed) lines.push(colors.yellow('  signatures not checked: no keys (give --keys DIR or --public-key FILE, ideally a copy kept off this machine)'));
  const problems = report.sessions.filter(isListed);
  if (problems.length > 0) lines.push(table(['SESSION', 'STATUS', 'REASON', 'DETAIL'], problems.map((s) => [s.session_id, s.status, ...problemOf(s)])));
  lines.push(...skippedLines(report.skipped ?? []));
  return lines.join('\n');
}

function describeFleet(report: FleetStoreReport): string {
  const { counts } = report;
  const lines = [
    `${report.ok ? colors.green('✓ store verified') : colors.red('✗ store has problems')} · ${report.store} · ${tally(report.sessions.length, counts)}${disagreeing(report.sessions)}`,
    report.keys_from === 'given' ? '  signatures checked against the keys given' : colors.yellow('  signatures checked against the keys the hosts pushed (give --keys DIR or --public-key FILE to check against your own copy)'),
  ];
  if (report.refusals > 0) lines.push(colors.yellow(`  ${report.refusals} pushes were refused (the stored sessions were kept): see the findings channel, PUSH_REFUSED`));
  if (report.gaps.length > 0) {
    lines.push(colors.red(`  ${report.gaps.length} seals link to a seal the store does not hold (a session never pushed, or deleted from the store):`));
    lines.push(table(['SESSION', 'HOST', 'MISSING SEAL'], report.gaps.map((g) => [g.session_id, g.host, `${g.prev_hash.slice(0, 12)}…`])));
  }
  const problems = report.sessions.filter(isListed);
  if (problems.length > 0) lines.push(table(['SESSION', 'HOST', 'STATUS', 'REASON', 'DETAIL'], problems.map((s) => [s.session_id, s.host, s.status, ...problemOf(s)])));
  return lines.join('\n');
}

/** How many sessions, and how many of each status they have (those none has left out): `3 sessions: 2 verified, 1 intact`. */
function tally(total: number, counts: Readonly<Record<StoreStatus, number>>): string {
  const each = Object.entries(counts).filter(([, n]) => n > 0).map(([status, n]) => `${n} ${status === 'missing_trail' ? 'missing' : status}`);
  return `${total} ${total === 1 ? 'session' : 'sessions'}${each.length === 0 ? '' : `: ${each.join(', ')}`}`;
}

/** The header's word on summaries that disagree with their trails, when any do. */
function disagreeing(sessions: readonly { readonly summary_mismatch?: string }[]): string {
  const n = sessions.filter((s) => s.summary_mismatch !== undefined).length;
  return n === 0 ? '' : `; ${n} ${n === 1 ? 'summary disagrees' : 'summaries disagree'} with ${n === 1 ? 'its trail' : 'their trails'}`;
}

/** A session the table lists: any but a verified or open one, and one whose summary disagrees with its trail. */
function isListed(session: { readonly status: StoreStatus; readonly summary_mismatch?: string }): boolean {
  return (session.status !== 'verified' && session.status !== 'open') || session.summary_mismatch !== undefined;
}

/** A session's reason and detail: its status's, then how its summary disagrees with its trail. */
function problemOf(session: { readonly reason?: string; readonly message?: string; readonly summary_mismatch?: string }): [string, string] {
  const reasons = [session.reason, session.summary_mismatch === undefined ? undefined : 'summary_mismatch'].filter((r) => r !== undefined);
  const details = [session.message, session.summary_mismatch].filter((d) => d !== undefined);
  return [reasons.join(', '), details.join('; ')];
}
