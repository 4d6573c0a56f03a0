/**
 * Policy rules (reference §8.1), each compiled once from its declaration and then a small pure
 * function of one event: it passes, denies, asks for approval, or has nothing to say. Unknown rule
 * types and unknown keys are errors at load time, never a silent pass (Aura ignored them: §21.7),
 * and an empty tool list is refused rather than read as "allow everything" (§21.8).
 */

import { compileGlob, GlobSyntaxError, type Glob } from './glob.js';
import { profileError, type KeyPath, type ProfileSource } from './profile-source.js';
import { compileSchema, summarizeProblems, type SchemaCheck } from './schema.js';

/** What a rule is asked about: one event about to be recorded. */
export interface PolicyInput {
  readonly kind: string;
  /** The payload as the host gave it (before redaction). */
  readonly payload: Readonly<Record<string, unknown>>;
  readonly tool: string | null;
  readonly skillId: string | null;
}

/** A rule's answer. */
export interface RuleResult {
  /** The rule as declared. */
  readonly rule: Readonly<Record<string, unknown>>;
  readonly outcome: 'pass' | 'deny' | 'approval';
  readonly message: string;
  /** A denial that is recorded but does not stop the call (spectrum `low`). */
  readonly audit_only: boolean;
  /** The capability a passing scope check released. */
  readonly capability_id?: string;
}

/** A compiled rule. */
export interface CompiledRule {
  readonly type: RuleType;
  readonly declared: Readonly<Record<string, unknown>>;
  /** True when the rule names this tool (allow lists, approval lists): it is then not "unnamed". */
  names(input: PolicyInput): boolean;
  evaluate(input: PolicyInput): RuleResult | null;
}

/** The rule types a profile may declare. */
export const RULE_TYPES = ['allow_tools', 'deny_tools', 'max_tokens_per_step', 'confirm_before', 'schema_check', 'sequencer_required'] as const;
/** A rule type. */
export type RuleType = (typeof RULE_TYPES)[number];

/** A named schema from `variables.schema_refs`. */
export interface SchemaRef {
  readonly check: SchemaCheck;
  readonly tool: string | null;
  readonly on: SchemaPhase;
}

/** When a schema applies: to a call's args, a result, or both. */
export type SchemaPhase = 'call' | 'result' | 'both';

// Metadata any rule may carry; Aura writes these on the rules it derives.
const META_KEYS = ['type', 'kind', 'id', 'description', 'source', 'level', '_bind'];
const TOOL_KINDS = new Set(['tool.call', 'action.request']);
const TOKEN_KINDS = new Set(['tool.call', 'model.call', 'step.end', 'turn.end']);
const SCHEMA_KINDS = new Set(['tool.call', 'tool.result']);
const TOKEN_KEYS = ['tokens', 'token_count', 'total_tokens'];

/** Where the rules are declared and how to reach their schema refs. */
export interface RuleScope {
  readonly source: ProfileSource;
  readonly keys: KeyPath;
  readonly schemaRefs: ReadonlyMap<string, SchemaRef>;
}

/**
 * Compiles a rule list.
 * @throws ProfileError naming the file, line and key of the first bad rule.
 */
export function compileRules(value: unknown, scope: RuleScope): CompiledRule[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw profileError(scope.source, scope.keys, 'expected a list of rules');
  return value.map((rule, i) => compileRule(rule, { ...scope, keys: [...scope.keys, i] }));
}

