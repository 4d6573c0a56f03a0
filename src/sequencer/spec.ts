/**
 * The declared steps of a sequencer (reference §16.1), checked when the profile is loaded: an
 * unknown step type, gate or middleware, a duplicate id, a `depends_on` or `when` naming a step
 * that does not run before it, or a tool step with no tool is a `ProfileError` naming the file,
 * line and key (Aura found an unknown type only when it ran: §16.1).
 *
 * ```yaml
 * sequencer:
 *   steps:
 *     - id: fetch
 *       type: tool                     # tool | skill | op | prompt | gate | subflow
 *       ref: crm.lookup                # the tool (skill: the skill id; config.tool the tool)
 *       config: { args: { id: 42 } }
 *       retry: { max: 2, backoff: exponential, delay_ms: 50 }
 *       middleware: [pii_mask]
 *     - id: send
 *       type: tool
 *       ref: mail.send
 *       depends_on: [fetch]
 *       gates: [human_confirm]
 *       when: { prior_step: fetch, field: found, equals: true }
 * ```
 */

import { profileError, type KeyPath, type ProfileSource } from '../policy/profile-source.js';
import { MIDDLEWARE_OPS } from '../middleware/middleware.js';

/** What a step does. */
export type StepType = 'tool' | 'skill' | 'op' | 'prompt' | 'gate' | 'subflow';

/** The step types, in the profile's spelling. */
export const STEP_TYPES: readonly StepType[] = ['tool', 'skill', 'op', 'prompt', 'gate', 'subflow'];

/** How long to wait before a retry: none, `delay_ms × attempt`, or `delay_ms × 2^(attempt-1)`. */
export type Backoff = 'none' | 'linear' | 'exponential';

const BACKOFFS: readonly Backoff[] = ['none', 'linear', 'exponential'];

/**
 * Gates a step may need. Only `human_confirm` is taken: Aura's `constitution` and `budget` gates
 * record an event and check nothing (§16.4), and a gate that never closes would be a false promise.
 */
export const GATES = ['human_confirm'] as const;

/** A gate name. */
export type GateName = (typeof GATES)[number];

/** When a step runs: a field of an earlier step's result equals a value, or is truthy. */
export interface StepCondition {
  readonly prior_step: string;
  /** A dotted path into the prior step's result. */
  readonly field: string;
  readonly equals?: unknown;
  readonly truthy?: boolean;
}

/** One declared step. */
export interface StepSpec {
  readonly id: string;
  readonly type: StepType;
  readonly ref: string | null;
  /** The tool a `tool` or `skill` step calls. */
  readonly tool: string | null;
  readonly config: Readonly<Record<string, unknown>>;
  readonly depends_on: readonly string[];
  readonly retry: { readonly max: number; readonly backoff: Backoff; readonly delay_ms: number };
  readonly gates: readonly GateName[];
  readonly when: StepCondition | null;
  readonly middleware: readonly (typeof MIDDLEWARE_OPS)[number][];
  /** A subflow's own steps. */
  readonly steps: readonly StepSpec[];
}

/** A parsed sequencer. */
export interface SequencerSpec {
  readonly steps: readonly StepSpec[];
}

const SEQUENCER_KEYS = ['steps', 'name', 'description', 'version'];
const STEP_KEYS = ['id', 'type', 'ref', 'version', 'description', 'depends_on', 'retry', 'gates', 'config', 'when', 'middleware'];
const RETRY_KEYS = ['max', 'backoff', 'delay_ms'];
const WHEN_KEYS = ['prior_step', 'field', 'equals', 'truthy'];
const MAX_RETRIES = 100;
const MAX_DELAY_MS = 60_000;
// Aura waits 0.05 s a unit of backoff (§16.2).
const DEFAULT_DELAY_MS = 50;

/**
 * Parses `sequencer`; null when the profile declares none.
 * @throws ProfileError
 */
