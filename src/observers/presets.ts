/**
 * Which observers a session gets (reference §13.1, §9.4): the profile's `observers[]` entries
 * `{preset, id?, config?}`, then one per spectrum service whose preset no entry already uses
 * (`{preset, id: "spectrum-<service>"}`, config = the service's defaults overlaid by
 * `spectrum.service_config.<service>`). Every entry is checked when the agent is made, so a bad
 * one is a {@link ProfileError} naming the file, line and key, never a surprise at the first event.
 */

import { profileError, type KeyPath, type ProfileSource } from '../policy/profile-source.js';
import type { ServiceActivation, Spectrum } from '../policy/spectrum.js';
import { BREAK_KEYS, BreakObserver, parseBreakConfig } from './break.js';
import type { Observer } from './bus.js';
import { PresetConfig } from './config.js';
import { GOAL_DRIFT_KEYS, GoalDriftObserver, parseGoalDriftConfig } from './goal-drift.js';
import { LIMIT_KEYS, LimitObserver, parseLimitConfig } from './limit.js';
import { MONITOR_KEYS, MonitorObserver, parseMonitorConfig } from './monitor.js';
import { parseScheduleSloConfig, SCHEDULE_SLO_KEYS, ScheduleSloObserver } from './schedule-slo.js';

/** A packaged preset. */
export type PresetName = 'monitor' | 'limit' | 'break' | 'goal_drift' | 'schedule_slo';

interface Preset {
  /** Aura's default observer id. */
  readonly defaultId: string;
  readonly keys: readonly string[];
  /** Defaults when the preset is attached as a spectrum service (reference §9.4). */
  readonly serviceDefaults: Readonly<Record<string, unknown>>;
  /** Checks the config now; the observer is made per session. */
  compile(config: PresetConfig, variables: Readonly<Record<string, unknown>>): (id: string) => Observer;
}

/** A preset whose config `parse` checks once, and whose observers `make` builds per session. */
function preset<S>(
  defaultId: string,
  keys: readonly string[],
  parse: (config: PresetConfig, variables: Readonly<Record<string, unknown>>) => S,
  make: (id: string, settings: S) => Observer,
  serviceDefaults: Readonly<Record<string, unknown>> = {},
): Preset {
  return {
    defaultId,
    keys,
    serviceDefaults,
    compile: (config, variables) => {
      const settings = parse(config, variables);
      return (id) => make(id, settings);
    },
  };
}

const PRESETS: Readonly<Record<PresetName, Preset>> = {
  monitor: preset('monitor', MONITOR_KEYS, parseMonitorConfig, (id, settings) => new MonitorObserver(id, settings)),
  limit: preset('limit', LIMIT_KEYS, parseLimitConfig, (id, settings) => new LimitObserver(id, settings), { max_tool_calls_per_minute: 30, max_tokens_per_step: 8000, warn_ratio: 0.8 }),
  break: preset('break', BREAK_KEYS, parseBreakConfig, (id, settings) => new BreakObserver(id, settings)),
  goal_drift: preset('goal-drift', GOAL_DRIFT_KEYS, parseGoalDriftConfig, (id, settings) => new GoalDriftObserver(id, settings)),
  schedule_slo: preset('schedule-slo', SCHEDULE_SLO_KEYS, parseScheduleSloConfig, (id, settings) => new ScheduleSloObserver(id, settings)),
};

/** The preset names, as a profile or a spectrum service may give them. */
export const PRESET_NAMES = Object.keys(PRESETS) as PresetName[];

/** One observer a session will get. */
export interface ObserverSpec {
  readonly id: string;
  readonly preset: PresetName;
  readonly source: 'profile' | 'spectrum';
  /** A fresh observer for one session. */
  create(): Observer;
}

/** Every observer of a profile, and how its spectrum services were wired. */
export interface ObserverPlan {
  readonly specs: readonly ObserverSpec[];
  readonly activation: ServiceActivation;
}

const ENTRY_KEYS = ['preset', 'id', 'config'];

/** `goal-drift` and `Goal_Drift` are `goal_drift`. */
function presetName(value: string): PresetName | null {
  const name = value.trim().toLowerCase().replaceAll('-', '_');
  return (PRESET_NAMES as readonly string[]).includes(name) ? (name as PresetName) : null;
}

