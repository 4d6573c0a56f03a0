/**
 * The audit report of a session (reference §18.3): verdict, scorecard, findings and
 * recommendations, with the chain verified from the file on disk (Aura verified its in-memory
 * copy, so its `hash_chain_valid` was true even for a tampered file: §21.2).
 */

import type { ChainReport } from '../spine/verify.js';
import type { AuraEvent } from '../spine/record.js';
import { ruleType, type Conformance } from './conformance.js';

/** How bad a finding is (DESIGN §4). */
export type Severity = 'critical' | 'warn' | 'info';

/** One finding: a stable kind, a static severity, the events it rests on. */
export interface Finding {
  readonly kind: string;
  readonly severity: Severity;
  readonly message: string;
  readonly event_ids: readonly string[];
  readonly [key: string]: unknown;
}

/** The audit report block of a summary. */
export interface AuditReport {
  readonly verdict: 'pass' | 'warn' | 'fail';
  readonly scorecard: Scorecard;
  readonly findings: readonly Finding[];
  readonly recommendations: readonly string[];
  readonly hash_chain_valid: boolean;
  readonly chain_complete: boolean;
}

/** Counts over the session. */
export interface Scorecard {
  readonly policy: { declared_rules: number; violations: number; pending_approvals: number; approvals_granted: number };
  readonly tools: { calls: number; denied: number; errors: number; schema_violations: number; capability_audit: number };
  readonly sequencer: { steps_started: number; step_errors: number };
  readonly events: number;
}

const DENYING_RULES = new Set(['deny_tools', 'allow_tools', 'capability_scope', 'schema_check', 'default_tool_policy', 'confirm_before']);

/** Builds the report from the session's events, its conformance and the chain check of its file. */
export function buildAuditReport(events: readonly AuraEvent[], conformance: Conformance, chain: ChainReport, agent: { agent_ref: string | null; policy_version: string | null }): AuditReport {
  const findings = [...chainFindings(chain), ...eventFindings(events, conformance)];
  const failed = !conformance.passed || findings.some((finding) => finding.severity === 'critical');
  const verdict = failed ? 'fail' : findings.length > 0 ? 'warn' : 'pass';
  const recommendations = [...new Set(findings.map(recommendationFor))];
  if (verdict === 'pass' && agent.agent_ref !== null && agent.policy_version !== null) {
    recommendations.push(`Agent '${agent.agent_ref}' at policy v${agent.policy_version} passed — archive the session export for compliance records.`);
  }
  return {
    verdict,
    scorecard: scorecard(events, conformance),
    findings,
    recommendations,
    hash_chain_valid: chain.hash_chain_valid,
    chain_complete: chain.complete,
  };
}

function chainFindings(chain: ChainReport): Finding[] {
  if (chain.reason === undefined) {
    if (chain.complete) return [];
    return [{ kind: 'TRAIL_INCOMPLETE', severity: 'warn', message: 'the trail does not end with session.close', event_ids: [] }];
  }
  if (chain.reason === 'torn_tail') {
    return [{ kind: 'TRAIL_TORN_TAIL', severity: 'warn', message: chain.message ?? 'the last line was cut short', event_ids: [], line: chain.line }];
  }
  return [
    {
      kind: 'HASH_CHAIN_BROKEN',
      severity: 'critical',
      message: chain.message ?? 'the hash chain does not verify',
      event_ids: chain.event_id === null || chain.event_id === undefined ? [] : [chain.event_id],
      reason: chain.reason,
      line: chain.line,
    },
  ];
}

/** The finding kind of a recorded violation, by the rule that made it (reference §18.3). */
function violationKind(ruleKind: string, auditOnly: boolean): 'CAPABILITY_AUDIT' | 'CAPABILITY_DENIED' | 'SCHEMA_VIOLATION' | 'POLICY_VIOLATION' {
  if (ruleKind === 'capability_scope') return auditOnly ? 'CAPABILITY_AUDIT' : 'CAPABILITY_DENIED';
  return ruleKind === 'schema_check' ? 'SCHEMA_VIOLATION' : 'POLICY_VIOLATION';
}

