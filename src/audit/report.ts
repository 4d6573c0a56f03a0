/**
 * The audit report of a session (reference §18.3): verdict, scorecard, findings and
 * recommendations, with the chain verified from the file on disk (Aura verified its in-memory
 * copy, so its `hash_chain_valid` was true even for a tampered file: §21.2).
 */

import { objectOf } from '../spine/json-shape.js';
import type { ChainReport } from '../spine/verify.js';
import type { AuraEvent, JsonObject } from '../spine/record.js';
import { kindCount, type TrailDigest } from '../spine/trail-reader.js';
import { ruleType, type Conformance } from './conformance.js';
import { detect, type Finding } from './detector.js';
import { recommendationOf } from './kinds.js';

/** The audit report block of a summary. */
export interface AuditReport {
  readonly verdict: 'pass' | 'warn' | 'fail';
  readonly scorecard: Scorecard;
  readonly findings: readonly Finding[];
  readonly recommendations: readonly string[];
  readonly hash_chain_valid: boolean;
  readonly chain_complete: boolean;
}

export type { Finding } from './detector.js';
export type { Severity } from './kinds.js';

/** Counts over the session. */
export interface Scorecard {
  readonly policy: { declared_rules: number; violations: number; pending_approvals: number; approvals_granted: number };
  readonly tools: { calls: number; denied: number; errors: number; schema_violations: number; capability_audit: number };
  readonly sequencer: { steps_started: number; step_errors: number };
  readonly goal_slo: { goal_drifts: number; schedule_misses: number };
  readonly middleware: { applied: number; pii_redactions: number };
  readonly observers: { alerts: number; loop_cycles: number };
  readonly events: number;
}

const DENYING_RULES = new Set(['deny_tools', 'allow_tools', 'capability_scope', 'schema_check', 'default_tool_policy', 'confirm_before', 'observer_break']);

/** Builds the report from the session's events, its conformance and the chain check of its file. */
export function buildAuditReport(events: readonly AuraEvent[], conformance: Conformance, chain: ChainReport, agent: { agent_ref: string | null; policy_version: string | null }, digest?: TrailDigest): AuditReport {
  const findings = detect({ events, chain, conformance, ...(digest === undefined ? {} : { positions: digest.positions }) });
  return reportOf(findings, conformance, events, chain, agent, digest);
}

/**
 * The verdict of a set of findings (reference §18.3, without its §21.5 bug): `fail` when
 * conformance failed or a finding is critical, `warn` when one is a warning, else `pass`.
 * Informational findings do not lower the verdict.
 */
export function verdictOf(findings: readonly Finding[], conformancePassed: boolean): AuditReport['verdict'] {
  if (!conformancePassed || findings.some((f) => f.severity === 'critical')) return 'fail';
  return findings.some((f) => f.severity === 'warn') ? 'warn' : 'pass';
}

/**
 * Why a verdict is below `pass`, for people: what failed conformance and which findings are
 * critical (a `fail`), or which are warnings (a `warn`); null for a pass. It reads a summary's
 * `conformance` and findings as stored, so it serves Python Aura summaries too.
 */
export function verdictReason(verdict: unknown, findings: readonly Finding[], conformance: unknown): string | null {
  if (verdict !== 'fail' && verdict !== 'warn') return null;
  const kinds = (severity: Finding['severity']): string[] => [...new Set(findings.filter((f) => f.severity === severity).map((f) => f.kind))];
  const parts: string[] = [];
  if (verdict === 'fail') {
    const failed = objectOf(conformance);
    if (failed['passed'] === false) parts.push(`conformance: ${conformanceFailures(failed).join(', ') || 'failed'}`);
    if (kinds('critical').length > 0) parts.push(`critical: ${kinds('critical').join(', ')}`);
  } else if (kinds('warn').length > 0) {
    parts.push(`warn: ${kinds('warn').join(', ')}`);
  }
  return parts.length === 0 ? null : parts.join('; ');
}

