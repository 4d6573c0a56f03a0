/** `aura report show <id>`: the verdict, the findings by severity, the scorecard, the recommendations. */

import type { AuraConfig } from '../config/config.js';
import type { Finding } from '../audit/detector.js';
import { verdictReason } from '../audit/report.js';
import { checkedSessionReport } from '../audit/session-report.js';
import { statusLabel, type SessionStatus } from '../store/session-status.js';
import { givenKeysFor, sessionMaterialFor, type StoreOptions } from './context.js';
import { colors, EXIT, table, type CommandResult } from './output.js';

const SEVERITY_ORDER = ['critical', 'warn', 'info'] as const;

/** Shows a session's report; exit 1 when its verdict is `fail`. */
export async function reportShowCommand(sessionKey: string, options: StoreOptions, config: AuraConfig): Promise<CommandResult> {
  const { files, keys } = await sessionMaterialFor(sessionKey, options, givenKeysFor({}), config);
  const { status, report: { summary, source, stored_by: storedBy, disagreements } } = checkedSessionReport(files, keys, config.values['identity_export_pii'] === true);
  const report = summary.audit_report;
  const verdict = String(report['verdict']);
  const json = {
    session_id: files.sessionId,
    status: status.status,
    status_label: statusLabel(status),
    signatures: status.signatures,
    source,
    stored_by: storedBy,
    summary_agrees: disagreements.length === 0,
    disagreements,
    verdict_reason: verdictReason(verdict, report.findings, summary['conformance']),
    audit_report: report,
  };
  return { exitCode: verdict === 'fail' ? EXIT.checkFailed : EXIT.ok, json, human: describe(files.sessionId, status, summary, source, storedBy, disagreements) };
}

function describe(id: string, status: SessionStatus, summary: Readonly<Record<string, unknown>>, source: string, storedBy: string | null, disagreements: readonly string[]): string {
  const report = summary['audit_report'] as Record<string, unknown> & { findings: readonly Finding[] };
  const verdict = String(report['verdict']).toUpperCase();
  const paint = verdict === 'PASS' ? colors.green : verdict === 'WARN' ? colors.yellow : colors.red;
  const reason = verdictReason(report['verdict'], report.findings, summary['conformance']);
  // A summary beside a session its writer still holds was written while it ran: a snapshot, not a forgery.
  const snapshot = status.status === 'open';
  const lines = [
    `Verdict: ${paint(verdict)}${reason === null ? '' : ` (${reason})`}`,
    `Session ${id} · agent ${String(summary['agent_ref'] ?? '-')} · policy v${String(summary['policy_version'] ?? '-')} · ${String(summary['event_count'] ?? '-')} events`,
    `Status: ${statusLabel(status)} · signatures ${status.signatures}`,
    `Hash chain valid: ${String(report['hash_chain_valid'])}`,
    source === 'trail'
      ? `  (re-checked from the trail${storedBy === null ? '; no stored summary' : `; the stored summary, written by ${storedBy}${snapshot ? ' while it ran' : ''}, ${disagreements.length === 0 ? 'agrees' : snapshot ? 'differs' : colors.red('disagrees')}`})`
      : colors.yellow('  (the trail is missing: shown from the stored summary, not re-checked)'),
    ...disagreements.map((d) => `    - ${d}`),
  ];
  const findings = [...report.findings].sort((a, b) => SEVERITY_ORDER.indexOf(a.severity) - SEVERITY_ORDER.indexOf(b.severity));
  lines.push('', findings.length === 0 ? 'Findings: none' : `Findings (${findings.length}):`);
  if (findings.length > 0) {
    const sev = (s: string): string => (s === 'critical' ? colors.red(s) : s === 'warn' ? colors.yellow(s) : s);
    lines.push(table(['SEVERITY', 'KIND', 'MESSAGE', 'EVENTS'], findings.map((f) => [sev(f.severity), f.kind, f.message.length > 90 ? `${f.message.slice(0, 89)}…` : f.message, f.event_ids.map((e) => e.slice(0, 8)).join(' ')])));
  }
  const scorecard = (report['scorecard'] ?? {}) as Record<string, unknown>;
  lines.push('', 'Scorecard:');
  for (const [section, value] of Object.entries(scorecard)) {
    const facts = value !== null && typeof value === 'object' ? Object.entries(value).map(([k, v]) => `${k} ${String(v)}`).join(', ') : String(value);
    lines.push(`  ${section.padEnd(10)} ${facts}`);
  }
  const recommendations = Array.isArray(report['recommendations']) ? (report['recommendations'] as unknown[]) : [];
  if (recommendations.length > 0) lines.push('', 'Recommendations:', ...recommendations.map((r) => `  - ${String(r)}`));
  return lines.join('\n');
}
