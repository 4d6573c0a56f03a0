/**
 * The probes of the detector: each declares the kinds it can emit and is a pure function of one
 * session's events, the verdict on its chain and its conformance. The detector (detector.ts) runs
 * them and orders what they find; nothing else decides what a finding is.
 */

import type { ChainReport } from '../spine/verify.js';
import type { AuraEvent } from '../spine/record.js';
import { ruleType, type Conformance } from './conformance.js';
import type { FindingKind } from './kinds.js';

/** A finding as a probe makes it; the detector adds the severity. */
export interface ProbeFinding {
  readonly kind: FindingKind;
  readonly message: string;
  readonly event_ids: readonly string[];
  /** Where in the session it belongs: the index of its first event (the detector orders by it). */
  readonly at: number;
  readonly [key: string]: unknown;
}

/** What a probe is given. */
export interface ProbeContext {
  /** The session's events, or the ones a digest kept ({@link AUDITED_KINDS} among them). */
  readonly events: readonly AuraEvent[];
  readonly chain: ChainReport;
  readonly conformance: Conformance;
  /** When `events` are a digest's: each one's position in the trail. */
  readonly positions?: readonly number[];
}

/**
 * The kinds of event whose content the probes, the conformance and the scorecard read: a digest
 * of a trail (the streaming read at close) keeps these and counts the rest. A probe that reads
 * another kind adds it here.
 */
export const AUDITED_KINDS: ReadonlySet<string> = new Set([
  'session.open',
  'identity.bound',
  'session.error',
  'constraint.violated',
  'constraint.approval_required',
  'constraint.approved',
  'tool.error',
  'sequencer.step.start',
  'sequencer.step.end',
  'conformance.drift',
  'slo.missed',
  'observer.alert',
  'observer.error',
  'middleware.applied',
  'escalation.fired',
]);

/**
 * Where a finding about line `line` sorts among the events: its index among all events, or
 * among a digest's, between the kept events around it (the detector orders by this).
 */
function atLine(line: number, positions: readonly number[] | undefined): number {
  const index = Math.max(0, line - 1);
  if (positions === undefined) return index;
  let low = 0;
  let high = positions.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if ((positions[mid] as number) < index) low = mid + 1;
    else high = mid;
  }
  return positions[low] === index ? low : low - 0.5;
}

/** A probe: its id, the kinds it may emit, and the check. */
export interface Probe {
  readonly id: string;
  readonly kinds: readonly FindingKind[];
  run(context: ProbeContext): ProbeFinding[];
}

const CHAIN_KINDS = {
  edited: 'HASH_CHAIN_BROKEN',
  deleted_or_reordered: 'HASH_CHAIN_BROKEN',
  missing_hash: 'HASH_CHAIN_BROKEN',
  malformed_record: 'HASH_CHAIN_BROKEN',
  malformed_line: 'HASH_CHAIN_BROKEN',
  truncated: 'TRAIL_TRUNCATED',
  signature_invalid: 'SIGNATURE_INVALID',
  torn_tail: 'TRAIL_TORN_TAIL',
  empty: 'TRAIL_EMPTY',
} as const satisfies Readonly<Record<NonNullable<ChainReport['reason']>, FindingKind>>;

function text(value: unknown, fallback: string): string {
  return typeof value === 'string' && value !== '' ? value : fallback;
}

