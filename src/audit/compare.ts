/**
 * Two sessions side by side (reference §20, with more of what a reviewer asks): verdict,
 * conformance, chain, policy, scorecard, findings by kind and events by kind, each with whether
 * the two agree. Values come from each session's report as `report show` builds it.
 */

import type { SessionReport } from './session-report.js';

/** One compared field. */
export interface Compared<T> {
  readonly a: T;
  readonly b: T;
  readonly same: boolean;
}

/** The comparison of two sessions. */
export interface Comparison {
  readonly session_a: string;
  readonly session_b: string;
  readonly agent_ref: Compared<unknown>;
  readonly audit_verdict: Compared<unknown>;
  readonly conformance: Compared<unknown>;
  readonly hash_chain_valid: Compared<unknown>;
  readonly policy_version: Compared<unknown>;
  readonly snapshot_hash: Compared<unknown> & { readonly same_policy: boolean };
  readonly event_count: { readonly a: number; readonly b: number; readonly delta: number };
  readonly events_by_kind: Readonly<Record<string, Compared<number>>>;
  readonly findings_by_kind: Readonly<Record<string, Compared<number>>>;
  readonly scorecard: Readonly<Record<string, Compared<unknown>>>;
  /** The verdict, findings and policy agree. */
  readonly same: boolean;
}

/** Compares two session reports; `eventsA`/`eventsB` are the kinds of their trails' events (empty when a trail is missing). */
export function compareSessions(a: SessionReport, b: SessionReport, eventsA: readonly string[], eventsB: readonly string[]): Comparison {
  const sa = a.summary;
  const sb = b.summary;
  const field = (x: unknown, y: unknown): Compared<unknown> => ({ a: x ?? null, b: y ?? null, same: JSON.stringify(x ?? null) === JSON.stringify(y ?? null) });
  const counts = (list: readonly string[]): Map<string, number> => list.reduce((map, kind) => map.set(kind, (map.get(kind) ?? 0) + 1), new Map<string, number>());
  const sideBySide = (x: Map<string, number>, y: Map<string, number>): Record<string, Compared<number>> =>
    Object.fromEntries([...new Set([...x.keys(), ...y.keys()])].sort().map((kind) => [kind, { a: x.get(kind) ?? 0, b: y.get(kind) ?? 0, same: (x.get(kind) ?? 0) === (y.get(kind) ?? 0) }]));
  const reportA = sa.audit_report;
  const reportB = sb.audit_report;
  const findings = sideBySide(counts(reportA.findings.map((f) => f.kind)), counts(reportB.findings.map((f) => f.kind)));
  const scoreA = (reportA['scorecard'] ?? {}) as Record<string, unknown>;
  const scoreB = (reportB['scorecard'] ?? {}) as Record<string, unknown>;
  const scorecard = Object.fromEntries([...new Set([...Object.keys(scoreA), ...Object.keys(scoreB)])].map((key) => [key, field(scoreA[key], scoreB[key])]));
  const conformanceOf = (s: Readonly<Record<string, unknown>>): unknown => (s['conformance'] as { passed?: unknown } | null | undefined)?.passed ?? null;
  const snapshot = field(sa['snapshot_hash'], sb['snapshot_hash']);
  const verdict = field(reportA['verdict'], reportB['verdict']);
  const eventCountA = typeof sa['event_count'] === 'number' ? sa['event_count'] : 0;
  const eventCountB = typeof sb['event_count'] === 'number' ? sb['event_count'] : 0;
  return {
    session_a: String(sa['session_id']),
    session_b: String(sb['session_id']),
    agent_ref: field(sa['agent_ref'], sb['agent_ref']),
    audit_verdict: verdict,
    conformance: field(conformanceOf(sa), conformanceOf(sb)),
    hash_chain_valid: field(reportA['hash_chain_valid'], reportB['hash_chain_valid']),
    policy_version: field(sa['policy_version'], sb['policy_version']),
    snapshot_hash: { ...snapshot, same_policy: snapshot.same },
    event_count: { a: eventCountA, b: eventCountB, delta: eventCountB - eventCountA },
    events_by_kind: sideBySide(counts(eventsA), counts(eventsB)),
    findings_by_kind: findings,
    scorecard,
    same: verdict.same && snapshot.same && Object.values(findings).every((f) => f.same),
  };
}