export function parseSequencer(value: unknown, source: ProfileSource, keys: KeyPath): SequencerSpec | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) throw profileError(source, keys, 'expected a mapping with "steps"');
  const spec = value as Record<string, unknown>;
  for (const key of Object.keys(spec)) if (!SEQUENCER_KEYS.includes(key)) throw profileError(source, [...keys, key], `unknown key for a sequencer; expected one of ${SEQUENCER_KEYS.join(', ')}`);
  const steps = spec['steps'] ?? [];
  if (!Array.isArray(steps)) throw profileError(source, [...keys, 'steps'], 'expected a list of steps');
  return { steps: parseSteps(steps, source, [...keys, 'steps'], new Set()) };
}

/** @param before the ids of every step that runs before these (depth first), filled as steps are parsed. */
function parseSteps(list: readonly unknown[], source: ProfileSource, keys: KeyPath, before: Set<string>): StepSpec[] {
  return list.map((entry, i) => {
    const step = parseStep(entry, source, [...keys, i], before);
    before.add(step.id);
    return step;
  });
}

function parseStep(value: unknown, source: ProfileSource, keys: KeyPath, before: Set<string>): StepSpec {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw profileError(source, keys, 'a step must be a mapping with "id" and "type"');
  const entry = value as Record<string, unknown>;
  for (const key of Object.keys(entry)) if (!STEP_KEYS.includes(key)) throw profileError(source, [...keys, key], `unknown key for a step; expected one of ${STEP_KEYS.join(', ')}`);
  const id = entry['id'];
  if (typeof id !== 'string' || id === '') throw profileError(source, [...keys, 'id'], 'a step needs a non-empty string "id"');
  if (before.has(id)) throw profileError(source, [...keys, 'id'], `duplicate step id: ${id}`);
  const type = entry['type'];
  if (!(STEP_TYPES as readonly unknown[]).includes(type)) throw profileError(source, [...keys, 'type'], `unknown step type ${JSON.stringify(type)}; expected one of ${STEP_TYPES.join(', ')}`);
  const ref = entry['ref'] ?? null;
  if (ref !== null && typeof ref !== 'string') throw profileError(source, [...keys, 'ref'], 'expected a string');
  const config = entry['config'] ?? {};
  if (config === null || typeof config !== 'object' || Array.isArray(config)) throw profileError(source, [...keys, 'config'], 'expected a mapping such as {tool, args}, {gate} or, for a subflow, {steps}');
  const c = config as Record<string, unknown>;
  const earlier = (id: unknown, at: KeyPath): string => {
    if (typeof id !== 'string' || !before.has(id)) throw profileError(source, at, `${JSON.stringify(id)} is not a step that runs before this one`);
    return id;
  };
  const dependsOn = listAt(entry['depends_on'], source, [...keys, 'depends_on']).map((dep, j) => earlier(dep, [...keys, 'depends_on', j]));
  const gates = listAt(entry['gates'], source, [...keys, 'gates']).map((gate, j) => oneOf(gate, GATES, source, [...keys, 'gates', j]));
  const middleware = listAt(entry['middleware'], source, [...keys, 'middleware']).map((op, j) => oneOf(op, MIDDLEWARE_OPS, source, [...keys, 'middleware', j]));

  let tool: string | null = null;
  if (type === 'tool' || type === 'skill') {
    const named = c['tool'] ?? ref;
    if (typeof named !== 'string' || named === '') throw profileError(source, [...keys, 'ref'], `a ${String(type)} step names its tool in "ref" or config.tool`);
    tool = named;
    const args = c['args'];
    if (args !== undefined && (args === null || typeof args !== 'object' || Array.isArray(args))) throw profileError(source, [...keys, 'config', 'args'], 'expected a mapping of arguments');
  } else if (middleware.length > 0) {
    throw profileError(source, [...keys, 'middleware'], 'middleware applies to the calls of tool and skill steps only');
  }
  if (type === 'gate') {
    const gate = ref ?? c['gate'] ?? 'human_confirm';
    gates.push(oneOf(gate, GATES, source, [...keys, ref === null ? 'config' : 'ref']));
  }
  let steps: StepSpec[] = [];
  if (type === 'subflow') {
    const inner = c['steps'];
    if (!Array.isArray(inner) || inner.length === 0) throw profileError(source, [...keys, 'config', 'steps'], 'a subflow needs a non-empty list config.steps');
    steps = parseSteps(inner, source, [...keys, 'config', 'steps'], before);
  }
  return {
    id,
    type: type as StepType,
    ref,
    tool,
    config: c,
    depends_on: dependsOn,
    retry: parseRetry(entry['retry'], source, [...keys, 'retry']),
    gates: [...new Set(gates)],
    when: parseWhen(entry['when'], source, [...keys, 'when'], earlier),
    middleware,
    steps,
  };
}

