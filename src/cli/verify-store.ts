/** `aura verify store`: every session of the sessions folder against the seal log. */

import type { AuraConfig } from '../config/config.js';
import { verifyStore, type StoreReport } from '../store/verify-store.js';
import type { KeyRing } from '../spine/signing.js';
import { colors, EXIT, table, type CommandResult } from './output.js';

/** Options of `verify store`. */
export interface VerifyStoreCommandOptions {
  readonly keys: KeyRing | null;
  readonly anchorLog: string | null;
}

/** Verifies the store; exit 0 when nothing is edited or missing, else 1. */
export function verifyStoreCommand(config: AuraConfig, options: VerifyStoreCommandOptions): CommandResult {
  const progress = process.stderr.isTTY === true;
  const report = verifyStore({
    sessionsDir: config.paths.sessions,
    sealLog: config.paths.sealLog,
    anchorLog: options.anchorLog,
    keys: options.keys,
    ...(progress ? { onProgress: (done: number, total: number) => process.stderr.write(`\rverifying sessions ${done}/${total}${done === total ? '\n' : ''}`) } : {}),
  });
  return { exitCode: report.ok ? EXIT.ok : EXIT.checkFailed, json: report, human: describe(report, options.keys !== null) };
}

function describe(report: StoreReport, signed: boolean): string {
  const { counts } = report;
  const lines = [
    `${report.ok ? colors.green('✓ store verified') : colors.red('✗ store has problems')} · ${report.sessions.length} sessions: ${counts.verified} verified, ${counts.open} open, ${counts.unsealed} unsealed, ${counts.damaged} damaged, ${counts.missing_trail} missing`,
    `  seal log  ${report.seal_log.path}: ${report.seal_log.entries} seals, ${report.seal_log.valid ? 'chain valid' : colors.red(report.seal_log.message ?? 'broken')}`,
  ];
  if (report.anchor !== null) {
    const state = report.anchor.valid && report.anchor.matches ? 'matches the seal log' : colors.red(report.anchor.message ?? 'differs');
    lines.push(`  anchor    ${report.anchor.path}: ${state}`);
  }
  if (!signed) lines.push(colors.yellow('  signatures not checked: no keys (give --keys DIR or --public-key FILE, ideally a copy kept off this machine)'));
  const problems = report.sessions.filter((s) => s.status !== 'verified' && s.status !== 'open');
  if (problems.length > 0) lines.push(table(['SESSION', 'STATUS', 'REASON', 'DETAIL'], problems.map((s) => [s.session_id, s.status, s.reason ?? '', s.message ?? ''])));
  return lines.join('\n');
}
