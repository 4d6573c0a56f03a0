/**
 * The `break` preset: catches an agent in a loop and hands the host a structured remedial
 * directive. Aura's `break` only counted identical intents, for ever (reference §13.2, §21.23);
 * this one reads the trail as a sequence of steps, a step being one call (its `tool.intent`, or its
 * `tool.call` when the host records calls itself) and what came of it (`tool.result`,
 * `tool.error`, a denial, an approval hold), and knows five patterns:
 *
 * - `ACTION_FIXATION`: the same step again and again (same tool, arguments and outcome);
 * - `OSCILLATION_CYCLE`: two steps alternating, A B A B;
 * - `CHOREOGRAPHY_CYCLE`: a sequence of 3 to `max_cycle` steps recurring;
 * - `ERROR_STATUS_CHURN`: consecutive failures whose status keeps flipping (503, 429, 503, …);
 * - `REASONING_INERTIA`: reasoning text repeating (token-set similarity) with no new action.
 *
 * A step's fingerprint includes its outcome, so polling that makes progress, a retry that then
 * succeeds, or two argument sets alternating while their results change are not loops.
 *
 * Each pattern has a soft threshold (an `observer.alert` and a `membrane.nudge`) and a hard one
 * (an `observer.alert`, then the session is stopped: the next guarded call is refused with
 * `LoopBrokenError` until its request is approved; then the detector starts afresh). Thresholds
 * count occurrences of the step or cycle (status flips for churn, similar texts for inertia).
 *
 * Cost: the last `window` steps sit in a ring; per step, one comparison per cycle length
 * (`max_cycle`), one set update and one token-set comparison: flat in the length of the session.
 */

import type { JsonObject } from '../spine/record.js';
import { canonicalJson } from '../spine/canonical.js';
import { isCount } from '../spine/json-shape.js';
import type { JsonValue } from '../spine/json-reader.js';
import { PythonNumber } from '../spine/python-number.js';
import { toolOf } from '../policy/rules.js';
import type { ObservedEvent, Observer, ObserverContext } from './bus.js';
import type { PresetConfig } from './config.js';
import { callFingerprint, shortFingerprint, stepFingerprint } from './fingerprint.js';

/** The loop patterns, as `observer.alert.pattern` names them. */
export const LOOP_PATTERNS = ['ACTION_FIXATION', 'OSCILLATION_CYCLE', 'CHOREOGRAPHY_CYCLE', 'ERROR_STATUS_CHURN', 'REASONING_INERTIA'] as const;
/** A loop pattern. */
export type LoopPattern = (typeof LOOP_PATTERNS)[number];

/** When a pattern nudges (soft) and stops (hard); 0 turns a level off. */
export interface Thresholds {
  readonly soft: number;
  readonly hard: number;
}

/** The checked config of a `break` observer. */
export interface BreakSettings {
  /** Steps remembered; a cycle is counted within them. */
  readonly window: number;
  /** The longest recurring sequence looked for. */
  readonly maxCycle: number;
  /** Per pattern; a disabled pattern is absent. */
  readonly thresholds: Readonly<Partial<Record<LoopPattern, Thresholds>>>;
  readonly reasoningKinds: readonly string[];
  /** Token-set (Jaccard) similarity at which two reasoning texts count as the same. */
  readonly similarity: number;
}

/** The config keys of `break`. */
export const BREAK_KEYS = ['soft', 'hard', 'window', 'max_cycle', 'patterns', 'reasoning_kinds', 'similarity', 'max_identical_intents'];

// Cycles need fewer rounds than a single repeated step before they are plainly a loop, and a text
// match never stops a session on its own (SuperAuditor §4: text similarity is a guess).
const DEFAULT_THRESHOLDS: Readonly<Record<LoopPattern, Thresholds>> = {
  ACTION_FIXATION: { soft: 3, hard: 5 },
  OSCILLATION_CYCLE: { soft: 3, hard: 4 },
  CHOREOGRAPHY_CYCLE: { soft: 2, hard: 3 },
  ERROR_STATUS_CHURN: { soft: 3, hard: 5 },
  REASONING_INERTIA: { soft: 3, hard: 0 },
};
const DEFAULT_WINDOW = 32;
const DEFAULT_MAX_CYCLE = 6;
const DEFAULT_REASONING_KINDS = ['model.reasoning', 'agent.thought'];
const DEFAULT_SIMILARITY = 0.85;
// Long texts are compared on their first tokens: enough to tell a repeat, bounded in cost.
const MAX_TOKENS = 256;