function compileRule(value: unknown, scope: RuleScope): CompiledRule {
  const { source, keys } = scope;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw profileError(source, keys, 'a rule must be a mapping with a "type"');
  const rule = value as Record<string, unknown>;
  const type = rule['type'] ?? rule['kind'];
  if (typeof type !== 'string' || !(RULE_TYPES as readonly string[]).includes(type)) {
    throw profileError(source, [...keys, 'type'], `unknown rule type ${JSON.stringify(type)}; expected one of ${RULE_TYPES.join(', ')}`);
  }
  const at = (key: string): KeyPath => [...keys, key];
  const allowed = (extra: readonly string[]): void => {
    for (const key of Object.keys(rule)) {
      if (!META_KEYS.includes(key) && !extra.includes(key)) {
        throw profileError(source, at(key), `unknown key for a ${type} rule; expected ${[...extra].join(', ') || 'no other keys'}`);
      }
    }
  };
  switch (type as RuleType) {
    case 'allow_tools': {
      allowed(['tools', 'allow']);
      const globs = globList(rule, ['tools', 'allow'], scope);
      return toolListRule('allow_tools', rule, globs, (input, match) =>
        match ? pass(rule, `tool allowed: ${label(input)}`) : deny(rule, `Tool not allowed: ${label(input)} (not in allow_tools)`),
      );
    }
    case 'deny_tools': {
      allowed(['tools', 'deny']);
      const globs = globList(rule, ['tools', 'deny'], scope);
      return checkRule('deny_tools', rule, TOOL_KINDS, (input) => (matchesAny(globs, input) ? deny(rule, `Tool denied: ${label(input)} (deny_tools)`) : null));
    }
    case 'confirm_before': {
      allowed(['tools', 'actions']);
      const globs = globList(rule, ['tools', 'actions'], scope);
      return toolListRule('confirm_before', rule, globs, (input, match) =>
        match ? { rule, outcome: 'approval', message: `Approval required before: ${label(input)}`, audit_only: false } : null,
      );
    }
    case 'max_tokens_per_step': {
      allowed(['limit', 'max']);
      const limitKey = 'limit' in rule ? 'limit' : 'max';
      const limit = rule[limitKey];
      if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1) throw profileError(source, at(limitKey), 'expected a positive integer token limit');
      return checkRule('max_tokens_per_step', rule, TOKEN_KINDS, (input) => {
        const key = TOKEN_KEYS.find((k) => input.payload[k] !== undefined);
        const count = key === undefined ? 0 : input.payload[key];
        if (typeof count !== 'number' || !Number.isFinite(count)) return deny(rule, `Token count ${key ?? ''} is not a number`);
        return count > limit ? deny(rule, `Token limit exceeded: ${count} > ${limit}`) : pass(rule, 'within token limit');
      });
    }
    case 'schema_check':
      allowed(['schema', 'ref', 'on', 'phase', 'tool', 'skill_id']);
      return schemaRule(rule, scope);
    case 'sequencer_required':
      allowed([]);
      return checkRule('sequencer_required', rule, TOOL_KINDS, (input) =>
        typeof input.payload['step_id'] === 'string' ? pass(rule, 'sequencer step present') : deny(rule, 'Tool call outside declared sequencer step (spectrum full bind)'),
      );
  }
}

/** A rule that names no tool and answers only events of `kinds`. */
function checkRule(type: RuleType, rule: Record<string, unknown>, kinds: ReadonlySet<string>, answer: (input: PolicyInput) => RuleResult | null): CompiledRule {
  return { type, declared: rule, names: () => false, evaluate: (input) => (kinds.has(input.kind) ? answer(input) : null) };
}

function toolListRule(
  type: 'allow_tools' | 'confirm_before',
  rule: Record<string, unknown>,
  globs: readonly Glob[],
  answer: (input: PolicyInput, match: boolean) => RuleResult | null,
): CompiledRule {
  return {
    type,
    declared: rule,
    names: (input) => TOOL_KINDS.has(input.kind) && matchesAny(globs, input),
    evaluate: (input) => (TOOL_KINDS.has(input.kind) ? answer(input, matchesAny(globs, input)) : null),
  };
}

function schemaRule(rule: Record<string, unknown>, scope: RuleScope): CompiledRule {
  const { source, keys } = scope;
  let check: SchemaCheck;
  let tool: string | null = typeof rule['tool'] === 'string' ? rule['tool'] : null;
  let on: SchemaPhase;
  if (rule['schema'] !== undefined) {
    check = compileAt(rule['schema'], source, [...keys, 'schema']);
    on = phaseOf(rule['on'] ?? rule['phase'], source, [...keys, 'on']);
  } else if (typeof rule['ref'] === 'string') {
    const ref = scope.schemaRefs.get(rule['ref']);
    if (ref === undefined) throw profileError(source, [...keys, 'ref'], `schema ref ${JSON.stringify(rule['ref'])} is not in variables.schema_refs`);
    check = ref.check;
    tool ??= ref.tool;
    on = rule['on'] === undefined && rule['phase'] === undefined ? ref.on : phaseOf(rule['on'] ?? rule['phase'], source, [...keys, 'on']);
  } else {
    throw profileError(source, keys, 'a schema_check rule needs a "schema" or a "ref"');
  }
  const toolGlob = tool === null ? null : globAt(tool, source, [...keys, 'tool']);
  const skill = typeof rule['skill_id'] === 'string' ? rule['skill_id'] : null;
  return checkRule('schema_check', rule, SCHEMA_KINDS, (input) => {
    const phase = input.kind === 'tool.call' ? 'call' : 'result';
    if (on !== 'both' && on !== phase) return null;
    if (toolGlob !== null && !toolGlob.test(input.tool ?? '') && !toolGlob.test(input.skillId ?? '')) return null;
    if (skill !== null && input.skillId !== skill) return null;
    const subject = phase === 'call' ? input.payload['args'] : input.payload['result'];
    const problems = check(phase === 'call' && (subject === null || typeof subject !== 'object') ? {} : subject);
    return problems.length === 0
      ? pass(rule, `Schema valid for ${input.kind}`)
      : deny(rule, `Schema validation failed for ${label(input)} on ${input.kind}: ${summarizeProblems(problems)}`);
  });
}

