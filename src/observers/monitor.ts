/**
 * The `monitor` preset (reference §13.2): counts and rates. It counts events by kind and tool
 * calls by tool, and records them as an `observer.note` `{type: "monitor_summary", counts, rates}`
 * before the session closes (and every `report_every` events, when set). Like Aura's, it notes a
 * call repeated `max_identical_intents` times (`repeated_tool_intent`, off by default) and the
 * duration of each sequencer step (`step_timing`). Unlike Aura's it writes only to the trail (no
 * `log_path` file whose two writers clobbered each other, §21.23), and notes a repeated call once,
 * when it reaches the threshold, rather than on every further repeat.
 */

import { toolOf } from '../policy/rules.js';
import type { ObservedEvent, Observer, ObserverContext } from './bus.js';
import type { PresetConfig } from './config.js';
import { callFingerprint, shortFingerprint } from './fingerprint.js';

/** The config keys of `monitor`. */
export const MONITOR_KEYS = ['max_identical_intents', 'report_every'];

/** The checked config of a `monitor` observer. */
export interface MonitorSettings {
  /** Repeats of one call that earn a note; 0 = off. */
  readonly maxIdenticalIntents: number;
  /** Events between summary notes; 0 = only at close. */
  readonly reportEvery: number;
}

/** Checks a `monitor` config. */
export function parseMonitorConfig(config: PresetConfig): MonitorSettings {
  return { maxIdenticalIntents: config.count('max_identical_intents', 0), reportEvery: config.count('report_every', 0) };
}

// Distinct calls and kinds remembered; a long session must not grow these without end.
const MEMORY = 4096;
const MICROS_PER_MINUTE = 60_000_000;

/** A `monitor` observer. */
export class MonitorObserver implements Observer {
  readonly preset = 'monitor';
  private events = 0;
  private toolCalls = 0;
  private toolErrors = 0;
  private readonly byKind = new Map<string, number>();
  private readonly byTool = new Map<string, number>();
  private readonly repeats = new Map<string, number>();
  private readonly stepStarts = new Map<string, number>();
  private first: number | null = null;
  private last = 0;

  constructor(
    readonly id: string,
    private readonly settings: MonitorSettings,
  ) {}

  onEvent(event: ObservedEvent, context: ObserverContext): void {
    this.events++;
    this.first ??= event.micros;
    this.last = event.micros;
    bump(this.byKind, event.kind);
    const p = event.payload;
    switch (event.kind) {
      case 'tool.call': {
        const tool = toolOf(p) ?? '(no tool)';
        this.toolCalls++;
        bump(this.byTool, tool);
        if (this.settings.maxIdenticalIntents > 0) {
          const signature = callFingerprint(tool, p['args']);
          const count = bump(this.repeats, signature);
          if (count === this.settings.maxIdenticalIntents) {
            context.emit('observer.note', { type: 'repeated_tool_intent', tool, count, threshold: this.settings.maxIdenticalIntents, signature: shortFingerprint(signature), observer_id: this.id });
          }
        }
        break;
      }
      case 'tool.error':
        this.toolErrors++;
        break;
      case 'sequencer.step.start':
        if (event.step_id !== null) remember(this.stepStarts, event.step_id, event.micros);
        break;
      case 'sequencer.step.end': {
        const started = event.step_id === null ? undefined : this.stepStarts.get(event.step_id);
        if (started !== undefined && event.step_id !== null) {
          this.stepStarts.delete(event.step_id);
          context.emit('observer.note', { type: 'step_timing', step_id: event.step_id, elapsed_ms: (event.micros - started) / 1000, status: p['status'] ?? null, observer_id: this.id });
        }
        break;
      }
    }
    if (this.settings.reportEvery > 0 && this.events % this.settings.reportEvery === 0) this.summarize(context);
  }

  onClose(context: ObserverContext): void {
    this.summarize(context);
  }

  private summarize(context: ObserverContext): void {
    const minutes = this.first === null ? 0 : Math.max(context.now() - this.first, this.last - this.first) / MICROS_PER_MINUTE;
    const perMinute = (count: number): number | null => (minutes > 0 ? Math.round((count / minutes) * 1000) / 1000 : null);
    context.emit('observer.note', {
      type: 'monitor_summary',
      observer_id: this.id,
      counts: { events: this.events, by_kind: Object.fromEntries(this.byKind), tool_calls: this.toolCalls, by_tool: Object.fromEntries(this.byTool), tool_errors: this.toolErrors },
      rates: { elapsed_seconds: Math.round(minutes * 60 * 1000) / 1000, events_per_minute: perMinute(this.events), tool_calls_per_minute: perMinute(this.toolCalls) },
    });
  }
}

/** Adds one to a counter and returns the new count. */
function bump(counts: Map<string, number>, key: string): number {
  const count = (counts.get(key) ?? 0) + 1;
  remember(counts, key, count);
  return count;
}

function remember(map: Map<string, number>, key: string, value: number): void {
  if (!map.has(key) && map.size >= MEMORY) map.clear();
  map.set(key, value);
}
