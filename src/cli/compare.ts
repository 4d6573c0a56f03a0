/** `aura compare <a> <b>`: two sessions side by side; exit 0 when they agree, 1 when they differ. */

import * as fs from 'node:fs';
import type { AuraConfig } from '../config/config.js';
import { compareSessions, type Compared } from '../audit/compare.js';
import { sessionReport } from '../audit/session-report.js';
import { readTrail } from '../spine/trail-reader.js';
import { resolveSessionKey } from '../store/session-files.js';
import { colors, EXIT, table, type CommandResult } from './output.js';

/** Compares two sessions of the sessions folder. */
export function compareCommand(keyA: string, keyB: string, config: AuraConfig): CommandResult {
  const files = [resolveSessionKey(config.paths.sessions, keyA), resolveSessionKey(config.paths.sessions, keyB)] as const;
  const [a, b] = files.map((f) => sessionReport(f)) as [ReturnType<typeof sessionReport>, ReturnType<typeof sessionReport>];
  const kinds = files.map((f) => (fs.existsSync(f.trail) ? readTrail(f.trail).events.map((e) => e.kind) : [])) as [string[], string[]];
  const comparison = compareSessions(a, b, kinds[0], kinds[1]);
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