function eventFindings(events: readonly AuraEvent[], conformance: Conformance): Finding[] {
  const findings: Finding[] = [];
  for (const event of events) {
    const p = event.payload;
    const message = (fallback: string, key = 'message'): string => (typeof p[key] === 'string' ? p[key] : fallback);
    if (event.kind === 'constraint.violated') {
      const rule = p['rule'];
      const auditOnly = p['audit_only'] === true;
      const kind = violationKind(ruleType(rule), auditOnly);
      const tool = (p['event'] as { payload?: { tool?: unknown } } | undefined)?.payload?.tool;
      findings.push({
        kind,
        // An audit-only miss is a record, not a failure: the level asked for audit only.
        severity: auditOnly ? 'info' : 'warn',
        message: message('Policy violation'),
        event_ids: [event.event_id],
        rule_type: ruleType(rule),
        audit_only: auditOnly,
        ...(typeof tool === 'string' ? { tool } : {}),
        ...(kind === 'SCHEMA_VIOLATION' && rule !== null && typeof rule === 'object' && typeof (rule as Record<string, unknown>)['ref'] === 'string'
          ? { rule_ref: (rule as Record<string, unknown>)['ref'] }
          : {}),
      });
    } else if (event.kind === 'tool.error' && p['error'] === 'secret_broker_unresolved') {
      findings.push({ kind: 'SECRET_BROKER_ERROR', severity: 'warn', message: `secret ref ${String(p['secret_ref'])} did not resolve`, event_ids: [event.event_id], secret_ref: p['secret_ref'], capability_id: p['capability_id'] });
    } else if (event.kind === 'escalation.fired') {
      findings.push({ kind: 'ESCALATION_FIRED', severity: 'info', message: `escalation ${String(p['rule_id'])} fired on ${String(p['trigger_kind'])}`, event_ids: [event.event_id], rule_id: p['rule_id'], actions: p['actions'] });
    } else if (event.kind === 'sequencer.step.end' && p['status'] === 'error') {
      findings.push({ kind: 'STEP_FAILED', severity: 'warn', message: message('step failed', 'error'), event_ids: [event.event_id], step_id: event.step_id });
    }
  }
  if (conformance.pending_approvals.length > 0) {
    const ids = new Set(conformance.pending_approvals);
    findings.push({
      kind: 'APPROVAL_PENDING',
      severity: 'warn',
      message: `${ids.size} approval request(s) never approved`,
      event_ids: events.filter((e) => e.kind === 'constraint.approval_required' && ids.has(String(e.payload['request_id']))).map((e) => e.event_id),
      count: ids.size,
    });
  }
  return findings;
}

function recommendationFor(finding: Finding): string {
  switch (finding.kind) {
    case 'HASH_CHAIN_BROKEN':
      return 'Treat this trail as tampered or damaged: keep the file as evidence and re-run the session.';
    case 'TRAIL_INCOMPLETE':
      return 'The session was never closed: its writer stopped early or it is still running.';
    case 'TRAIL_TORN_TAIL':
      return 'The writer was interrupted mid-line: everything before the last line verifies; check why the process stopped.';
    case 'POLICY_VIOLATION':
      return 'Review the violated rules and the calls that broke them; tighten the agent or adjust the policy.';
    case 'CAPABILITY_DENIED':
      return 'Call gated tools with a capability whose scope matches the arguments, or update the capability in the profile.';
    case 'CAPABILITY_AUDIT':
      return 'Capability misses were only recorded at spectrum low: raise the level to enforce them.';
    case 'SCHEMA_VIOLATION':
      return 'Fix the tool arguments or results that do not match their schema, or correct the schema.';
    case 'SECRET_BROKER_ERROR':
      return 'Bind the missing secret refs in the broker (for env: refs, set the variables) before the next run.';
    case 'ESCALATION_FIRED':
      return 'Follow up the escalations this session fired.';
    case 'STEP_FAILED':
      return 'Inspect the failed steps and their errors; re-run once the cause is fixed.';
    case 'APPROVAL_PENDING':
      return 'Approve or reject the pending requests with a named principal.';
    default:
      return `Review the ${finding.kind} findings.`;
  }
}

function scorecard(events: readonly AuraEvent[], conformance: Conformance): Scorecard {
  let violations = 0;
  let denied = 0;
  let calls = 0;
  let errors = 0;
  let requested = 0;
  let approved = 0;
  let stepsStarted = 0;
  let stepErrors = 0;
  let schemaViolations = 0;
  let capabilityAudit = 0;
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
      case 'tool.call':
        calls++;
        break;
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
    }
  }
  return {
    policy: { declared_rules: conformance.declared_rules.length, violations, pending_approvals: requested, approvals_granted: approved },
    tools: { calls, denied, errors, schema_violations: schemaViolations, capability_audit: capabilityAudit },
    sequencer: { steps_started: stepsStarted, step_errors: stepErrors },
    events: events.length,
  };
}
