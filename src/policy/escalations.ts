/**
 * Escalation playbooks (reference §14): when a trigger event is recorded (`constraint.violated`,
 * `observer.alert`, `slo.missed`, `conformance.drift`), each matching rule's actions are recorded as
 * intents (`membrane.nudge`, `escalation.email`, `escalation.wake`, an `observer.note` alert, a
 * pause) and handed to the host's handler for delivery, then one `escalation.fired` sums them up.
 * A handler that throws is recorded as that action's error; it never breaks the session.
 */

import { profileError, type KeyPath, type ProfileSource } from './profile-source.js';
import type { SpectrumLevel } from './spectrum.js';

/** The event kinds that can trigger an escalation. */
export const ESCALATION_TRIGGERS = ['constraint.violated', 'observer.alert', 'slo.missed', 'conformance.drift'] as const;
/** A trigger kind. */
export type EscalationTrigger = (typeof ESCALATION_TRIGGERS)[number];

const ACTIONS = ['log', 'alert', 'nudge', 'pause', 'email', 'wake', 'custom'] as const;
/** An action name. */
export type EscalationActionName = (typeof ACTIONS)[number];
const DESTRUCTIVE: ReadonlySet<string> = new Set(['pause', 'wake']);

/** One action of a rule: `nudge:stay on invoices` is name `nudge`, argument `stay on invoices`. */
export interface EscalationAction {
  readonly name: EscalationActionName;
  readonly argument: string | null;
}

/** A parsed escalation rule. */
export interface EscalationRule {
  readonly id: string;
  readonly on: EscalationTrigger;
  readonly actions: readonly EscalationAction[];
  readonly after_minutes: number | null;
}

/** What the host's handler is given to deliver. */
export interface EscalationDelivery {
  readonly rule_id: string;
  readonly action: EscalationAction;
  readonly trigger: { readonly kind: string; readonly event_id: string; readonly payload: Readonly<Record<string, unknown>> };
  /** The event that records the action's intent, when there is one. */
  readonly intent_event_id: string | null;
}

/** Delivers an escalation (sends the e-mail, pages someone). Throwing records an error. */
export type EscalationHandler = (delivery: EscalationDelivery) => void;

/**
 * Parses `escalations[]`.
 * @throws ProfileError for an unknown trigger, action or key
 */
export function parseEscalations(value: unknown, source: ProfileSource, keys: KeyPath): EscalationRule[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw profileError(source, keys, 'expected a list of escalation rules');
  return value.map((entry, i) => {
    const at = [...keys, i];
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) throw profileError(source, at, 'expected {on, actions}');
    const rule = entry as Record<string, unknown>;
    for (const key of Object.keys(rule)) if (!['id', 'on', 'trigger', 'actions', 'after_minutes', 'description'].includes(key)) throw profileError(source, [...at, key], 'unknown key for an escalation rule');
    const on = rule['on'] ?? rule['trigger'];
    if (!(ESCALATION_TRIGGERS as readonly unknown[]).includes(on)) throw profileError(source, [...at, 'on'], `expected a trigger: ${ESCALATION_TRIGGERS.join(', ')}`);
    const rawActions = rule['actions'] ?? ['log'];
    const list = typeof rawActions === 'string' ? [rawActions] : rawActions;
    if (!Array.isArray(list) || list.length === 0) throw profileError(source, [...at, 'actions'], 'expected a list of actions');
    const actions = list.map((action, j) => {
      if (typeof action !== 'string') throw profileError(source, [...at, 'actions', j], 'expected an action such as "nudge:message"');
      const colon = action.indexOf(':');
      const name = (colon < 0 ? action : action.slice(0, colon)).trim().toLowerCase();
      if (!(ACTIONS as readonly string[]).includes(name)) throw profileError(source, [...at, 'actions', j], `unknown action ${JSON.stringify(name)}; expected ${ACTIONS.join(', ')}`);
      return { name: name as EscalationActionName, argument: colon < 0 ? null : action.slice(colon + 1).trim() };
    });
    const after = rule['after_minutes'];
    if (after !== undefined && (typeof after !== 'number' || after < 0)) throw profileError(source, [...at, 'after_minutes'], 'expected a number of minutes');
    return { id: typeof rule['id'] === 'string' ? rule['id'] : `escalation-${i + 1}`, on: on as EscalationTrigger, actions, after_minutes: typeof after === 'number' ? after : null };
  });
}

