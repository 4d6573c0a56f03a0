/**
 * The `goal_drift` preset (reference §15.1): checks each action against the declared goal and
 * records `conformance.drift` `{type, reason, signature, observer_id, kind, tool, goal, event_id}`
 * when one strays: a forbidden topic in it, a required keyword missing, or (with keywords derived
 * from the goal) none of the goal's words in it. A drift identical to the previous one (same kind,
 * tool and reason) is not recorded again.
 *
 * Aura searched the JSON text of the payload, keys included, so a forbidden topic equal to a key
 * such as `tool` matched every call (§21.25); here only the values are searched, and the
 * `membrane` marker the session adds is not one of them.
 */

import { toolOf } from '../policy/rules.js';
import type { JsonValue } from '../spine/json-reader.js';
import { PythonNumber } from '../spine/python-number.js';
import type { ObservedEvent, Observer, ObserverContext } from './bus.js';
import type { PresetConfig } from './config.js';

/** The config keys of `goal_drift`. */
export const GOAL_DRIFT_KEYS = ['goal', 'forbidden_topics', 'required_keywords', 'derive_keywords', 'event_kinds'];

/** The checked config of a `goal_drift` observer. */
export interface GoalDriftSettings {
  readonly goal: string | null;
  readonly forbidden: readonly string[];
  /** Keywords of which one must be present (derived) or each (declared). */
  readonly keywords: readonly string[];
  readonly keywordsDeclared: boolean;
  readonly kinds: readonly string[];
}

const STOP_WORDS = new Set(['only', 'with', 'from', 'that', 'this', 'into', 'daily', 'must', 'the', 'and', 'for']);

/**
 * Checks a `goal_drift` config; the goal defaults to the profile's `variables.goal`.
 * @throws ProfileError when there is nothing to check against
 */
export function parseGoalDriftConfig(config: PresetConfig, variables: Readonly<Record<string, unknown>>): GoalDriftSettings {
  const declaredGoal = variables['goal'];
  const goal = config.text('goal', typeof declaredGoal === 'string' && declaredGoal.trim() !== '' ? declaredGoal : null);
  const forbidden = config.texts('forbidden_topics', []).map((t) => t.toLowerCase());
  const required = config.texts('required_keywords', []).map((t) => t.toLowerCase());
  const derive = config.flag('derive_keywords', true);
  const keywords = required.length > 0 ? required : derive && goal !== null ? derivedKeywords(goal) : [];
  if (forbidden.length === 0 && keywords.length === 0) {
    throw config.error([], 'goal_drift has nothing to check: give a goal (config.goal or variables.goal), forbidden_topics or required_keywords');
  }
  return { goal, forbidden, keywords, keywordsDeclared: required.length > 0, kinds: config.texts('event_kinds', ['tool.intent']) };
}

/** Aura's rule: the first three lower-case words of the goal longer than three letters, stop words out. */
export function derivedKeywords(goal: string): string[] {
  return (goal.toLowerCase().match(/[a-z0-9]+/g) ?? []).filter((word) => word.length > 3 && !STOP_WORDS.has(word)).slice(0, 3);
}

/** A `goal_drift` observer. */
export class GoalDriftObserver implements Observer {
  readonly preset = 'goal_drift';
  readonly kinds: readonly string[];
  private lastSignature: string | null = null;

  constructor(
    readonly id: string,
    private readonly settings: GoalDriftSettings,
  ) {
    this.kinds = settings.kinds;
  }

  onEvent(event: ObservedEvent, context: ObserverContext): void {
    const text = valuesText(event.payload, '').toLowerCase();
    const reason = this.driftOf(text);
    if (reason === null) return;
    const tool = toolOf(event.payload);
    const signature = `${event.kind}:${tool ?? ''}:${reason}`;
    if (signature === this.lastSignature) return;
    this.lastSignature = signature;
    context.emit('conformance.drift', { type: 'conformance.drift', reason, signature, observer_id: this.id, kind: event.kind, tool, goal: this.settings.goal, event_id: event.event_id });
  }

  private driftOf(text: string): string | null {
    const topic = this.settings.forbidden.find((t) => text.includes(t));
    if (topic !== undefined) return `forbidden topic '${topic}' in ${this.kindsLabel()} payload`;
    const { keywords, keywordsDeclared } = this.settings;
    if (keywords.length === 0) return null;
    if (keywordsDeclared) {
      const missing = keywords.find((k) => !text.includes(k));
      return missing === undefined ? null : `missing required keyword '${missing}'`;
    }
    return keywords.some((k) => text.includes(k)) ? null : `off-scope relative to goal (none of: ${keywords.join(', ')})`;
  }

  private kindsLabel(): string {
    return this.settings.kinds.length === 1 && this.settings.kinds[0] === 'tool.intent' ? 'tool' : 'event';
  }
}

/** The string, number and boolean values of a payload, space-separated (keys and the membrane marker left out). */
function valuesText(value: JsonValue | undefined, key: string): string {
  if (value === null || value === undefined || key === 'membrane') return '';
  if (value instanceof PythonNumber) return value.canonical;
  if (Array.isArray(value)) return value.map((item) => valuesText(item, '')).join(' ');
  if (typeof value === 'object') return Object.entries(value).map(([k, item]) => valuesText(item, k)).join(' ');
  return String(value);
}