/** What failed a conformance block: violations by rule type, approvals left pending, failed checks. */
function conformanceFailures(conformance: JsonObject): string[] {
  const out: string[] = [];
  const violations = Array.isArray(conformance['violations']) ? conformance['violations'].map(objectOf) : [];
  const byRule = new Map<string, number>();
  let errors = 0;
  for (const violation of violations) {
    if (violation['kind'] === 'session.error') errors++;
    else if (violation['kind'] === 'constraint.violated') {
      const type = ruleType(objectOf(violation['payload'])['rule']);
      byRule.set(type, (byRule.get(type) ?? 0) + 1);
    }
  }
  for (const [type, count] of byRule) out.push(`${count} ${type} violation${count === 1 ? '' : 's'}`);
  if (errors > 0) out.push(`${errors} session error${errors === 1 ? '' : 's'}`);
  const pending = Array.isArray(conformance['pending_approvals']) ? conformance['pending_approvals'].length : 0;
  if (pending > 0) out.push(`${pending} approval${pending === 1 ? '' : 's'} pending`);
  for (const check of Array.isArray(conformance['checks']) ? conformance['checks'].map(objectOf) : []) {
    if (check['passed'] !== false) continue;
    if (check['type'] === 'sequencer') {
      // aura's check names its missing steps; Python Aura's names them in its violation.
      const python = Array.isArray(check['violations']) ? objectOf(check['violations'][0]) : {};
      const missing = Array.isArray(check['missing_steps']) ? check['missing_steps'] : Array.isArray(python['missing']) ? python['missing'] : [];
      out.push(missing.length > 0 ? `sequencer steps not completed: ${missing.map(String).join(' ')}` : 'sequencer steps out of declared order');
    } else if (check['type'] === 'goal_slo') {
      const drifts = Number(check['drift_count'] ?? 0);
      const misses = Number(check['miss_count'] ?? 0);
      if (drifts > 0) out.push(`${drifts} goal drift${drifts === 1 ? '' : 's'}`);
      if (misses > 0) out.push(`${misses} schedule miss${misses === 1 ? '' : 'es'}`);
    }
  }
  return out;
}

function reportOf(findings: Finding[], conformance: Conformance, events: readonly AuraEvent[], chain: ChainReport, agent: { agent_ref: string | null; policy_version: string | null }, digest?: TrailDigest): AuditReport {
  const verdict = verdictOf(findings, conformance.passed);
  const recommendations = [...new Set(findings.map((finding) => recommendationOf(finding.kind)))];
  if (verdict === 'pass' && agent.agent_ref !== null && agent.policy_version !== null) {
    recommendations.push(`Agent '${agent.agent_ref}' at policy v${agent.policy_version} passed — archive the session export for compliance records.`);
  }
  return { verdict, scorecard: scorecard(events, conformance, digest), findings, recommendations, hash_chain_valid: chain.hash_chain_valid, chain_complete: chain.complete };
}

function scorecard(events: readonly AuraEvent[], conformance: Conformance, digest?: TrailDigest): Scorecard {
  let violations = 0;
  let denied = 0;
  const calls = kindCount(events, 'tool.call', digest);
  let errors = 0;
  let requested = 0;
  let approved = 0;
  let stepsStarted = 0;
  let stepErrors = 0;
  let schemaViolations = 0;
  let capabilityAudit = 0;
  let drifts = 0;
  let misses = 0;
  let middleware = 0;
  let redactions = 0;
  let alerts = 0;
  let cycles = 0;
  for (const event of events) {
    switch (event.kind) {
      case 'constraint.violated': {
        violations++;
        const type = ruleType(event.payload['rule']);
        const auditOnly = event.payload['audit_only'] === true;
        if (DENYING_RULES.has(type) && !auditOnly) denied++;
        if (type === 'schema_check' && !auditOnly) schemaViolations++;
        if (type === 'capability_scope' && auditOnly) capabilityAudit++;
        break;
      }
      case 'tool.error':
        errors++;
        break;
      case 'constraint.approval_required':
        requested++;
        break;
      case 'constraint.approved':
        approved++;
        break;
      case 'sequencer.step.start':
        stepsStarted++;
        break;
      case 'sequencer.step.end':
        if (event.payload['status'] === 'error') stepErrors++;
        break;
      case 'conformance.drift':
        drifts++;
        break;
      case 'slo.missed':
        misses++;
        break;
      case 'middleware.applied':
        middleware++;
        if (typeof event.payload['redactions'] === 'number') redactions += event.payload['redactions'];
        break;
      case 'observer.alert':
        alerts++;
        if (typeof event.payload['pattern'] === 'string' && event.payload['pattern'] !== 'REASONING_INERTIA') cycles++;
        break;
    }
  }
  return {
    policy: { declared_rules: conformance.declared_rules.length, violations, pending_approvals: requested, approvals_granted: approved },
    tools: { calls, denied, errors, schema_violations: schemaViolations, capability_audit: capabilityAudit },
    sequencer: { steps_started: stepsStarted, step_errors: stepErrors },
    goal_slo: { goal_drifts: drifts, schedule_misses: misses },
    middleware: { applied: middleware, pii_redactions: redactions },
    observers: { alerts, loop_cycles: cycles },
    events: digest?.count ?? events.length,
  };
}