/**
 * Checks a `break` config.
 * @throws ProfileError for an unknown key or pattern, a bad type, or thresholds out of order
 */
export function parseBreakConfig(config: PresetConfig): BreakSettings {
  const window = config.count('window', DEFAULT_WINDOW);
  const maxCycle = config.count('max_cycle', DEFAULT_MAX_CYCLE);
  if (maxCycle < 1) throw config.error('max_cycle', 'expected an integer >= 1');
  if (window < 2 * maxCycle) throw config.error('window', `expected at least twice max_cycle (${2 * maxCycle}), so a cycle can be seen recurring`);
  const patterns = config.values['patterns'] ?? {};
  if (patterns === null || typeof patterns !== 'object' || Array.isArray(patterns)) throw config.error('patterns', 'expected a mapping of pattern names to true, false or {soft, hard}');
  const entries = patterns as Record<string, unknown>;
  for (const name of Object.keys(entries)) {
    if (!(LOOP_PATTERNS as readonly string[]).includes(name)) throw config.error(['patterns', name], `unknown pattern; expected ${LOOP_PATTERNS.join(', ')}`);
  }
  const thresholds: Partial<Record<LoopPattern, Thresholds>> = {};
  for (const pattern of LOOP_PATTERNS) {
    const entry = entries[pattern] ?? true;
    if (entry === false) continue;
    let { soft, hard } = DEFAULT_THRESHOLDS[pattern];
    if (config.has('soft')) soft = config.count('soft', soft);
    if (config.has('hard')) hard = config.count('hard', hard);
    if (pattern === 'ACTION_FIXATION' && config.has('max_identical_intents')) hard = config.count('max_identical_intents', hard);
    if (entry !== true) {
      if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) throw config.error(['patterns', pattern], 'expected true, false or {soft, hard}');
      const own = entry as Record<string, unknown>;
      for (const key of Object.keys(own)) if (key !== 'soft' && key !== 'hard') throw config.error(['patterns', pattern, key], 'unknown key; expected soft, hard');
      soft = thresholdAt(config, [pattern, 'soft'], own['soft'], soft);
      hard = thresholdAt(config, [pattern, 'hard'], own['hard'], hard);
    }
    // Point at the key the values came from: the pattern's own entry, else the shared ones.
    const at = entry !== true ? ['patterns', pattern] : config.has('hard') ? ['hard'] : ['soft'];
    if (soft > 0 && hard > 0 && hard <= soft) throw config.error(at, `the hard threshold (${hard}) must be above the soft one (${soft}) for ${pattern}`);
    if (pattern !== 'REASONING_INERTIA' && pattern !== 'ERROR_STATUS_CHURN' && Math.min(...[soft, hard].filter((t) => t > 0)) < 2) {
      throw config.error(at, `a repeat of ${pattern} needs at least 2 occurrences`);
    }
    thresholds[pattern] = { soft, hard };
  }
  return { window, maxCycle, thresholds, reasoningKinds: config.texts('reasoning_kinds', DEFAULT_REASONING_KINDS), similarity: config.ratio('similarity', DEFAULT_SIMILARITY) };
}

function thresholdAt(config: PresetConfig, keys: readonly string[], value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) throw config.error(['patterns', ...keys], `expected an integer >= 0, got ${JSON.stringify(value)}`);
  return value;
}

/** One step: a call and what came of it. */
interface Step {
  readonly tool: string;
  readonly call: string;
  readonly fingerprint: string;
  /** The event that opened the step (its `tool.intent`, else its `tool.call`). */
  readonly hash: string;
  readonly eventId: string;
  /** The failure status, or null for a success (or no outcome). */
  readonly failure: string | null;
}

