/**
 * The sequencer runner (reference §16.2): the declared steps in order, each recorded as
 * `sequencer.step.start` / `sequencer.step.end` (`status` ok, error or skipped, with its `attempt`),
 * then `sequencer.complete`. Tool and skill steps go through the session's guarded call with their
 * `step_id`, so policy, approvals, capabilities and PII masking apply to them as to any call.
 *
 * Beyond Aura (§16.4, §21.26–28): the runner keeps what it completed on the session, so calling it
 * again after an approval (or after a step that failed every attempt) resumes from that step;
 * completed steps are not run again. A policy denial is not retried: the same call would be denied
 * again. A passed gate stays passed for the rest of the run.
 */

import { ApprovalRequiredError, InvalidOptionError, PolicyDeniedError } from '../errors.js';
import type { ToolOptions } from '../session/types.js';
import type { GateName, SequencerSpec, StepCondition, StepSpec } from './spec.js';

/** The tools a sequencer's tool and skill steps call, by name (the shape `session.host()` takes). */
export type SequencerTools = Readonly<Record<string, (liveArgs: Record<string, unknown>) => unknown>>;

/** Options of a run. */
export interface SequencerRunOptions {
  /** Waits between attempts (default: a timer); tests pass their own to see the delays. */
  readonly sleep?: (ms: number) => Promise<void>;
}

/** What a completed run returns. */
export interface SequencerResult {
  /** The top-level step ids, in order (skipped ones included). */
  readonly completed: readonly string[];
  readonly steps: number;
  /** Each step's result by id (a tool step's is what the tool returned, as the session returned it). */
  readonly results: Readonly<Record<string, unknown>>;
}

/** What the runner needs of the session. */
export interface SequencerPort {
  record(kind: string, payload: Readonly<Record<string, unknown>>, stepId: string | null): void;
  tool(name: string, args: Readonly<Record<string, unknown>>, fn: (liveArgs: Record<string, unknown>) => unknown, options: ToolOptions): Promise<unknown>;
  /** Returns when the gate is approved; otherwise records the request and throws ApprovalRequiredError. */
  gate(step: StepSpec, gate: GateName): void;
  /** Records `sequencer.step.end` with status error for a failed attempt (its text masked when the step's calls are). */
  stepFailed(step: StepSpec, attempt: number, error: unknown): void;
}

/** What a session keeps between calls of the runner. */
export class SequencerState {
  readonly results = new Map<string, unknown>();
  readonly gatesPassed = new Set<string>();

  /** After a complete run, the next call starts a new one. */
  reset(): void {
    this.results.clear();
    this.gatesPassed.clear();
  }
}

/**
 * Runs (or resumes) the declared steps.
 * @throws InvalidOptionError when a tool step's tool is not in `tools` (before anything is recorded);
 *   ApprovalRequiredError at a gate or a call held for approval; the last error of a step that failed every attempt
 */
export async function runSequencer(spec: SequencerSpec, state: SequencerState, port: SequencerPort, tools: SequencerTools, options: SequencerRunOptions = {}): Promise<SequencerResult> {
  const missing = toolsOf(spec.steps).filter((name) => typeof tools[name] !== 'function' || !Object.hasOwn(tools, name));
  if (missing.length > 0) throw new InvalidOptionError('tools', Object.keys(tools), `a function for every tool the sequencer calls; missing: ${missing.join(', ')}`);
  const runner = new Runner(state, port, tools, options.sleep ?? sleep);
  const completed = await runner.flow(spec.steps, null);
  const results = Object.fromEntries(state.results);
  state.reset();
  return { completed, steps: completed.length, results };
}

function toolsOf(steps: readonly StepSpec[]): string[] {
  return [...new Set(steps.flatMap((step) => (step.tool === null ? toolsOf(step.steps) : [step.tool])))];
}

class Runner {
  constructor(
    private readonly state: SequencerState,
    private readonly port: SequencerPort,
    private readonly tools: SequencerTools,
    private readonly sleep: (ms: number) => Promise<void>,
  ) {}

  /** One list of steps; `subflow` names the step it belongs to. */
  async flow(steps: readonly StepSpec[], subflow: string | null): Promise<string[]> {
    const ran: string[] = [];
    for (const step of steps) {
      if (!this.state.results.has(step.id)) await this.step(step);
      ran.push(step.id);
    }
    this.port.record('sequencer.complete', { steps: ran, ...(subflow === null ? {} : { subflow }) }, subflow);
    return ran;
  }

