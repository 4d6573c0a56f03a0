/** `aura verify chain <path> [--summary F]`: integrity and completeness of one trail. */

import * as fs from 'node:fs';
import { verifyTrail, type ChainReport } from '../spine/verify.js';
import { assertReadable, resolveSessionKey, SESSION_ID_PATTERN } from '../store/session-files.js';
import type { AuraConfig } from '../config/config.js';
import { summarySeal } from '../store/summary-seal.js';
import type { KeyRing } from '../spine/signing.js';
import { colors, EXIT, short, type CommandResult } from './output.js';

/** Options of `verify chain`. */
export interface VerifyChainOptions {
  /** A summary whose seal (`chain` and `seal`, or Aura's `event_count`) the trail must match. */
  readonly summary?: string;
  /** Trusted public keys, or null to leave signatures unchecked. */
  readonly keys: KeyRing | null;
}

/**
 * Verifies a trail given by path, or by session id (then looked up in the sessions folder).
 * Exit 0 when the chain is valid and nothing is wrong; 1 when it is broken, torn, truncated or empty.
 */
export function verifyChainCommand(target: string, options: VerifyChainOptions, config: AuraConfig): CommandResult {
  const path = trailPathOf(target, config);
  const seal = options.summary === undefined ? undefined : summarySeal(options.summary);
  const report = verifyTrail(path, seal, options.keys === null ? {} : { keys: options.keys });
  const ok = report.hash_chain_valid && report.reason === undefined;
  return {
    exitCode: ok ? EXIT.ok : EXIT.checkFailed,
    json: { path, ...report },
    human: describe(path, report, seal !== undefined),
  };
}

function trailPathOf(target: string, config: AuraConfig): string {
  if (fs.lstatSync(target, { throwIfNoEntry: false }) !== undefined || !SESSION_ID_PATTERN.test(target)) return target;
  // A session id names a file of the sessions folder: one that may not be read there is refused.
  const trail = resolveSessionKey(config.paths.sessions, target).trail;
  assertReadable(trail);
  return trail;
}

function describe(path: string, report: ChainReport, sealed: boolean): string {
  const lines: string[] = [];
  if (report.hash_chain_valid && report.reason === undefined) {
    const completeness = report.complete ? `complete${sealed ? ', matches the seal' : ''}` : colors.yellow('incomplete (no session.close: still open, or cut short)');
    lines.push(`${colors.green('✓ hash chain valid')} · ${completeness} · ${report.events} events`);
    const sig = report.signatures;
    if (sig.signed) lines.push(`  signed by ${sig.key_id ?? '-'}: ${sig.checkpoints} checkpoints, ${sig.verified === null ? colors.yellow('signatures not checked (no keys given)') : 'signatures verified'}`);
  } else {
    const where = report.line === undefined ? '' : ` at line ${report.line}`;
    const event = report.event_id === null || report.event_id === undefined ? '' : ` (event ${report.event_id})`;
    const title = report.hash_chain_valid ? `✗ damaged: ${report.reason ?? ''}` : `✗ hash chain broken: ${report.reason ?? ''}`;
    lines.push(`${colors.red(title)}${where}${event}`);
    if (report.message !== undefined) lines.push(`  ${report.message}`);
    lines.push(`  ${report.events} events verified before it`);
  }
  lines.push(`  trail  ${path}`);
  if (report.session_id !== null) lines.push(`  session ${report.session_id}`);
  lines.push(`  head   ${short(report.head_hash)}`);
  return lines.join('\n');
}