/** The step being recorded, before its outcome. */
interface OpenStep {
  readonly tool: string;
  readonly call: string;
  readonly hash: string;
  readonly eventId: string;
  called: boolean;
}

/** A run of one pattern, with the levels it already alerted at. */
interface Run {
  readonly key: string;
  soft: boolean;
  hard: boolean;
}

/** A pattern seen at this step. */
interface Sighting {
  readonly pattern: LoopPattern;
  readonly run: string;
  readonly occurrences: number;
  readonly entry: { readonly hash: string; readonly eventId: string };
  readonly recurrence: { readonly hash: string; readonly eventId: string };
  readonly steps: readonly Step[];
  readonly detail: string;
}

const STEP_KINDS = ['tool.intent', 'tool.call', 'tool.result', 'tool.error', 'constraint.violated', 'constraint.approval_required', 'constraint.approved'];

/** A `break` observer. */
export class BreakObserver implements Observer {
  readonly preset = 'break';
  readonly kinds: readonly string[];
  private readonly ring: (Step | undefined)[];
  /** Consecutive steps equal to the step `p` before them, per cycle length `p` (index p). */
  private readonly sameAsBefore: number[];
  /** How many steps in the ring have each call fingerprint (a call not in it is a new action). */
  private readonly calls = new Map<string, number>();
  private count = 0;
  private open: OpenStep | null = null;
  private cycleRun: Run | null = null;
  private churn: { first: Step; flips: number; last: string; statuses: string[]; run: Run } | null = null;
  private inertia: { tokens: ReadonlySet<string>; count: number; first: { readonly hash: string; readonly eventId: string }; run: Run } | null = null;
  private stopRequest: string | null = null;

  constructor(
    readonly id: string,
    private readonly settings: BreakSettings,
  ) {
    this.kinds = [...STEP_KINDS, ...settings.reasoningKinds];
    this.ring = new Array<Step | undefined>(settings.window);
    this.sameAsBefore = new Array<number>(settings.maxCycle + 1).fill(0);
  }

  onEvent(event: ObservedEvent, context: ObserverContext): void {
    const p = event.payload;
    switch (event.kind) {
      case 'tool.intent':
      case 'tool.call': {
        const tool = toolOf(p) ?? '(no tool)';
        const call = callFingerprint(tool, p['args']);
        if (event.kind === 'tool.call' && this.open !== null && !this.open.called && this.open.call === call) {
          this.open.called = true;
          return;
        }
        this.closeStep('none', null, context);
        if (!this.calls.has(call)) this.inertia = null;
        this.open = { tool, call, hash: event.content_hash, eventId: event.event_id, called: event.kind === 'tool.call' };
        return;
      }
      case 'tool.result':
        if (this.open !== null && toolOf(p) === this.open.tool) this.closeStep(`result:${canonicalJson(p['result'] ?? null, 'result')}`, failureOfResult(p['result']), context);
        return;
      case 'tool.error':
        if (this.open !== null && toolOf(p) === this.open.tool) this.closeStep(`error:${canonicalJson(p['error'] ?? null, 'error')}`, failureOfError(p['error']), context);
        return;
      case 'constraint.violated': {
        const rule = p['rule'] as JsonObject | null | undefined;
        // A refusal because this very observer stopped the session is not another step of the loop.
        if (this.open === null || rule?.['type'] === 'observer_break' || p['audit_only'] === true) return;
        const type = typeof rule?.['type'] === 'string' ? rule['type'] : 'policy';
        this.closeStep(`denied:${type}:${String(p['message'])}`, `denied:${type}`, context);
        return;
      }
      case 'constraint.approval_required':
        if (this.open !== null) this.closeStep('held', null, context);
        return;
      case 'constraint.approved':
        // The stop was lifted: whatever the loop was, a human chose to go on; start afresh.
        if (this.stopRequest !== null && p['request_id'] === this.stopRequest) this.reset();
        return;
      default:
        this.onReasoning(event, context);
    }
  }