/** Compiles `variables.schema_refs`: `{name: {schema, tool?, on?}}`. */
export function compileSchemaRefs(value: unknown, source: ProfileSource, keys: KeyPath): Map<string, SchemaRef> {
  const refs = new Map<string, SchemaRef>();
  if (value === undefined || value === null) return refs;
  if (typeof value !== 'object' || Array.isArray(value)) throw profileError(source, keys, 'expected a mapping of schema names to {schema, tool?, on?}');
  for (const [name, entry] of Object.entries(value as Record<string, unknown>)) {
    const at = [...keys, name];
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) throw profileError(source, at, 'expected {schema, tool?, on?}');
    const e = entry as Record<string, unknown>;
    for (const key of Object.keys(e)) if (!['schema', 'tool', 'skill_id', 'on', 'phase', 'description'].includes(key)) throw profileError(source, [...at, key], 'unknown key for a schema ref');
    refs.set(name, {
      check: compileAt(e['schema'], source, [...at, 'schema']),
      tool: typeof e['tool'] === 'string' ? e['tool'] : null,
      on: phaseOf(e['on'] ?? e['phase'], source, [...at, 'on']),
    });
  }
  return refs;
}

function compileAt(schema: unknown, source: ProfileSource, keys: KeyPath): SchemaCheck {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) throw profileError(source, keys, 'a schema must be a JSON Schema object');
  try {
    return compileSchema(schema);
  } catch (error) {
    throw profileError(source, keys, `the schema does not compile: ${(error as Error).message}`);
  }
}

function phaseOf(value: unknown, source: ProfileSource, keys: KeyPath): SchemaPhase {
  if (value === undefined) return 'call';
  const phase = typeof value === 'string' ? value.toLowerCase() : value;
  if (phase === 'call' || phase === 'result' || phase === 'both') return phase;
  throw profileError(source, keys, `expected 'call', 'result' or 'both', got ${JSON.stringify(value)}`);
}

function globList(rule: Record<string, unknown>, names: readonly string[], scope: RuleScope): Glob[] {
  const key = names.find((name) => rule[name] !== undefined) ?? (names[0] as string);
  const list = rule[key];
  const at = [...scope.keys, key];
  if (!Array.isArray(list) || list.length === 0) throw profileError(scope.source, at, 'expected a non-empty list of tool name patterns');
  return list.map((pattern, i) => globAt(pattern, scope.source, [...at, i]));
}

function globAt(pattern: unknown, source: ProfileSource, keys: KeyPath): Glob {
  try {
    return compileGlob(pattern as string);
  } catch (error) {
    if (error instanceof GlobSyntaxError) throw profileError(source, keys, error.message);
    throw error;
  }
}

function matchesAny(globs: readonly Glob[], input: PolicyInput): boolean {
  return globs.some((glob) => (input.tool !== null && glob.test(input.tool)) || (input.skillId !== null && glob.test(input.skillId)));
}

function label(input: PolicyInput): string {
  return input.tool ?? input.skillId ?? '(no tool)';
}

function pass(rule: Readonly<Record<string, unknown>>, message: string): RuleResult {
  return { rule, outcome: 'pass', message, audit_only: false };
}

function deny(rule: Readonly<Record<string, unknown>>, message: string): RuleResult {
  return { rule, outcome: 'deny', message, audit_only: false };
}

/** The tool name of a payload: `tool`, else `name`, else `tool_name` (reference §8.1). */
export function toolOf(payload: Readonly<Record<string, unknown>>): string | null {
  for (const key of ['tool', 'name', 'tool_name']) if (typeof payload[key] === 'string') return payload[key];
  return null;
}