/**
 * Checks `observers[]` and wires the spectrum services.
 * @throws ProfileError for an unknown preset, key or service (with `strict_services`), a bad config value, or a duplicate id
 */
export function planObservers(
  entries: { readonly value: unknown; readonly source: ProfileSource },
  spectrum: { readonly value: Spectrum | null; readonly source: ProfileSource },
  variables: Readonly<Record<string, unknown>>,
): ObserverPlan {
  const specs: ObserverSpec[] = [];
  const ids = new Map<string, KeyPath>();
  const add = (spec: ObserverSpec, source: ProfileSource, at: KeyPath): void => {
    if (ids.has(spec.id)) throw profileError(source, at, `duplicate observer id ${JSON.stringify(spec.id)}`);
    ids.set(spec.id, at);
    specs.push(spec);
  };

  const list = entries.value ?? [];
  if (!Array.isArray(list)) throw profileError(entries.source, ['observers'], 'expected a list of {preset, id?, config?}');
  list.forEach((entry: unknown, i) => {
    const at: KeyPath = ['observers', i];
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) throw profileError(entries.source, at, 'expected {preset, id?, config?}');
    const fields = entry as Record<string, unknown>;
    for (const key of Object.keys(fields)) if (!ENTRY_KEYS.includes(key)) throw profileError(entries.source, [...at, key], `unknown key for an observer; expected ${ENTRY_KEYS.join(', ')}`);
    const name = typeof fields['preset'] === 'string' ? presetName(fields['preset']) : null;
    if (name === null) throw profileError(entries.source, [...at, 'preset'], `unknown preset ${JSON.stringify(fields['preset'])}; expected one of ${PRESET_NAMES.join(', ')}`);
    const id = fields['id'] ?? PRESETS[name].defaultId;
    if (typeof id !== 'string' || id.trim() === '') throw profileError(entries.source, [...at, 'id'], 'expected a non-empty observer id');
    const preset = PRESETS[name];
    const create = preset.compile(PresetConfig.read(fields['config'], preset.keys, entries.source, [...at, 'config']), variables);
    add({ id, preset: name, source: 'profile', create: () => create(id) }, entries.source, at);
  });

  const activation = { activated: [] as string[], skipped_explicit: [] as string[], unknown: [] as string[] };
  const declared = spectrum.value;
  if (declared === null) return { specs, activation };
  const serviceConfig = declared.service_config;
  if (serviceConfig === null || typeof serviceConfig !== 'object' || Array.isArray(serviceConfig)) throw profileError(spectrum.source, ['spectrum', 'service_config'], 'expected a mapping of service names to config');
  for (const key of Object.keys(serviceConfig)) {
    if (presetName(key) === null) throw profileError(spectrum.source, ['spectrum', 'service_config', key], `unknown service; expected one of ${PRESET_NAMES.join(', ')}`);
  }
  for (const service of declared.services) {
    const name = presetName(service);
    if (name === null) {
      if (declared.strict_services) throw profileError(spectrum.source, ['spectrum', 'services'], `unknown service ${JSON.stringify(service)} (strict_services); expected one of audit, ${PRESET_NAMES.join(', ')}`);
      activation.unknown.push(service);
      continue;
    }
    if (specs.some((spec) => spec.preset === name)) {
      activation.skipped_explicit.push(service);
      continue;
    }
    const preset = PRESETS[name];
    const configKey = Object.keys(serviceConfig).find((key) => presetName(key) === name);
    const own = configKey === undefined ? {} : serviceConfig[configKey];
    const at: KeyPath = configKey === undefined ? ['spectrum', 'services'] : ['spectrum', 'service_config', configKey];
    if (own !== null && (typeof own !== 'object' || Array.isArray(own))) throw profileError(spectrum.source, at, `expected a mapping with the keys ${preset.keys.join(', ')}`);
    const config = PresetConfig.read({ ...preset.serviceDefaults, ...(own as Record<string, unknown> | null) }, preset.keys, spectrum.source, at);
    const create = preset.compile(config, variables);
    const id = `spectrum-${name}`;
    add({ id, preset: name, source: 'spectrum', create: () => create(id) }, spectrum.source, at);
    activation.activated.push(service);
  }
  return { specs, activation };
}