  private reset(): void {
    this.ring.fill(undefined);
    this.sameAsBefore.fill(0);
    this.calls.clear();
    this.count = 0;
    this.open = null;
    this.cycleRun = null;
    this.churn = null;
    this.inertia = null;
    this.stopRequest = null;
  }

  saveState(): JsonValue {
    const { churn, inertia } = this;
    return {
      settings: settingsJson(this.settings),
      ring: this.ring.map((step) => (step === undefined ? null : { ...step })),
      same_as_before: [...this.sameAsBefore],
      count: this.count,
      open: this.open === null ? null : { ...this.open },
      cycle_run: this.cycleRun === null ? null : { ...this.cycleRun },
      churn: churn === null ? null : { first: { ...churn.first }, flips: churn.flips, last: churn.last, statuses: [...churn.statuses], run: { ...churn.run } },
      inertia: inertia === null ? null : { tokens: [...inertia.tokens], count: inertia.count, first: { ...inertia.first }, run: { ...inertia.run } },
      stop_request: this.stopRequest,
    };
  }

  restoreState(state: unknown): boolean {
    const s = state as Partial<Record<string, unknown>> | null;
    const { window, maxCycle } = this.settings;
    if (typeof s !== 'object' || s === null || canonicalJson(s['settings'] ?? null, 'settings') !== canonicalJson(settingsJson(this.settings), 'settings')) return false;
    const ring = s['ring'];
    const same = s['same_as_before'];
    const churn = s['churn'] as Partial<Record<string, unknown>> | null | undefined;
    const inertia = s['inertia'] as Partial<Record<string, unknown>> | null | undefined;
    const open = s['open'] as Partial<Record<string, unknown>> | null | undefined;
    if (!Array.isArray(ring) || ring.length !== window || !ring.every((step) => step === null || isStep(step))) return false;
    if (!Array.isArray(same) || same.length !== maxCycle + 1 || !same.every(isCount) || !isCount(s['count'])) return false;
    if (open !== null && !(isStepStart(open) && typeof open['called'] === 'boolean')) return false;
    if (!(s['cycle_run'] === null || isRun(s['cycle_run']))) return false;
    if (churn !== null && !(typeof churn === 'object' && isStep(churn['first']) && isCount(churn['flips']) && typeof churn['last'] === 'string' && isStrings(churn['statuses']) && isRun(churn['run']))) return false;
    if (inertia !== null && !(typeof inertia === 'object' && isStrings(inertia['tokens']) && isCount(inertia['count']) && isMark(inertia['first']) && isRun(inertia['run']))) return false;
    if (!(s['stop_request'] === null || typeof s['stop_request'] === 'string')) return false;
    this.reset();
    ring.forEach((step: Step | null, at) => {
      if (step === null) return;
      this.ring[at] = step;
      this.calls.set(step.call, (this.calls.get(step.call) ?? 0) + 1);
    });
    same.forEach((value: number, at) => (this.sameAsBefore[at] = value));
    this.count = s['count'] as number;
    this.open = (open ?? null) as OpenStep | null;
    this.cycleRun = s['cycle_run'] as Run | null;
    this.churn = (churn ?? null) as BreakObserver['churn'];
    this.inertia = inertia === null || inertia === undefined ? null : { ...(inertia as NonNullable<BreakObserver['inertia']>), tokens: new Set(inertia['tokens'] as string[]) };
    this.stopRequest = s['stop_request'] as string | null;
    return true;
  }