/** How the engine records events and pauses the session (the session gives these). */
export interface EscalationSink {
  record(kind: string, payload: Record<string, unknown>): string;
  pause(requestId: string, triggerEventId: string): void;
  newRequestId(prefix: string): string;
}

/** Runs the playbook on each trigger event. */
export class EscalationEngine {
  private readonly triggers: ReadonlySet<string>;

  constructor(
    private readonly rules: readonly EscalationRule[],
    private readonly level: SpectrumLevel,
    private readonly handler: EscalationHandler | undefined,
    private readonly sink: EscalationSink,
  ) {
    this.triggers = new Set(rules.map((rule) => rule.on));
  }

  /** True when some rule listens for this kind (asked on every event: one set lookup). */
  listensTo(kind: string): boolean {
    return this.triggers.has(kind);
  }

  /** Runs every rule that matches a recorded trigger event. */
  onEvent(kind: string, eventId: string, payload: Readonly<Record<string, unknown>>): void {
    for (const rule of this.rules) {
      if (rule.on !== kind) continue;
      const results = rule.actions.map((action) => this.run(rule, action, { kind, event_id: eventId, payload }));
      this.sink.record('escalation.fired', { trigger_kind: kind, trigger_event_id: eventId, rule_id: rule.id, actions: results, after_minutes: rule.after_minutes });
    }
  }

  private run(rule: EscalationRule, action: EscalationAction, trigger: EscalationDelivery['trigger']): Record<string, unknown> {
    if (DESTRUCTIVE.has(action.name) && this.level === 'low') return { action: action.name, status: 'skipped', reason: 'needs spectrum mid, high or full' };
    const base = { trigger_kind: trigger.kind, trigger_event_id: trigger.event_id, rule_id: rule.id };
    let intent: string | null = null;
    const extra: Record<string, unknown> = {};
    switch (action.name) {
      case 'log':
        break;
      case 'alert':
        intent = this.sink.record('observer.note', { type: 'escalation_alert', ...base, message: action.argument ?? `escalation ${rule.id} on ${trigger.kind}`, observer_id: 'escalation' });
        break;
      case 'nudge':
        extra['message'] = action.argument ?? 'Review the last step: it triggered an escalation.';
        intent = this.sink.record('membrane.nudge', { message: extra['message'], source: 'escalation', ...base });
        break;
      case 'email':
        extra['to'] = action.argument ?? 'operator';
        intent = this.sink.record('escalation.email', { to: extra['to'], ...base, delivery: this.handler === undefined ? 'none' : 'handler' });
        break;
      case 'wake':
        intent = this.sink.record('escalation.wake', { ...base, delivery: this.handler === undefined ? 'none' : 'handler' });
        break;
      case 'pause': {
        const requestId = this.sink.newRequestId('escal_pause_');
        this.sink.pause(requestId, trigger.event_id);
        extra['request_id'] = requestId;
        break;
      }
      case 'custom':
        if (this.handler === undefined) return { action: 'custom', status: 'skipped', reason: 'no handler registered' };
        break;
    }
    if (this.handler === undefined || action.name === 'log' || action.name === 'pause') return { action: action.name, status: 'ok', ...extra };
    try {
      this.handler({ rule_id: rule.id, action, trigger, intent_event_id: intent });
      return { action: action.name, status: 'ok', ...extra };
    } catch (error) {
      return { action: action.name, status: 'error', error: error instanceof Error ? `${error.name}: ${error.message}` : String(error), ...extra };
    }
  }
}
