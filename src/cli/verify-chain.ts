/**
 * `aura verify chain <path | id> [--summary F]`: one session's status, from its trail, seal and
 * keys, and whether its summary says what its trail says.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import type { AuraConfig } from '../config/config.js';
import { realFolder } from '../config/home.js';
import { NotFoundError, ReadError } from '../errors.js';
import { readTextFile } from '../store/json-file.js';
import { folderMaterial } from '../store/material.js';
import type { SealLogView } from '../store/seal-log.js';
import { summarySeal } from '../store/summary-seal.js';
import type { KeyRing } from '../spine/signing.js';
import { trailLines } from '../spine/trail-lines.js';
import { SESSION_ID_PATTERN, sessionFiles } from '../store/session-files.js';
import { folderSessionStatus, PASSING_STATUSES, sealLogView, statusLabel, type SessionStatus, type SessionStatusRead } from '../store/session-status.js';
import type { ChainReport } from '../spine/verify.js';
import { colors, EXIT, short, type CommandResult } from './output.js';

/** Options of `verify chain`. */
export interface VerifyChainOptions {
  /** A summary whose seal (`chain` and `seal`, or Aura's `event_count`) the trail must match. */
  readonly summary?: string;
  /** Trusted public keys, or null to leave signatures unchecked. */
  readonly keys: KeyRing | null;
}

/**
 * Verifies a session given by trail path or by session id. A trail of the sessions folder (by id,
 * or by a path into it) is checked against its own summary and seal-log entry, unasked, so the
 * command gives the verdict `verify store` gives: a summary (its own, or `--summary`) must also
 * say what the trail says, its verdict and findings re-derived. Exit 0 when the status passes and
 * the summary agrees, and for a trail that verifies but has no seal to be checked against; 1
 * otherwise.
 */
export async function verifyChainCommand(target: string, options: VerifyChainOptions, config: AuraConfig): Promise<CommandResult> {
  const sessionsDir = config.paths.sessions;
  // A session id names the folder's session when it has one, whatever file of that name the
  // current folder holds: a planted look-alike must not be checked in its place.
  const byId = SESSION_ID_PATTERN.test(target) && (fs.lstatSync(path.join(sessionsDir, `${target}.jsonl`), { throwIfNoEntry: false }) !== undefined || fs.lstatSync(target, { throwIfNoEntry: false }) === undefined);
  const trail = byId ? path.join(sessionsDir, `${target}.jsonl`) : target;
  if (!byId && !fs.existsSync(trail)) throw new NotFoundError('trail', trail);
  // A summary named on the command line must be one: refused with its reason, not judged.
  if (options.summary !== undefined) summarySeal(options.summary);
  const named = /^(aura_sess_[0-9a-f]{12})\.jsonl$/.exec(path.basename(trail))?.[1];
  const id = byId ? target : (named ?? firstSessionId(trail) ?? path.basename(trail));
  const folder = path.dirname(path.resolve(trail));
  const ownFolder = sameFolder(folder, sessionsDir);
  // Only a trail under its own name has a summary beside it, and only the folder's own a seal-log entry.
  const inStore = ownFolder && named !== undefined;
  const log = inStore ? sealLogView(config.paths.sealLog, null, config.paths.anchorLog) : null;
  const summary = options.summary ?? (named === undefined ? null : sessionFiles(folder, id).summary);
  // The events are kept for the report only when there is a summary to compare it with.
  const compared = summary !== null && fs.existsSync(summary);
  const status = folderSessionStatus(folder, id, {
    keys: options.keys,
    log,
    trail,
    ...(options.summary !== undefined ? { summary: options.summary } : named === undefined ? { summary: null } : {}),
    ...(compared ? { collectEvents: true } : {}),
  });
  if (status.status === 'missing_trail' && status.seal === null) throw new NotFoundError('trail', trail);
  // A file that cannot be read is an input error here, as for every command given a path.
  if (status.status === 'unreadable') throw status.error ?? new ReadError(trail, new Error(status.message ?? 'unreadable'));
  const chain = status.chain;
  const passing = passes(status, inStore);
  const mismatch = compared && status.trail !== null ? await summaryMismatch(status, { folder, id, trail, summary, log }) : null;
  const ok = passing && mismatch === null;
  const json = {
    path: trail,
    ...(chain ?? {}),
    session_id: id,
    status: status.status,
    status_reason: status.reason,
    status_message: status.message,
    signature_status: status.signatures,
    seal_from: status.seal_from,
    ...(passing || status.reason === null ? {} : { reason: status.reason, message: status.message }),
    ...(mismatch === null ? {} : { summary_mismatch: mismatch }),
  };
  return { exitCode: ok ? EXIT.ok : EXIT.checkFailed, json, human: describe(trail, status, chain, mismatch) };
}