  /** Ends the open step with its outcome, remembers it, and looks for the patterns. */
  private closeStep(outcome: string, failure: string | null, context: ObserverContext): void {
    const open = this.open;
    if (open === null) return;
    this.open = null;
    const step: Step = { tool: open.tool, call: open.call, fingerprint: stepFingerprint(open.call, outcome), hash: open.hash, eventId: open.eventId, failure };
    const window = this.settings.window;
    const n = this.count++;
    const evicted = this.ring[n % window];
    if (evicted !== undefined) {
      const left = (this.calls.get(evicted.call) ?? 1) - 1;
      if (left === 0) this.calls.delete(evicted.call);
      else this.calls.set(evicted.call, left);
    }
    this.ring[n % window] = step;
    this.calls.set(step.call, (this.calls.get(step.call) ?? 0) + 1);
    for (let period = 1; period <= this.settings.maxCycle; period++) {
      const before = n >= period ? this.ring[(n - period) % window] : undefined;
      this.sameAsBefore[period] = before !== undefined && before.fingerprint === step.fingerprint ? (this.sameAsBefore[period] ?? 0) + 1 : 0;
    }
    const cycle = this.cycleAt(n);
    const churn = this.churnAt(step);
    const sighting = cycle ?? churn;
    if (sighting !== null) this.report(sighting, context);
  }

  /** The shortest cycle the last steps repeat, if any (a repeated step is a cycle of one). */
  private cycleAt(n: number): Sighting | null {
    const { window, maxCycle } = this.settings;
    for (let period = 1; period <= maxCycle; period++) {
      const same = this.sameAsBefore[period] ?? 0;
      if (same < period) continue;
      const pattern: LoopPattern = period === 1 ? 'ACTION_FIXATION' : period === 2 ? 'OSCILLATION_CYCLE' : 'CHOREOGRAPHY_CYCLE';
      if (this.settings.thresholds[pattern] === undefined) {
        this.cycleRun = null;
        return null;
      }
      // Whole occurrences, aligned on the latest one and counted within the window (the ring
      // forgets what came before it).
      const recurrenceAt = n - period + 1 - (same % period);
      const earliest = Math.max(n - same - period + 1, n - window + 1);
      const repeats = Math.floor((recurrenceAt - earliest) / period);
      const occurrences = repeats + 1;
      const entryAt = recurrenceAt - repeats * period;
      const entry = this.ring[entryAt % window] as Step;
      const recurrence = this.ring[recurrenceAt % window] as Step;
      const steps = Array.from({ length: period }, (_, i) => this.ring[(recurrenceAt + i) % window] as Step);
      // One run from its first step on, however far the window has moved since.
      const run = `${pattern}:${period}:${n - same - period + 1}`;
      const tools = steps.map((s) => s.tool);
      const detail =
        pattern === 'ACTION_FIXATION'
          ? `${tools[0] ?? ''} was called ${occurrences} times in a row with the same arguments and the same outcome`
          : pattern === 'OSCILLATION_CYCLE'
            ? `the agent alternated ${occurrences} times between ${tools.join(' and ')} with the same arguments and outcomes`
            : `the sequence ${tools.join(' → ')} recurred ${occurrences} times with the same arguments and outcomes`;
      return { pattern, run, occurrences, entry: { hash: entry.hash, eventId: entry.eventId }, recurrence: { hash: recurrence.hash, eventId: recurrence.eventId }, steps, detail };
    }
    this.cycleRun = null;
    return null;
  }

  /** A run of failures whose status flipped at least once. */
  private churnAt(step: Step): Sighting | null {
    if (step.failure === null) {
      this.churn = null;
      return null;
    }
    if (this.churn === null) {
      this.churn = { first: step, flips: 0, last: step.failure, statuses: [step.failure], run: { key: `ERROR_STATUS_CHURN:${step.eventId}`, soft: false, hard: false } };
      return null;
    }
    const churn = this.churn;
    if (step.failure !== churn.last) {
      churn.flips++;
      churn.last = step.failure;
      if (!churn.statuses.includes(step.failure) && churn.statuses.length < this.settings.window) churn.statuses.push(step.failure);
    }
    if (churn.flips === 0 || this.settings.thresholds.ERROR_STATUS_CHURN === undefined) return null;
    return {
      pattern: 'ERROR_STATUS_CHURN',
      run: churn.run.key,
      occurrences: churn.flips,
      entry: { hash: churn.first.hash, eventId: churn.first.eventId },
      recurrence: { hash: step.hash, eventId: step.eventId },
      steps: [step],
      detail: `the last failures flipped status ${churn.flips} times (${churn.statuses.join(', ')}) without a success`,
    };
  }