function parseRetry(value: unknown, source: ProfileSource, keys: KeyPath): StepSpec['retry'] {
  if (value === undefined || value === null) return { max: 0, backoff: 'none', delay_ms: DEFAULT_DELAY_MS };
  if (typeof value !== 'object' || Array.isArray(value)) throw profileError(source, keys, 'expected {max, backoff, delay_ms}');
  const r = value as Record<string, unknown>;
  for (const key of Object.keys(r)) if (!RETRY_KEYS.includes(key)) throw profileError(source, [...keys, key], `unknown key for retry; expected one of ${RETRY_KEYS.join(', ')}`);
  const max = r['max'] ?? 0;
  if (typeof max !== 'number' || !Number.isInteger(max) || max < 0 || max > MAX_RETRIES) throw profileError(source, [...keys, 'max'], `expected an integer from 0 to ${MAX_RETRIES}`);
  const backoff = oneOf(r['backoff'] ?? 'none', BACKOFFS, source, [...keys, 'backoff']);
  const delay = r['delay_ms'] ?? DEFAULT_DELAY_MS;
  if (typeof delay !== 'number' || !Number.isFinite(delay) || delay < 0 || delay > MAX_DELAY_MS) throw profileError(source, [...keys, 'delay_ms'], `expected milliseconds from 0 to ${MAX_DELAY_MS}`);
  return { max, backoff, delay_ms: delay };
}

function parseWhen(value: unknown, source: ProfileSource, keys: KeyPath, earlier: (id: unknown, at: KeyPath) => string): StepCondition | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) throw profileError(source, keys, 'expected {prior_step, field, equals?, truthy?}');
  const w = value as Record<string, unknown>;
  for (const key of Object.keys(w)) if (!WHEN_KEYS.includes(key)) throw profileError(source, [...keys, key], `unknown key for when; expected one of ${WHEN_KEYS.join(', ')}`);
  const prior = earlier(w['prior_step'], [...keys, 'prior_step']);
  const field = w['field'];
  if (typeof field !== 'string' || field === '') throw profileError(source, [...keys, 'field'], 'expected the name of a field of the prior step\'s result');
  const truthy = w['truthy'];
  if (truthy !== undefined && typeof truthy !== 'boolean') throw profileError(source, [...keys, 'truthy'], 'expected true or false');
  if (!('equals' in w) && truthy === undefined) throw profileError(source, keys, 'a condition needs "equals" or "truthy"');
  return { prior_step: prior, field, ...('equals' in w ? { equals: w['equals'] } : {}), ...(truthy === undefined ? {} : { truthy }) };
}

function listAt(value: unknown, source: ProfileSource, keys: KeyPath): unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw profileError(source, keys, 'expected a list');
  return value;
}

function oneOf<T extends string>(value: unknown, allowed: readonly T[], source: ProfileSource, keys: KeyPath): T {
  if (!(allowed as readonly unknown[]).includes(value)) throw profileError(source, keys, `unknown value ${JSON.stringify(value)}; expected one of ${allowed.join(', ')}`);
  return value as T;
}
