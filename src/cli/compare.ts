/** `aura compare <a> <b>`: two sessions side by side; exit 0 when they agree, 1 when they differ. */

import type { AuraConfig } from '../config/config.js';
import { compareSessions, type Compared } from '../audit/compare.js';
import { checkedSessionReport } from '../audit/session-report.js';
import { folderMaterial } from '../store/material.js';
import { resolveSessionKey } from '../store/session-files.js';
import { sealLogView } from '../store/session-status.js';
import { keysFor } from './context.js';
import { colors, EXIT, table, type CommandResult } from './output.js';

/** Compares two sessions of the sessions folder. */
export function compareCommand(keyA: string, keyB: string, config: AuraConfig): CommandResult {
  // Each judged as `report show` judges it: against its seal-log entry and the trusted keys.
  const log = sealLogView(config.paths.sealLog, null, config.paths.anchorLog);
  const keys = keysFor({}, config);
  const [a, b] = [keyA, keyB].map((key) => checkedSessionReport(folderMaterial(resolveSessionKey(config.paths.sessions, key), log), keys)) as [ReturnType<typeof checkedSessionReport>, ReturnType<typeof checkedSessionReport>];
  const kinds = (checked: ReturnType<typeof checkedSessionReport>): string[] => checked.status.trail?.events.map((e) => e.kind) ?? [];
  const comparison = compareSessions(a.report, b.report, kinds(a), kinds(b));
  const row = (name: string, c: Compared<unknown>): string[] => [name, String(c.a), String(c.b), c.same ? '' : colors.yellow('differs')];
  const rows = [
    row('verdict', comparison.audit_verdict),
    row('conformance', comparison.conformance),
    row('hash chain valid', comparison.hash_chain_valid),
    row('agent', comparison.agent_ref),
    row('policy version', comparison.policy_version),
    row('snapshot hash', comparison.snapshot_hash),
    ['events', String(comparison.event_count.a), String(comparison.event_count.b), comparison.event_count.delta === 0 ? '' : `${comparison.event_count.delta > 0 ? '+' : ''}${comparison.event_count.delta}`],
    ...Object.entries(comparison.findings_by_kind).map(([kind, c]) => row(`finding ${kind}`, c)),
    ...Object.entries(comparison.events_by_kind).filter(([, c]) => !c.same).map(([kind, c]) => row(`events ${kind}`, c)),
  ];
  const human = [table(['', comparison.session_a, comparison.session_b, ''], rows), comparison.same ? colors.green('same verdict, findings and policy') : colors.yellow('the sessions differ')].join('\n');
  return { exitCode: comparison.same ? EXIT.ok : EXIT.checkFailed, json: comparison, human };
}