/**
 * How the summary disagrees with the trail, as `verify store` says it, or null. The report's code
 * (the detector, the summary reader) is loaded only here: a trail with no summary beside it, the
 * check an auditor runs on file after file, starts without it.
 */
async function summaryMismatch(status: SessionStatusRead, at: { folder: string; id: string; trail: string; summary: string; log: SealLogView | null }): Promise<string | null> {
  const { summaryDisagreement } = await import('../audit/session-report.js');
  const material = { ...folderMaterial(sessionFiles(at.folder, at.id), at.log), trailName: at.trail, summaryName: at.summary, lines: () => trailLines(at.trail), summaryText: () => readTextFile(at.summary, 'summary') };
  return summaryDisagreement(material, status);
}

/**
 * The status passes, or the trail verifies and nothing says it should have been sealed: a trail
 * outside a sessions folder, given without a summary, has a sound chain and an unchecked extent.
 */
function passes(status: SessionStatus, inStore: boolean): boolean {
  if (PASSING_STATUSES.has(status.status)) return true;
  return !inStore && status.seal === null && (status.reason === 'unsealed' || status.reason === 'incomplete');
}

function sameFolder(a: string, b: string): boolean {
  return realFolder(a) === realFolder(b);
}

/** The session id the trail's first line names, or null. */
function firstSessionId(trail: string): string | null {
  try {
    for (const line of trailLines(trail)) return /"session_id": ?"(aura_sess_[0-9a-f]{12})"/.exec(line.text)?.[1] ?? null;
  } catch {
    return null;
  }
  return null;
}

function describe(trail: string, status: SessionStatus, report: ChainReport | null, mismatch: string | null): string {
  const lines: string[] = [];
  const label = statusLabel(status);
  const good = PASSING_STATUSES.has(status.status);
  const paint = good ? colors.green : status.status === 'unsealed' || status.status === 'incomplete' ? colors.yellow : colors.red;
  lines.push(`${paint(`${good ? '✓' : '✗'} ${label}`)} · signatures ${status.signatures}${status.seal_from === null ? ' · no seal' : ` · seal from the ${status.seal_from === 'seal_log' ? 'seal log' : 'summary'}`}`);
  if (report !== null && report.hash_chain_valid && report.reason === undefined) {
    const completeness = report.complete ? `complete${status.seal === null ? '' : ', matches the seal'}` : colors.yellow('incomplete (no session.close: still open, or cut short)');
    lines.push(`  ${colors.green('hash chain valid')} · ${completeness} · ${report.events} events`);
    const sig = report.signatures;
    if (sig.signed) lines.push(`  signed by ${sig.key_id ?? '-'}: ${sig.checkpoints} checkpoints, ${sig.verified === null ? colors.yellow('signatures not checked (no keys given)') : sig.checked > 0 ? 'signatures verified' : colors.yellow('no signature written yet to check')}`);
  } else if (report !== null) {
    const where = report.line === undefined ? '' : ` at line ${report.line}`;
    const event = report.event_id === null || report.event_id === undefined ? '' : ` (event ${report.event_id})`;
    lines.push(`  ${colors.red(report.hash_chain_valid ? `damaged: ${report.reason ?? ''}` : `hash chain broken: ${report.reason ?? ''}`)}${where}${event}`);
    lines.push(`  ${report.events} events verified before it`);
  }
  if (status.message !== null) lines.push(`  ${status.message}`);
  if (mismatch !== null) lines.push(`  ${colors.red(`✗ ${mismatch}`)}`);
  lines.push(`  trail  ${trail}`);
  lines.push(`  session ${status.session_id}`);
  if (report !== null) lines.push(`  head   ${short(report.head_hash)}`);
  return lines.join('\n');
}
