/**
 * The enforce stage: the policy path of one event (reference §6.4). A denial, a paused session or
 * a call that needs approval stops the event before it is recorded; otherwise audit-only denials,
 * then the event, then the rules that passed. A tool result is recorded first and checked after,
 * because the tool has already run. Sequencer gates are approvals too, and live here.
 */

import { ApprovalRequiredError, PolicyDeniedError } from '../errors.js';
import { callDigest, type ApprovalBook } from '../policy/approvals.js';
import type { Decision, Policy } from '../policy/policy.js';
import { toolOf, type PolicyInput, type RuleResult } from '../policy/rules.js';
import type { GateName, StepSpec } from '../sequencer/spec.js';
import type { LoopHold } from './hold.js';
import type { EmitOptions, Masking, RecordedEvent, RecordFn } from './types.js';

/** The kinds of a tool call: held by an observer's stop, and released by approvals. */
export const TOOL_KINDS: ReadonlySet<string> = new Set(['tool.call', 'action.request']);

// Shared, not made per event: most events go through policy unmasked.
const unchanged = (message: string): string => message;

/** What the gate asks of the session beyond its stages: the digests' salt, and the redactor's scrub. */
export interface GateSecrets {
  /** The session's approval-digest salt (session/approval-salt.ts). */
  readonly salt: () => string;
  /** A text as the trail records it (every secret and credential the redactor knows replaced). */
  readonly scrub: (text: string) => string;
}

export class PolicyGate {
  private pauseRequest: string | null = null;
  private salt: string | null = null;

  constructor(
    private readonly sessionId: string,
    private readonly policy: Policy,
    private readonly approvals: ApprovalBook,
    private readonly loop: LoopHold,
    private readonly record: RecordFn,
    private readonly secrets: GateSecrets,
  ) {}

  /** Whether an event of this kind goes through policy (a session stopped by an observer holds every tool call). */
  guards(kind: string): boolean {
    return this.policy.applies(kind) || (this.loop.current !== null && TOOL_KINDS.has(kind));
  }

  /** An escalation paused the session: tool calls need `requestId` approved. */
  pause(requestId: string): void {
    this.approvals.request(`pause:${requestId}`, '*', requestId);
    this.pauseRequest = requestId;
  }

  /** The digest a request for this call is held under. */
  digestOf(tool: string, args: unknown): string {
    // Taken at the first digest: most sessions hold no call, and a shared one reads its salt from a file.
    this.salt ??= this.secrets.salt();
    return callDigest(this.sessionId, tool, args, this.salt);
  }

  /**
   * Runs one event through policy and records it.
   * @throws PolicyDeniedError, ApprovalRequiredError, LoopBrokenError (each after recording why)
   */
  enforce(kind: string, payload: Readonly<Record<string, unknown>>, options: EmitOptions, masking?: Masking): { event: RecordedEvent; decision: Decision } {
    const tool = toolOf(payload);
    const skillId = typeof payload['skill_id'] === 'string' ? payload['skill_id'] : null;
    const input: PolicyInput = { kind, payload, tool, skillId };
    // With PII masking, policy decides on the payload as given; what is recorded is masked, rule messages too.
    const shown = masking?.payload ?? payload;
    const named = tool ?? skillId ?? '(no tool)';
    if (TOOL_KINDS.has(kind)) this.loop.hold(kind, shown, named);
    const decision = this.policy.decide(input);
    const say = masking?.text ?? unchanged;
    const afterTheFact = kind === 'tool.result';
    let event: RecordedEvent | null = afterTheFact ? this.record(kind, shown, options) : null;
    if (decision.denied !== null) this.deny(decision.denied, kind, shown, named, say);
    const passed: RuleResult[] = [...decision.passed];
    let recorded: Record<string, unknown> = shown;
    if (TOOL_KINDS.has(kind)) {
      const release = this.release(decision, kind, payload, named, shown);
      if (release !== null) {
        passed.push(release.result);
        recorded = { ...shown, principal: release.principal, approval: { request_id: release.request_id, principal: release.principal } };
      }
    }
    for (const audit of decision.audits) this.record('constraint.violated', { message: say(audit.message), rule: audit.rule, event: { kind, payload: shown }, audit_only: true });
    event ??= this.record(kind, recorded, options);
    if (passed.length > 0) {
      this.record('constraint.passed', { results: passed.map((r) => ({ passed: true, message: say(r.message), rule: r.rule, audit_only: false })), for_event: event.event_id });
    }
    return { event, decision };
  }

