/**
 * What every framework adapter shares: one tool call the framework makes, through the session's
 * guarded path (`session.tool()`: policy, approvals bound to the call, capabilities and secret
 * injection, schema checks, PII masking, `break`), with the framework's tool-call id recorded.
 *
 * A refusal comes back as a value, never thrown: each adapter hands it to the model as a tool
 * result it can read, so the agent goes on. What the tool itself throws is the framework's to
 * handle, as without aura. Adapters are built on the public Session API only.
 */

import { ApprovalRequiredError, AuraError } from '../errors.js';
import { refusalOf, type Refusal } from '../policy/refusal.js';
import type { Session } from '../session/session.js';

/** Options every adapter takes. */
export interface AdapterOptions {
  /**
   * Who approved a call that the framework's own approval step released (recorded with
   * `constraint.approved`). Default: the session's operator.
   */
  readonly principal?: string;
}

/** A guarded call's outcome: the tool's value, or aura's refusal (the tool did not run, or a check of results kept its answer back). */
export type GuardedOutcome<R> = { readonly ran: true; readonly value: R } | { readonly ran: false; readonly error: AuraError; readonly refusal: Refusal };

/** What one call says about itself. */
export interface CallFacts {
  /** The framework's tool-call id. */
  readonly callId?: string | undefined;
  /**
   * The framework's own approval step released this call (a person approved it there). A function
   * is asked only when aura holds the call: most calls never need the answer, and finding it may
   * mean searching the conversation.
   */
  readonly approved?: boolean | (() => boolean);
}

/** The guarded path of one session, for one adapter. */
export class CallGuard {
  /**
   * False when no rule of the policy asks for approval (`confirm_before`): no call is ever held,
   * and an adapter leaves the framework's own approval step as it was, with nothing to ask aura.
   */
  readonly mayHold: boolean;

  constructor(
    readonly session: Session,
    private readonly options: AdapterOptions = {},
  ) {
    this.mayHold = session.agent.policy.rules.some((rule) => rule.type === 'confirm_before');
  }

  /**
   * True when aura's policy holds this call for approval and nothing denies it: what a
   * framework's own approval step asks before the call runs. Nothing is recorded: the request is
   * recorded when the released call comes back.
   */
  holds(tool: string, args: unknown): boolean {
    const payload = { tool, skill_id: null, args };
    const decision = this.session.agent.policy.decide({ kind: 'tool.call', payload, tool, skillId: null });
    return decision.denied === null && decision.approval !== null;
  }

  /**
   * Runs `fn` through `session.tool()`. When the framework's approval step released the call,
   * aura's request for exactly this call is recorded and approved (by the configured principal)
   * before it runs.
   */
  async call<R>(tool: string, args: Readonly<Record<string, unknown>>, fn: (liveArgs: Record<string, unknown>) => R | Promise<R>, facts: CallFacts = {}): Promise<GuardedOutcome<R>> {
    const options = facts.callId === undefined ? {} : { callId: facts.callId };
    try {
      return { ran: true, value: await this.session.tool(tool, args, fn, options) };
    } catch (error) {
      if (!(error instanceof AuraError)) throw error;
      if (!(error instanceof ApprovalRequiredError) || error.data === undefined || !released(facts.approved)) return this.refused(error);
      this.session.approve(error.data.request_id, this.options.principal === undefined ? {} : { principal: this.options.principal });
    }
    try {
      return { ran: true, value: await this.session.tool(tool, args, fn, options) };
    } catch (error) {
      if (error instanceof AuraError) return this.refused(error);
      throw error;
    }
  }

  private refused(error: AuraError): GuardedOutcome<never> {
    return { ran: false, error, refusal: refusalOf(error, (requestId) => `the app approves request ${requestId} of aura session ${this.session.id}`) };
  }
}

function released(approved: CallFacts['approved']): boolean {
  return typeof approved === 'function' ? approved() : approved === true;
}

/** The arguments a framework hands a tool, as the object `session.tool()` records (a non-object goes under `input`). */
export function argsObject(input: unknown): Readonly<Record<string, unknown>> {
  return input !== null && typeof input === 'object' && !Array.isArray(input) ? (input as Record<string, unknown>) : { input };
}

/** What the tool gets: the live arguments (secrets injected) in the shape the framework gave. */
export function liveInput(input: unknown, live: Record<string, unknown>): unknown {
  return input !== null && typeof input === 'object' && !Array.isArray(input) ? live : live['input'];
}
