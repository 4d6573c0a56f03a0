/**
 * The `limit` preset (reference §13.2): caps on events, tool calls, tokens and wall time. Passing
 * a cap records an `observer.alert` `{type: "<cap>_exceeded", cap, value, threshold, signature,
 * observer_id, message}`; reaching `warn_ratio` of it first records an `observer.note`
 * `{type: "<cap>_warning", …, warn_at}`. A running total (events, calls, session tokens, wall
 * time) alerts once; the per-minute call rate once per burst (it re-arms when the rate falls back
 * under its cap); the per-step token cap on every step over it. Aura's type names are kept for
 * the two caps Aura had (`rate_limit_*`, `token_budget_*`).
 */

import type { ObservedEvent, Observer, ObserverContext } from './bus.js';
import type { PresetConfig } from './config.js';

/** The config keys of `limit`. */
export const LIMIT_KEYS = ['max_events', 'max_tool_calls', 'max_tool_calls_per_minute', 'max_tokens_per_step', 'max_tokens', 'max_wall_seconds', 'warn_ratio'];

/** The checked config of a `limit` observer; 0 turns a cap off. */
export interface LimitSettings {
  readonly maxEvents: number;
  readonly maxToolCalls: number;
  readonly maxToolCallsPerMinute: number;
  readonly maxTokensPerStep: number;
  readonly maxTokens: number;
  readonly maxWallSeconds: number;
  readonly warnRatio: number;
}

/**
 * Checks a `limit` config.
 * @throws ProfileError for a bad value, or when no cap is set (a limit that limits nothing is a mistake)
 */
export function parseLimitConfig(config: PresetConfig): LimitSettings {
  const settings: LimitSettings = {
    maxEvents: config.count('max_events', 0),
    maxToolCalls: config.count('max_tool_calls', 0),
    maxToolCallsPerMinute: config.count('max_tool_calls_per_minute', 0),
    maxTokensPerStep: config.count('max_tokens_per_step', 0),
    maxTokens: config.count('max_tokens', 0),
    maxWallSeconds: config.has('max_wall_seconds') ? config.positive('max_wall_seconds', 1) : 0,
    warnRatio: config.ratio('warn_ratio', 0.8),
  };
  const caps = [settings.maxEvents, settings.maxToolCalls, settings.maxToolCallsPerMinute, settings.maxTokensPerStep, settings.maxTokens, settings.maxWallSeconds];
  if (caps.every((cap) => cap === 0)) throw config.error([], `set at least one cap: ${LIMIT_KEYS.filter((k) => k !== 'warn_ratio').join(', ')}`);
  return settings;
}

const TOKEN_KINDS = new Set(['tool.call', 'model.call', 'step.end', 'turn.end', 'tool.result']);
const MICROS_PER_MINUTE = 60_000_000;

/** One cap: warns once at the ratio, alerts once past it, until re-armed. */
class Cap {
  private warned = false;
  private exceeded = false;

  constructor(
    readonly name: string,
    private readonly type: string,
    private readonly threshold: number,
    private readonly warnRatio: number,
  ) {}

  get active(): boolean {
    return this.threshold > 0;
  }

  check(value: number, observerId: string, context: ObserverContext, unit: string): void {
    if (!this.active) return;
    if (value > this.threshold && !this.exceeded) {
      this.exceeded = true;
      this.warned = true;
      context.emit('observer.alert', { type: `${this.type}_exceeded`, cap: this.name, value, threshold: this.threshold, signature: `alert:${this.type}_exceeded:${this.threshold}`, observer_id: observerId, message: `${this.name}: ${value} ${unit} > ${this.threshold}` });
      return;
    }
    const warnAt = Math.floor(this.threshold * this.warnRatio);
    if (value >= warnAt && value <= this.threshold && !this.warned) {
      this.warned = true;
      context.emit('observer.note', { type: `${this.type}_warning`, cap: this.name, value, threshold: this.threshold, warn_at: warnAt, signature: `note:${this.type}_warning:${this.threshold}`, observer_id: observerId });
    }
  }

