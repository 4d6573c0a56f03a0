/**
 * Conformance of a session against what it declared at open (reference §18.2): the declared
 * rules, the violations recorded on the trail, and approvals left pending. Computed from the
 * trail itself, so a summary rebuilt later agrees with the one written at close.
 */

import type { AuraEvent } from '../spine/record.js';

/** One check of conformance: a declared rule (enforced where tools are called), or a summary check such as `schema`. */
export interface ConformanceCheck {
  readonly type: string;
  readonly rule?: unknown;
  readonly declared?: true;
  readonly passed?: boolean;
  readonly [key: string]: unknown;
}

/** The conformance block of a summary. */
export interface Conformance {
  readonly passed: boolean;
  /** The `constraint.violated` and `session.error` events, whole. */
  readonly violations: readonly AuraEvent[];
  readonly checks: readonly ConformanceCheck[];
  readonly declared_rules: readonly unknown[];
  /** Request ids that were asked for approval and never approved. */
  readonly pending_approvals: readonly string[];
  readonly event_count: number;
  readonly snapshot_hash: string | null;
}

/** Conformance of the events of one session, declared rules taken from its `session.open`. */
export function buildConformance(events: readonly AuraEvent[], snapshotHash: string | null): Conformance {
  const open = events.find((event) => event.kind === 'session.open');
  const declared = open !== undefined && Array.isArray(open.payload['declared_rules']) ? (open.payload['declared_rules'] as unknown[]) : [];
  // Audit-only misses are what the level asked for (record, do not enforce): not failures (§21.17).
  const violations = events.filter((event) => (event.kind === 'constraint.violated' && event.payload['audit_only'] !== true) || event.kind === 'session.error');
  const schemaRules = declared.filter((rule) => ruleType(rule) === 'schema_check');
  const schemaViolations = violations.filter((event) => ruleType(event.payload['rule']) === 'schema_check');
  const pending = pendingApprovals(events);
  return {
    passed: violations.length === 0 && pending.length === 0,
    violations,
    checks: [
      ...declared.map((rule): ConformanceCheck => ({ rule, type: ruleType(rule), declared: true })),
      ...(schemaRules.length === 0
        ? []
        : [
            {
              type: 'schema',
              declared_schema_rules: schemaRules.length,
              tool_calls: events.filter((e) => e.kind === 'tool.call').length,
              tool_results: events.filter((e) => e.kind === 'tool.result').length,
              schema_violations: schemaViolations.length,
              passed: schemaViolations.length === 0,
            } satisfies ConformanceCheck,
          ]),
    ],
    declared_rules: declared,
    pending_approvals: pending,
    event_count: events.length,
    snapshot_hash: snapshotHash,
  };
}

/**
 * Requests never approved, matched by `request_id` (Aura let one approval clear every pending
 * request: reference §21.11).
 */
export function pendingApprovals(events: readonly AuraEvent[]): string[] {
  const requested: string[] = [];
  const approved = new Set<string>();
  for (const event of events) {
    const id = event.payload['request_id'];
    if (typeof id !== 'string') continue;
    if (event.kind === 'constraint.approval_required' && !requested.includes(id)) requested.push(id);
    else if (event.kind === 'constraint.approved') approved.add(id);
  }
  return requested.filter((id) => !approved.has(id));
}

/** A rule's type (`type`, else `kind`, else `unknown`). */
export function ruleType(rule: unknown): string {
  if (rule !== null && typeof rule === 'object') {
    const r = rule as Record<string, unknown>;
    if (typeof r['type'] === 'string') return r['type'];
    if (typeof r['kind'] === 'string') return r['kind'];
  }
  return 'unknown';
}
