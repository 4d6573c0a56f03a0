/**
 * Conformance of a session against what it declared at open (reference §18.2): the declared
 * rules, the violations recorded on the trail, and approvals left pending. Computed from the
 * trail itself, so a summary rebuilt later agrees with the one written at close.
 */

import type { AuraEvent } from '../spine/record.js';
import { kindCount, type TrailDigest } from '../spine/trail-reader.js';

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

/**
 * Conformance of the events of one session, declared rules and steps taken from its `session.open`.
 * @param declaredSteps the declared sequencer steps when the trail does not hold them: Python Aura
 *   records them only in its summary, whose `declared_steps` the caller passes here
 * @param digest when `events` are a digest's: the counts of the events it did not keep
 */
export function buildConformance(events: readonly AuraEvent[], snapshotHash: string | null, declaredSteps: readonly string[] | null = null, digest?: TrailDigest): Conformance {
  const open = events.find((event) => event.kind === 'session.open');
  const declared = open !== undefined && Array.isArray(open.payload['declared_rules']) ? (open.payload['declared_rules'] as unknown[]) : [];
  // Audit-only misses are what the level asked for (record, do not enforce): not failures (§21.17).
  const violations = events.filter((event) => (event.kind === 'constraint.violated' && event.payload['audit_only'] !== true) || event.kind === 'session.error');
  const schemaRules = declared.filter((rule) => ruleType(rule) === 'schema_check');
  const schemaViolations = violations.filter((event) => ruleType(event.payload['rule']) === 'schema_check');
  const pending = pendingApprovals(events);
  const trailSteps = declaredStepsOf(open?.payload['sequencer']);
  const sequencer = sequencerCheck(trailSteps ?? declaredSteps, events, trailSteps === null && declaredSteps !== null);
  const goalSlo = goalSloCheck(events);
  return {
    passed: violations.length === 0 && pending.length === 0 && sequencer?.passed !== false && goalSlo === null,
    violations,
    checks: [
      ...declared.map((rule): ConformanceCheck => ({ rule, type: ruleType(rule), declared: true })),
      ...(schemaRules.length === 0
        ? []
        : [
            {
              type: 'schema',
              declared_schema_rules: schemaRules.length,
              tool_calls: kindCount(events, 'tool.call', digest),
              tool_results: kindCount(events, 'tool.result', digest),
              schema_violations: schemaViolations.length,
              passed: schemaViolations.length === 0,
            } satisfies ConformanceCheck,
          ]),
      ...(sequencer === null ? [] : [sequencer]),
      ...(goalSlo === null ? [] : [goalSlo]),
    ],
    declared_rules: declared,
    pending_approvals: pending,
    event_count: digest?.count ?? events.length,
    snapshot_hash: snapshotHash,
  };
}

/**
 * Declared sequencer steps against the trail (reference §18.2, without the §16.5 flaws): each
 * declared step has a successful (or skipped) end, and the steps first started in declared order.
 * Retries and re-runs after an approval do not fail it.
 */
function sequencerCheck(declared: readonly string[] | null, events: readonly AuraEvent[], fromSummary: boolean): ConformanceCheck | null {
  if (declared === null || declared.length === 0) return null;
  const completed = events.filter((e) => e.kind === 'sequencer.step.end' && (e.payload['status'] === 'ok' || e.payload['status'] === 'skipped')).map((e) => e.step_id ?? String(e.payload['step_id']));
  const started: string[] = [];
  for (const event of events) {
    const id = event.step_id ?? String(event.payload['step_id']);
    if (event.kind === 'sequencer.step.start' && declared.includes(id) && !started.includes(id)) started.push(id);
  }
  const missing = declared.filter((id) => !completed.includes(id));
  const orderOk = started.every((id, i) => id === declared.filter((d) => started.includes(d))[i]);
  return {
    type: 'sequencer',
    declared_steps: declared,
    ...(fromSummary ? { declared_in: 'summary' } : {}),
    completed_steps: completed,
    missing_steps: missing,
    order_ok: orderOk,
    passed: missing.length === 0 && orderOk,
  };
}

/** The ids of a declared `sequencer: {steps: [...]}`, or null when it declares none. */
function declaredStepsOf(sequencer: unknown): string[] | null {
  const steps = (sequencer as { steps?: unknown } | null | undefined)?.steps;
  return Array.isArray(steps) && steps.length > 0 ? steps.map((step) => String((step as { id?: unknown }).id)) : null;
}

/** Goal drift and schedule misses fail conformance (reference §18.2). */
function goalSloCheck(events: readonly AuraEvent[]): ConformanceCheck | null {
  const misses = events.filter((e) => e.kind === 'conformance.drift' || e.kind === 'slo.missed');
  if (misses.length === 0) return null;
  return {
    type: 'goal_slo',
    passed: false,
    drift_count: misses.filter((e) => e.kind === 'conformance.drift').length,
    miss_count: misses.filter((e) => e.kind === 'slo.missed').length,
    violations: misses.map((e) => ({ kind: e.kind, message: e.payload['reason'] ?? null, event_id: e.event_id })),
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