  /** A sequencer gate (reference §16.4): an approved request for this step releases it, once. */
  gate(step: StepSpec, gate: GateName): void {
    const digest = this.digestOf(`sequencer.gate.${gate}`, { step_id: step.id });
    const open = this.approvals.open(digest);
    if (open?.state === 'approved') {
      this.approvals.use(open);
      return;
    }
    const requestId = `sequencer.gate.${step.id}`;
    const request = open ?? this.approvals.request(digest, requestId, requestId);
    const required = this.record(
      'constraint.approval_required',
      { request_id: request.request_id, message: `Step ${step.id} needs ${gate} before it runs`, rule: { type: gate, step_id: step.id }, digest },
      { stepId: step.id },
    );
    throw new ApprovalRequiredError(`step ${step.id}`, request.request_id, digest, required.event_id);
  }

  private deny(result: RuleResult, kind: string, payload: Readonly<Record<string, unknown>>, tool: string, say: (message: string) => string): never {
    // The caller is told what the trail holds: a rule's message can quote the payload (a key a
    // schema refuses), where the record masks personal data and scrubs an injected secret.
    const message = this.secrets.scrub(say(result.message));
    const violation = this.record('constraint.violated', { message, rule: result.rule, event: { kind, payload }, audit_only: false });
    throw new PolicyDeniedError(message, { tool, kind, rule: result.rule, rule_type: String(result.rule['type']), event_id: violation.event_id });
  }

  /**
   * Approval of a tool call: a paused session, or a `confirm_before` rule, needs an approved
   * request for exactly this call. Returns the release, or null when no approval is needed.
   * @throws ApprovalRequiredError after recording the request
   */
  private release(decision: Decision, kind: string, payload: Readonly<Record<string, unknown>>, tool: string, shown: Readonly<Record<string, unknown>>): { result: RuleResult; principal: string | null; request_id: string } | null {
    if (this.pauseRequest !== null) {
      const pause = this.approvals.open(`pause:${this.pauseRequest}`);
      if (pause?.state === 'approved') {
        this.approvals.use(pause);
        this.pauseRequest = null;
      } else {
        const rule = { type: 'escalation_pause', request_id: this.pauseRequest, source: 'escalation' };
        const required = this.record('constraint.approval_required', { request_id: this.pauseRequest, message: 'Session paused by an escalation: approve to resume', rule, pending_event: { kind, payload: shown } });
        throw new ApprovalRequiredError(tool, this.pauseRequest, `pause:${this.pauseRequest}`, required.event_id);
      }
    }
    if (decision.approval === null) return null;
    const digest = this.digestOf(tool, payload['args']);
    const open = this.approvals.open(digest);
    if (open?.state === 'approved') {
      this.approvals.use(open);
      const by = open.principal ?? 'unknown principal';
      return { result: { rule: decision.approval.rule, outcome: 'pass', message: `approved by ${by}: ${tool}`, audit_only: false }, principal: open.principal, request_id: open.request_id };
    }
    const request = open ?? this.approvals.request(digest, tool);
    const required = this.record(
      'constraint.approval_required',
      { request_id: request.request_id, message: decision.approval.message, rule: decision.approval.rule, digest, pending_event: { kind, payload: shown } },
    );
    throw new ApprovalRequiredError(tool, request.request_id, digest, required.event_id);
  }
}