/** The registry, in the order their findings are reported within one event. */
export const PROBES: readonly Probe[] = [
  {
    id: 'chain',
    kinds: ['HASH_CHAIN_BROKEN', 'TRAIL_TRUNCATED', 'SIGNATURE_INVALID', 'TRAIL_TORN_TAIL', 'TRAIL_EMPTY', 'TRAIL_INCOMPLETE'],
    run: ({ chain, events, positions }) => {
      if (chain.reason === undefined) {
        return chain.complete ? [] : [{ kind: 'TRAIL_INCOMPLETE', message: 'the trail does not end with session.close', event_ids: [], at: events.length }];
      }
      const eventIds = chain.event_id === null || chain.event_id === undefined ? [] : [chain.event_id];
      return [{ kind: CHAIN_KINDS[chain.reason], message: chain.message ?? chain.reason, event_ids: eventIds, at: atLine(chain.line ?? 1, positions), reason: chain.reason, line: chain.line ?? null }];
    },
  },
  {
    id: 'violations',
    kinds: ['POLICY_VIOLATION', 'CAPABILITY_DENIED', 'CAPABILITY_AUDIT', 'SCHEMA_VIOLATION'],
    run: ({ events }) =>
      events.flatMap((event, at): ProbeFinding[] => {
        if (event.kind !== 'constraint.violated') return [];
        const p = event.payload;
        const type = ruleType(p['rule']);
        const auditOnly = p['audit_only'] === true;
        const kind: FindingKind = type === 'capability_scope' ? (auditOnly ? 'CAPABILITY_AUDIT' : 'CAPABILITY_DENIED') : type === 'schema_check' ? 'SCHEMA_VIOLATION' : 'POLICY_VIOLATION';
        const tool = (p['event'] as { payload?: { tool?: unknown } } | undefined)?.payload?.tool;
        const ref = (p['rule'] as { ref?: unknown } | null | undefined)?.ref;
        return [
          {
            kind,
            message: text(p['message'], 'Policy violation'),
            event_ids: [event.event_id],
            at,
            rule_type: type,
            audit_only: auditOnly,
            ...(typeof tool === 'string' ? { tool } : {}),
            ...(kind === 'SCHEMA_VIOLATION' && typeof ref === 'string' ? { rule_ref: ref } : {}),
          },
        ];
      }),
  },
  {
    id: 'approvals',
    kinds: ['APPROVAL_PENDING'],
    run: ({ events, conformance }) => {
      if (conformance.pending_approvals.length === 0) return [];
      const pending = new Set(conformance.pending_approvals);
      const requests = events.flatMap((event, at) => (event.kind === 'constraint.approval_required' && pending.has(String(event.payload['request_id'])) ? [{ event, at }] : []));
      return [
        {
          kind: 'APPROVAL_PENDING',
          message: `${pending.size} approval request(s) never approved`,
          event_ids: [...new Set(requests.map((r) => r.event.event_id))],
          at: requests[0]?.at ?? events.length,
          count: pending.size,
          request_ids: [...pending],
        },
      ];
    },
  },
  {
    id: 'secrets',
    kinds: ['SECRET_BROKER_ERROR'],
    run: ({ events }) =>
      events.flatMap((event, at): ProbeFinding[] =>
        event.kind === 'tool.error' && event.payload['error'] === 'secret_broker_unresolved'
          ? [{ kind: 'SECRET_BROKER_ERROR', message: `secret ref ${String(event.payload['secret_ref'])} did not resolve`, event_ids: [event.event_id], at, secret_ref: event.payload['secret_ref'] ?? null, capability_id: event.payload['capability_id'] ?? null }]
          : [],
      ),
  },
  {
    id: 'sequencer',
    kinds: ['SEQUENCER_INCOMPLETE', 'STEP_FAILED'],
    run: ({ events, conformance }) => {
      const findings: ProbeFinding[] = events.flatMap((event, at): ProbeFinding[] =>
        event.kind === 'sequencer.step.end' && event.payload['status'] === 'error'
          ? [{ kind: 'STEP_FAILED', message: text(event.payload['error'], 'step failed'), event_ids: [event.event_id], at, step_id: event.step_id }]
          : [],
      );
      const check = conformance.checks.find((c) => c.type === 'sequencer');
      if (check !== undefined && check.passed === false) {
        const missing = (check['missing_steps'] as string[] | undefined) ?? [];
        const message = missing.length > 0 ? `declared steps not completed: ${missing.join(', ')}` : `declared steps started out of order (declared ${(check['declared_steps'] as string[]).join(', ')})`;
        findings.push({ kind: 'SEQUENCER_INCOMPLETE', message, event_ids: [], at: events.length, missing_steps: missing, order_ok: check['order_ok'] ?? null });
      }
      return findings;
    },
  },
  {
    id: 'goal_slo',
    kinds: ['GOAL_DRIFT', 'SCHEDULE_SLO_MISS'],
    run: ({ events }) =>
      events.flatMap((event, at): ProbeFinding[] => {
        if (event.kind === 'conformance.drift') return [{ kind: 'GOAL_DRIFT', message: text(event.payload['reason'], 'goal drift'), event_ids: [event.event_id], at, tool: event.payload['tool'] ?? null, goal: event.payload['goal'] ?? null }];
        if (event.kind === 'slo.missed') return [{ kind: 'SCHEDULE_SLO_MISS', message: text(event.payload['reason'], 'schedule missed'), event_ids: [event.event_id], at, required_tool: event.payload['required_tool'] ?? null, deadline: event.payload['deadline'] ?? null }];
        return [];
      }),
  },
  {
    id: 'identity',
    kinds: ['VERIFIED_IDENTITY_REQUIRED'],
    run: ({ events }) => {
      const open = events.find((event) => event.kind === 'session.open');
      const spectrum = open?.payload['spectrum'] as { verified_identity_required?: unknown; verified_identity_required_source?: unknown } | undefined;
      if (spectrum?.verified_identity_required !== true) return [];
      const at = events.findIndex((event) => event.kind === 'identity.bound');
      const operator = (events[at]?.payload['operator'] ?? null) as { verified?: unknown; method?: unknown } | null;
      if (operator?.verified === true) return [];
      return [
        {
          kind: 'VERIFIED_IDENTITY_REQUIRED',
          message: operator === null ? 'a verified operator was required and none was bound' : 'a verified operator was required and the bound one is not verified',
          event_ids: at < 0 ? [] : [(events[at] as AuraEvent).event_id],
          at: at < 0 ? 0 : at,
          policy_source: spectrum.verified_identity_required_source ?? null,
          ...(operator === null ? {} : { method: operator.method ?? null }),
        },
      ];
    },
  },
  {
    id: 'observers',
    kinds: ['COGNITIVE_CYCLE_DETECTED', 'REASONING_INERTIA', 'OBSERVER_ALERT', 'OBSERVER_ERROR'],
    run: ({ events }) =>
      events.flatMap((event, at): ProbeFinding[] => {
        const p = event.payload;
        if (event.kind === 'observer.error') return [{ kind: 'OBSERVER_ERROR', message: text(p['error'], 'an observer threw'), event_ids: [event.event_id], at, observer_id: p['observer_id'] ?? null }];
        if (event.kind !== 'observer.alert') return [];
        // Only a loop pattern is a cycle; other alerts (a limit passed) say what they are in `type`.
        if (typeof p['pattern'] !== 'string') return [{ kind: 'OBSERVER_ALERT', message: text(p['message'], `${text(p['type'], 'alert')} from ${text(p['observer_id'], 'an observer')}`), event_ids: [event.event_id], at, type: p['type'] ?? null, observer_id: p['observer_id'] ?? null }];
        const pattern = p['pattern'];
        // A text similarity is a guess: it is its own, informational kind (SuperAuditor §4).
        const kind: FindingKind = pattern === 'REASONING_INERTIA' ? 'REASONING_INERTIA' : 'COGNITIVE_CYCLE_DETECTED';
        return [{ kind, message: text(p['message'], `${pattern} seen by ${text(p['observer_id'], 'an observer')}`), event_ids: [event.event_id], at, pattern, observer_id: p['observer_id'] ?? null }];
      }),
  },
  {
    id: 'middleware',
    kinds: ['PII_MASKED'],
    run: ({ events }) =>
      events.flatMap((event, at): ProbeFinding[] => {
        const redactions = event.payload['redactions'];
        if (event.kind !== 'middleware.applied' || typeof redactions !== 'number' || redactions <= 0) return [];
        return [{ kind: 'PII_MASKED', message: `${redactions} personal data value(s) masked (${text(event.payload['strategy'], 'mask')})`, event_ids: [event.event_id], at, redactions, entities_detected: event.payload['entities_detected'] ?? {} }];
      }),
  },
  {
    id: 'escalations',
    kinds: ['ESCALATION_FIRED'],
    run: ({ events }) =>
      events.flatMap((event, at): ProbeFinding[] =>
        event.kind === 'escalation.fired'
          ? [{ kind: 'ESCALATION_FIRED', message: `escalation ${String(event.payload['rule_id'])} fired on ${String(event.payload['trigger_kind'])}`, event_ids: [event.event_id], at, rule_id: event.payload['rule_id'] ?? null, actions: event.payload['actions'] ?? [] }]
          : [],
      ),
  },
];