  private onReasoning(event: ObservedEvent, context: ObserverContext): void {
    const thresholds = this.settings.thresholds.REASONING_INERTIA;
    const text = reasoningText(event.payload);
    if (thresholds === undefined || text === null) return;
    const tokens = tokenSet(text);
    const current = this.inertia;
    if (current === null || jaccard(current.tokens, tokens) < this.settings.similarity) {
      this.inertia = { tokens, count: 1, first: { hash: event.content_hash, eventId: event.event_id }, run: { key: `REASONING_INERTIA:${event.event_id}`, soft: false, hard: false } };
      return;
    }
    current.count++;
    this.report(
      {
        pattern: 'REASONING_INERTIA',
        run: current.run.key,
        occurrences: current.count,
        entry: current.first,
        recurrence: { hash: event.content_hash, eventId: event.event_id },
        steps: [],
        detail: `the reasoning repeated ${current.count} times without a new action`,
      },
      context,
    );
  }

  /** Alerts at a threshold the run has reached and not yet alerted at: soft nudges, hard stops. */
  private report(sighting: Sighting, context: ObserverContext): void {
    const thresholds = this.settings.thresholds[sighting.pattern];
    // Stopped: the calls refused meanwhile are not news.
    if (thresholds === undefined || this.stopRequest !== null) return;
    const run = this.runOf(sighting);
    const hard = thresholds.hard > 0 && sighting.occurrences >= thresholds.hard && !run.hard;
    const soft = !hard && thresholds.soft > 0 && sighting.occurrences >= thresholds.soft && !run.soft;
    if (!hard && !soft) return;
    run.soft = true;
    run.hard ||= hard;
    const directive = directiveOf(sighting, hard);
    const alert = context.emit('observer.alert', {
      type: 'loop_detected',
      pattern: sighting.pattern,
      level: hard ? 'hard' : 'soft',
      message: `${sighting.pattern}: ${sighting.detail}`,
      observer_id: this.id,
      occurrences: sighting.occurrences,
      threshold: hard ? thresholds.hard : thresholds.soft,
      cycle: sighting.steps.map((s) => ({ tool: s.tool, fingerprint: shortFingerprint(s.fingerprint) })),
      cycle_entry_hash: sighting.entry.hash,
      cycle_entry_event_id: sighting.entry.eventId,
      cycle_recurrence_hash: sighting.recurrence.hash,
      cycle_recurrence_event_id: sighting.recurrence.eventId,
      remedial_directive: directive,
    });
    if (hard) this.stopRequest = context.stop({ observer_id: this.id, pattern: sighting.pattern, alert_event_id: alert.event_id });
    else context.emit('membrane.nudge', { message: directive.suggestion, source: 'observer', observer_id: this.id, pattern: sighting.pattern, alert_event_id: alert.event_id, remedial_directive: directive });
  }

  private runOf(sighting: Sighting): Run {
    if (sighting.pattern === 'ERROR_STATUS_CHURN') return (this.churn as { run: Run }).run;
    if (sighting.pattern === 'REASONING_INERTIA') return (this.inertia as { run: Run }).run;
    if (this.cycleRun?.key !== sighting.run) this.cycleRun = { key: sighting.run, soft: false, hard: false };
    return this.cycleRun;
  }
}

/** The settings as JSON (a disabled pattern is absent). */
function settingsJson(settings: BreakSettings): JsonValue {
  return { ...settings, thresholds: { ...settings.thresholds } as Record<string, JsonValue>, reasoningKinds: [...settings.reasoningKinds] };
}

// Shapes of a saved state, read back from a file.
function isStrings(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}
function isMark(value: unknown): boolean {
  const v = value as Partial<Record<string, unknown>> | null;
  return typeof v === 'object' && v !== null && typeof v['hash'] === 'string' && typeof v['eventId'] === 'string';
}
function isStepStart(value: unknown): value is Partial<Record<string, unknown>> {
  const v = value as Partial<Record<string, unknown>> | null;
  return isMark(v) && typeof v?.['tool'] === 'string' && typeof v['call'] === 'string';
}
function isStep(value: unknown): value is Step {
  const v = value as Partial<Record<string, unknown>> | null;
  return isStepStart(v) && typeof v?.['fingerprint'] === 'string' && (v['failure'] === null || typeof v['failure'] === 'string');
}
function isRun(value: unknown): value is Run {
  const v = value as Partial<Record<string, unknown>> | null;
  return typeof v === 'object' && v !== null && typeof v['key'] === 'string' && typeof v['soft'] === 'boolean' && typeof v['hard'] === 'boolean';
}