  /** Arms the cap again (the rate fell back under it). */
  rearm(): void {
    this.warned = false;
    this.exceeded = false;
  }
}

/** A `limit` observer. */
export class LimitObserver implements Observer {
  readonly preset = 'limit';
  private readonly events: Cap;
  private readonly calls: Cap;
  private readonly rate: Cap;
  private readonly stepTokens: Cap;
  private readonly tokens: Cap;
  private readonly wall: Cap;
  /** Times of the calls of the last minute; never more than the cap + 1 are needed. */
  private readonly recent: number[] = [];
  private counts = { events: 0, calls: 0, tokens: 0 };
  private start: number | null = null;

  constructor(
    readonly id: string,
    private readonly settings: LimitSettings,
  ) {
    const r = settings.warnRatio;
    this.events = new Cap('max_events', 'event_cap', settings.maxEvents, r);
    this.calls = new Cap('max_tool_calls', 'tool_call_cap', settings.maxToolCalls, r);
    this.rate = new Cap('max_tool_calls_per_minute', 'rate_limit', settings.maxToolCallsPerMinute, r);
    this.stepTokens = new Cap('max_tokens_per_step', 'token_budget', settings.maxTokensPerStep, r);
    this.tokens = new Cap('max_tokens', 'session_token_budget', settings.maxTokens, r);
    this.wall = new Cap('max_wall_seconds', 'wall_time', settings.maxWallSeconds, r);
  }

  onEvent(event: ObservedEvent, context: ObserverContext): void {
    this.start ??= event.micros;
    this.events.check(++this.counts.events, this.id, context, 'events');
    this.wall.check(Math.round((event.micros - this.start) / 1000) / 1000, this.id, context, 's');
    if (event.kind === 'tool.call' || event.kind === 'action.request') {
      this.calls.check(++this.counts.calls, this.id, context, 'tool calls');
      if (this.rate.active) this.checkRate(event.micros, context);
    }
    if (TOKEN_KINDS.has(event.kind)) {
      const tokens = tokensOf(event.payload);
      if (tokens !== null) {
        // Each step is judged on its own: a new step starts with a fresh cap.
        this.stepTokens.rearm();
        this.stepTokens.check(tokens, this.id, context, 'tokens in one step');
        this.counts.tokens += tokens;
        this.tokens.check(this.counts.tokens, this.id, context, 'tokens in the session');
      }
    }
  }

  private checkRate(micros: number, context: ObserverContext): void {
    const recent = this.recent;
    recent.push(micros);
    while (recent.length > 0 && (recent[0] as number) <= micros - MICROS_PER_MINUTE) recent.shift();
    if (recent.length > this.settings.maxToolCallsPerMinute + 1) recent.shift();
    if (recent.length < Math.floor(this.settings.maxToolCallsPerMinute * this.settings.warnRatio)) this.rate.rearm();
    this.rate.check(recent.length, this.id, context, 'tool calls in the last minute');
  }
}

/** Tokens an event reports (`tokens`, `token_count`, `total_tokens`, else prompt + completion), or null. */
function tokensOf(payload: Readonly<Record<string, unknown>>): number | null {
  for (const key of ['tokens', 'token_count', 'total_tokens']) {
    const value = Number(payload[key]);
    if (payload[key] !== undefined && payload[key] !== null && Number.isFinite(value)) return value;
  }
  const prompt = Number(payload['prompt_tokens'] ?? Number.NaN);
  const completion = Number(payload['completion_tokens'] ?? Number.NaN);
  if (Number.isFinite(prompt) || Number.isFinite(completion)) return (Number.isFinite(prompt) ? prompt : 0) + (Number.isFinite(completion) ? completion : 0);
  return null;
}
