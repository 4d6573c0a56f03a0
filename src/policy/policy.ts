/**
 * An agent's compiled policy: its rules (declared, then those its spectrum level adds), its
 * capabilities, schema refs and escalations, and the decision for one event, in Aura's merge order
 * (reference §8.3). Deny beats allow and beats approval; a tool no rule names follows the
 * profile's `default_tool_policy` (`allow` unless it says `deny`).
 */

import { planObservers, type ObserverPlan } from '../observers/presets.js';
import { checkCapabilityScope, parseCapabilities, type Capability } from './capabilities.js';
import { parseEscalations, type EscalationRule } from './escalations.js';
import { profileError, type ProfileSource } from './profile-source.js';
import { compileRules, compileSchemaRefs, type CompiledRule, type PolicyInput, type RuleResult } from './rules.js';
import { isStrict, levelOf, parseSpectrum, spectrumRules, type Spectrum, type SpectrumLevel } from './spectrum.js';

/** What to do with a tool that no rule names. */
export type DefaultToolPolicy = 'allow' | 'deny';

/** The parts of a profile the policy is compiled from, each with the source it came from. */
export interface PolicyParts {
  readonly rules: { readonly value: unknown; readonly source: ProfileSource };
  readonly capabilities: { readonly value: unknown; readonly source: ProfileSource };
  readonly spectrum: { readonly value: unknown; readonly source: ProfileSource };
  readonly escalations: { readonly value: unknown; readonly source: ProfileSource };
  readonly variables: { readonly value: unknown; readonly source: ProfileSource };
  readonly default_tool_policy: { readonly value: unknown; readonly source: ProfileSource };
  readonly observers: { readonly value: unknown; readonly source: ProfileSource };
  readonly skills: readonly string[];
  /** The schemes of secret refs the agent's broker resolves (`env` by default). */
  readonly secretSchemes: readonly string[];
}

/** The decision for one event. */
export interface Decision {
  /** The first denial that stops the event, if any. */
  readonly denied: RuleResult | null;
  /** The first rule asking for approval, when nothing denies. */
  readonly approval: RuleResult | null;
  /** Denials recorded but not enforced (spectrum `low`). */
  readonly audits: readonly RuleResult[];
  readonly passed: readonly RuleResult[];
}

const TOOL_KINDS = new Set(['tool.call', 'action.request']);
const POLICY_KINDS = new Set([...TOOL_KINDS, 'tool.result', 'model.call', 'step.end', 'turn.end']);

/** A compiled policy. */
export class Policy {
  private constructor(
    readonly rules: readonly CompiledRule[],
    readonly capabilities: readonly Capability[],
    readonly spectrum: Spectrum | null,
    readonly escalations: readonly EscalationRule[],
    readonly defaultToolPolicy: DefaultToolPolicy,
    readonly schemaRefCount: number,
    readonly autoRuleCount: number,
    /** The observers each session gets: the profile's, then the spectrum services'. */
    readonly observers: ObserverPlan,
  ) {}

  /**
   * Compiles the policy of a profile.
   * @throws ProfileError at the first invalid part, naming its file, line and key
   */
  static compile(parts: PolicyParts): Policy {
    const spectrum = parseSpectrum(parts.spectrum.value, parts.spectrum.source, ['spectrum']);
    const capabilities = parseCapabilities(parts.capabilities.value, parts.capabilities.source, ['capabilities'], parts.secretSchemes);
    const variables = parts.variables.value;
    const refsValue = variables !== null && typeof variables === 'object' ? (variables as Record<string, unknown>)['schema_refs'] : undefined;
    const schemaRefs = compileSchemaRefs(refsValue, parts.variables.source, ['variables', 'schema_refs']);
    const declared = compileRules(parts.rules.value, { source: parts.rules.source, keys: ['rules'], schemaRefs });
    const allowList = [...parts.skills, ...capabilities.flatMap((c) => [c.tool, c.skill_id].filter((t): t is string => t !== null))];
    const auto: Record<string, unknown>[] = spectrumRules(spectrum, allowList);
    if (spectrum !== null && isStrict(spectrum.level) && spectrum.schema_enforcement) {
      for (const ref of schemaRefs.keys()) auto.push({ type: 'schema_check', ref, source: 'spectrum', level: spectrum.level });
    }
    const autoRules = compileRules(auto, { source: parts.rules.source, keys: ['(spectrum rules)'], schemaRefs });
    const policyValue = parts.default_tool_policy.value ?? 'allow';
    if (policyValue !== 'allow' && policyValue !== 'deny') throw profileError(parts.default_tool_policy.source, ['default_tool_policy'], "expected 'allow' or 'deny'");
    const escalations = parseEscalations(parts.escalations.value, parts.escalations.source, ['escalations']);
    const variableValues = variables !== null && typeof variables === 'object' && !Array.isArray(variables) ? (variables as Record<string, unknown>) : {};
    const observers = planObservers(parts.observers, { value: spectrum, source: parts.spectrum.source }, variableValues);
    return new Policy([...declared, ...autoRules], capabilities, spectrum, escalations, policyValue, schemaRefs.size, autoRules.length, observers);
  }

  /** The effective spectrum level. */
  get level(): SpectrumLevel {
    return levelOf(this.spectrum);
  }

  /** The rules as declared and derived, as conformance records them. */
  get declaredRules(): Readonly<Record<string, unknown>>[] {
    return this.rules.map((rule) => rule.declared);
  }

  /**
   * True when the policy could answer this kind of event. A profile with nothing to enforce
   * answers no event, so its sessions emit at the speed of a bare trail.
   */
  applies(kind: string): boolean {
    return this.enforcing && POLICY_KINDS.has(kind);
  }

  private get enforcing(): boolean {
    return this.rules.length > 0 || this.capabilities.length > 0 || this.escalations.length > 0 || this.defaultToolPolicy === 'deny';
  }

  /** Evaluates every rule on one event (no early stop: deny must win wherever it is listed). */
  decide(input: PolicyInput): Decision {
    const results: RuleResult[] = [];
    for (const rule of this.rules) {
      const result = rule.evaluate(input);
      if (result !== null) results.push(result);
    }
    const scope = checkCapabilityScope(this.capabilities, input, this.level === 'low');
    if (scope !== null) results.push(scope);
    if (TOOL_KINDS.has(input.kind) && this.defaultToolPolicy === 'deny' && !this.rules.some((rule) => rule.names(input))) {
      results.push({
        rule: { type: 'default_tool_policy', value: 'deny' },
        outcome: 'deny',
        message: `Tool not allowed: ${input.tool ?? input.skillId ?? '(no tool)'} (no rule allows it and default_tool_policy is deny)`,
        audit_only: false,
      });
    }
    return {
      denied: results.find((r) => r.outcome === 'deny' && !r.audit_only) ?? null,
      approval: results.find((r) => r.outcome === 'approval') ?? null,
      audits: results.filter((r) => r.outcome === 'deny' && r.audit_only),
      passed: results.filter((r) => r.outcome === 'pass'),
    };
  }

  /** The capability a passing scope check released, for secret injection. */
  capabilityFor(decision: Decision): Capability | null {
    const id = decision.passed.find((r) => r.capability_id !== undefined)?.capability_id;
    return id === undefined ? null : (this.capabilities.find((c) => c.id === id) ?? null);
  }
}