/** What the host is told to do about a loop. */
export interface RemedialDirective {
  readonly action: 'stop' | 'change_strategy' | 'back_off' | 'act';
  readonly reason: string;
  /** The calls (tool and call fingerprint) or tools not to repeat. */
  readonly avoid: readonly { readonly tool: string; readonly fingerprint?: string }[];
  readonly suggestion: string;
}

const SUGGESTIONS: Readonly<Record<LoopPattern, { action: RemedialDirective['action']; suggestion: string }>> = {
  ACTION_FIXATION: { action: 'change_strategy', suggestion: 'Use the result already received, change the arguments or try another tool: repeating the call will not change its outcome.' },
  OSCILLATION_CYCLE: { action: 'change_strategy', suggestion: 'Commit to one of the two actions, or gather new information before switching again.' },
  CHOREOGRAPHY_CYCLE: { action: 'change_strategy', suggestion: 'Step out of the sequence: sum up what it returned and take a different next step.' },
  ERROR_STATUS_CHURN: { action: 'back_off', suggestion: 'Stop retrying: report the failure, wait before trying again, or use another tool.' },
  REASONING_INERTIA: { action: 'act', suggestion: 'Take a new action, or conclude with what is already known.' },
};

function directiveOf(sighting: Sighting, hard: boolean): RemedialDirective {
  const avoid = [...new Map(sighting.steps.map((s) => [s.call, { tool: s.tool, fingerprint: shortFingerprint(s.call) }])).values()];
  const base = SUGGESTIONS[sighting.pattern];
  return hard
    ? { action: 'stop', reason: sighting.detail, avoid, suggestion: 'The session is stopped: no further tool call runs until its stop request is approved.' }
    : { action: base.action, reason: sighting.detail, avoid, suggestion: base.suggestion };
}

/** The status of a result that reports a failure (`error`, `ok: false`, an HTTP status >= 400), else null. */
function failureOfResult(result: JsonValue | undefined): string | null {
  if (!isJsonObject(result)) return null;
  const r = result;
  const status = r['status'] ?? r['status_code'];
  const numeric = typeof status === 'number' ? status : null;
  if (r['error'] !== undefined && r['error'] !== null && r['error'] !== false) return statusText(r['error']);
  if (r['ok'] === false) return status === undefined ? 'not_ok' : statusText(status);
  if (numeric !== null && numeric >= 400) return String(numeric);
  return null;
}

/** The status of a tool error: its code or status when it has one, else its name and message. */
function failureOfError(error: JsonValue | undefined): string {
  if (isJsonObject(error)) {
    const e = error;
    const code = e['code'] ?? e['status'] ?? e['status_code'];
    if (code !== undefined && code !== null) return statusText(code);
  }
  return statusText(error ?? null);
}

function isJsonObject(value: JsonValue | undefined): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof PythonNumber);
}

function statusText(value: JsonValue): string {
  return typeof value === 'string' ? value : canonicalJson(value, 'status');
}

const TEXT_KEYS = ['text', 'reasoning', 'thought', 'content'];

function reasoningText(payload: JsonObject): string | null {
  for (const key of TEXT_KEYS) {
    const value = payload[key];
    if (typeof value === 'string' && value.trim() !== '') return value;
  }
  return null;
}

function tokenSet(text: string): ReadonlySet<string> {
  const tokens = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  return new Set(tokens.slice(0, MAX_TOKENS));
}

function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  let shared = 0;
  for (const token of a) if (b.has(token)) shared++;
  return shared / (a.size + b.size - shared);
}