  private async step(step: StepSpec): Promise<void> {
    const { id, type, ref } = step;
    const skip = this.skipReason(step.when);
    if (skip !== null) {
      this.port.record('sequencer.step.start', { type, ref, attempt: 0, skipped: true }, id);
      this.port.record('sequencer.step.skipped', { status: 'skipped', reason: skip }, id);
      this.port.record('sequencer.step.end', { status: 'skipped', reason: skip }, id);
      this.state.results.set(id, { status: 'skipped', reason: skip });
      return;
    }
    for (const gate of step.gates) {
      const key = `${id}\u0000${gate}`;
      if (this.state.gatesPassed.has(key)) continue;
      this.port.gate(step, gate);
      this.state.gatesPassed.add(key);
    }
    const attempts = step.retry.max + 1;
    for (let attempt = 1; ; attempt++) {
      this.port.record('sequencer.step.start', { type, ref, attempt, ...(step.tool === null ? {} : { tool: step.tool }) }, id);
      try {
        const result = await this.execute(step);
        this.port.record('sequencer.step.end', { status: 'ok', attempt }, id);
        this.state.results.set(id, result);
        return;
      } catch (error) {
        // Held for approval: the step has not failed; the caller approves and runs again.
        if (error instanceof ApprovalRequiredError) throw error;
        this.port.stepFailed(step, attempt, error);
        if (attempt >= attempts || error instanceof PolicyDeniedError) throw error;
        await this.sleep(backoffMs(step.retry, attempt));
      }
    }
  }

  private async execute(step: StepSpec): Promise<unknown> {
    switch (step.type) {
      case 'tool':
      case 'skill': {
        const name = step.tool as string;
        const args = (step.config['args'] ?? {}) as Record<string, unknown>;
        const options: ToolOptions = { stepId: step.id, ...(step.type === 'skill' && step.ref !== null ? { skillId: step.ref } : {}), ...(step.middleware.length > 0 ? { middleware: step.middleware } : {}) };
        return this.port.tool(name, args, this.tools[name] as (liveArgs: Record<string, unknown>) => unknown, options);
      }
      case 'op': {
        const op = step.ref ?? (typeof step.config['op'] === 'string' ? step.config['op'] : 'noop');
        this.port.record('sequencer.op', { op, config: step.config }, step.id);
        return { op, status: 'ok' };
      }
      case 'prompt': {
        const prompt = step.ref ?? step.config['prompt'] ?? null;
        this.port.record('sequencer.prompt', { prompt, config: step.config }, step.id);
        return { prompt, status: 'declared' };
      }
      case 'gate': {
        const gate = step.gates[step.gates.length - 1] ?? 'human_confirm';
        this.port.record('sequencer.gate', { gate, config: step.config }, step.id);
        return { gate, status: 'ok' };
      }
      case 'subflow':
        return { status: 'ok', completed: await this.flow(step.steps, step.id) };
    }
  }

  /** Why a step is skipped (reference §16.2 `when`), or null when it runs. */
  private skipReason(when: StepCondition | null): string | null {
    if (when === null) return null;
    const prior = this.state.results.get(when.prior_step);
    if (prior === null || typeof prior !== 'object' || Array.isArray(prior)) return `prior step '${when.prior_step}' has no result`;
    const actual = fieldAt(prior, when.field);
    if ('equals' in when && !sameJson(actual, when.equals)) return `${when.field}=${JSON.stringify(actual) ?? 'undefined'} expected ${JSON.stringify(when.equals)}`;
    if (when.truthy === true && !actual) return `${when.field} is falsy`;
    if (when.truthy === false && actual) return `${when.field} is truthy`;
    return null;
  }
}

function fieldAt(value: object, path: string): unknown {
  let cursor: unknown = value;
  for (const part of path.split('.')) {
    if (cursor === null || typeof cursor !== 'object' || !Object.hasOwn(cursor, part)) return undefined;
    cursor = (cursor as Record<string, unknown>)[part];
  }
  return cursor;
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** The wait before the attempt after `attempt` (reference §16.2). */
export function backoffMs(retry: StepSpec['retry'], attempt: number): number {
  switch (retry.backoff) {
    case 'none':
      return 0;
    case 'linear':
      return retry.delay_ms * attempt;
    case 'exponential':
      return retry.delay_ms * 2 ** (attempt - 1);
  }
}

function sleep(ms: number): Promise<void> {
  return ms <= 0 ? Promise.resolve() : new Promise((resolve) => setTimeout(resolve, ms));
}
