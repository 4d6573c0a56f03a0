/**
 * Capabilities (reference §11): what a gated tool may be called with, and which secrets it gets.
 * A profile names secrets by reference only (`env:PAY_KEY`); the broker resolves a reference at
 * the moment of the call, the value goes into the live arguments the tool receives, and the trail
 * records only the reference and where it went.
 */

import { objectOf } from '../spine/json-shape.js';
import { isSecretLikeKey } from '../middleware/secret-names.js';
import { profileError, type KeyPath, type ProfileSource } from './profile-source.js';
import type { PolicyInput, RuleResult } from './rules.js';
import { ENV_SCHEME, secretRefProblem } from './secrets.js';

/** Where one secret goes in the live arguments. */
export interface InjectTarget {
  readonly ref: string;
  /** A dotted path in the arguments, such as `api_key` or `headers.Authorization`. */
  readonly as: string;
  readonly prefix: string;
}

/** A parsed capability. */
export interface Capability {
  readonly id: string;
  readonly tool: string | null;
  readonly skill_id: string | null;
  readonly allowed: Readonly<Record<string, unknown>>;
  readonly inject: readonly InjectTarget[];
  readonly strict_args: boolean;
}

const CAPABILITY_KEYS = ['id', 'capability_id', 'tool', 'name', 'skill_id', 'skill', 'allowed', 'scope', 'secret', 'secret_ref', 'inject_as', 'inject', 'strict_args', 'strict', 'description'];
// A secret object holding any of these holds the secret itself, not a reference to it.
const PLAINTEXT_KEYS = ['value', 'token', 'plaintext', 'secret', 'password', 'api_key', 'authorization', 'key', 'card_number', 'pan'];
// What Aura refuses as a scope value (reference §11.1): the start of a live credential.
const LIVE_CREDENTIAL_PREFIXES = ['sk-', 'pk-', 'tok_', 'token-', 'ghp_', 'github_pat_', 'xox', 'akia', 'bearer ', 'basic '];
// `{provider: env, name: X}`: the providers that mean the environment (reference §11.1).
const ENV_PROVIDERS = new Set(['env', 'environment']);
// Keys of a call's args that are never "extra" under strict_args.
const RESERVED_ARGS = new Set(['tool', 'skill_id', 'name', 'tool_name', 'capability', 'capability_id', 'args', 'headers', 'step_id', 'tokens', 'token_count', 'request_id']);

/**
 * Parses `capabilities[]` strictly: a bad entry is an error, never dropped.
 * @param schemes the schemes of secret refs this agent's broker resolves
 * @throws ProfileError
 */
export function parseCapabilities(value: unknown, source: ProfileSource, keys: KeyPath, schemes: readonly string[]): Capability[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw profileError(source, keys, 'expected a list of capabilities');
  const seen = new Set<string>();
  return value.map((entry, i) => {
    const capability = parseCapability(entry, source, [...keys, i], schemes);
    if (seen.has(capability.id)) throw profileError(source, [...keys, i, 'id'], `duplicate capability id: ${capability.id}`);
    seen.add(capability.id);
    return capability;
  });
}

function parseCapability(value: unknown, source: ProfileSource, keys: KeyPath, schemes: readonly string[]): Capability {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw profileError(source, keys, 'a capability must be a mapping with an "id"');
  const entry = value as Record<string, unknown>;
  for (const key of Object.keys(entry)) if (!CAPABILITY_KEYS.includes(key)) throw profileError(source, [...keys, key], 'unknown key for a capability');
  const id = entry['id'] ?? entry['capability_id'];
  if (typeof id !== 'string' || id === '') throw profileError(source, [...keys, 'id'], 'a capability needs a non-empty "id"');
  const allowed = entry['allowed'] ?? entry['scope'] ?? {};
  if (allowed === null || typeof allowed !== 'object' || Array.isArray(allowed)) throw profileError(source, [...keys, 'allowed'], 'expected a mapping of argument names to allowed values');
  for (const [key, allowedValue] of Object.entries(allowed)) {
    if (isSecretLikeKey(key)) throw profileError(source, [...keys, 'allowed', key], 'a secret-like key cannot be a scope: declare the secret by reference under "secret"');
    if (typeof allowedValue === 'string' && looksLikeCredential(allowedValue)) throw profileError(source, [...keys, 'allowed', key], 'looks like a plaintext secret');
  }
  const hasSingle = entry['secret'] !== undefined || entry['secret_ref'] !== undefined;
  if (hasSingle && entry['inject'] !== undefined) throw profileError(source, keys, 'cannot declare both "secret"/"secret_ref" and "inject"');
  const inject: InjectTarget[] = [];
  if (hasSingle) {
    const ref = refOf(entry['secret'] ?? entry['secret_ref'], source, [...keys, entry['secret'] !== undefined ? 'secret' : 'secret_ref'], schemes);
    const secret = entry['secret'];
    const as = (typeof secret === 'object' && secret !== null ? ((secret as Record<string, unknown>)['as'] ?? (secret as Record<string, unknown>)['inject_as']) : undefined) ?? entry['inject_as'] ?? 'token';
    if (typeof as !== 'string' || as === '') throw profileError(source, [...keys, 'inject_as'], 'expected an argument name');
    inject.push({ ref, as, prefix: '' });
  } else if (entry['inject'] !== undefined) {
    const list = entry['inject'];
    if (!Array.isArray(list)) throw profileError(source, [...keys, 'inject'], 'expected a list of {ref, as, prefix?}');
    for (const [i, target] of list.entries()) {
      const at = [...keys, 'inject', i];
      const t = typeof target === 'string' ? { ref: target } : (target as Record<string, unknown> | null);
      if (t === null || typeof t !== 'object') throw profileError(source, at, 'expected a ref or {ref, as, prefix?}');
      const as = t['as'] ?? t['inject_as'] ?? t['target'] ?? 'token';
      const prefix = t['prefix'] ?? '';
      if (typeof as !== 'string' || as === '' || typeof prefix !== 'string') throw profileError(source, at, 'expected "as" an argument path and "prefix" a string');
      if (inject.some((other) => other.as === as)) throw profileError(source, [...at, 'as'], `duplicate inject target: ${as}`);
      inject.push({ ref: refOf(t['ref'] ?? t, source, at, schemes), as, prefix });
    }
  }
  const tool = entry['tool'] ?? entry['name'] ?? null;
  const skill = entry['skill_id'] ?? entry['skill'] ?? null;
  if (tool !== null && typeof tool !== 'string') throw profileError(source, [...keys, 'tool'], 'expected a tool name');
  if (skill !== null && typeof skill !== 'string') throw profileError(source, [...keys, 'skill_id'], 'expected a skill id');
  return { id, tool, skill_id: skill, allowed: allowed as Record<string, unknown>, inject, strict_args: entry['strict_args'] === true || entry['strict'] === true };
}

/**
 * A secret reference from its declared forms: `"env:X"`, `{ref: "env:X"}`, `{env: X}`,
 * `{provider: env | <scheme>, name: X}`. A bare name, in a string or an object, is refused: it
 * would be read as a variable name when it may be the secret itself.
 */
function refOf(value: unknown, source: ProfileSource, keys: KeyPath, schemes: readonly string[]): string {
  if (typeof value === 'string') {
    const problem = secretRefProblem(value, schemes);
    if (problem !== null) throw profileError(source, keys, problem);
    return value;
  }
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const secret = value as Record<string, unknown>;
    const plaintext = PLAINTEXT_KEYS.find((key) => key in secret);
    if (plaintext !== undefined) throw profileError(source, [...keys, plaintext], 'secrets are declared by ref only (env:NAME), never by value');
    if (secret['ref'] !== undefined) return refOf(secret['ref'], source, [...keys, 'ref'], schemes);
    const provider = secret['provider'] ?? secret['source'];
    const name = secret['env'] ?? secret['name'] ?? secret['id'];
    if (typeof name === 'string' && name !== '') {
      if (secret['env'] === undefined && provider === undefined) throw profileError(source, keys, 'say where the secret lives: {provider: env, name: NAME}, {env: NAME} or env:NAME');
      const scheme = secret['env'] !== undefined || (typeof provider === 'string' && ENV_PROVIDERS.has(provider)) ? ENV_SCHEME : provider;
      if (typeof scheme !== 'string') throw profileError(source, [...keys, 'provider'], 'expected a provider name such as env');
      return refOf(`${scheme}:${name}`, source, keys, schemes);
    }
  }
  throw profileError(source, keys, 'expected a secret ref: "env:NAME" or {ref: "env:NAME"}');
}

function looksLikeCredential(text: string): boolean {
  const lower = text.toLowerCase();
  return LIVE_CREDENTIAL_PREFIXES.some((prefix) => lower.startsWith(prefix));
}

/** The capability summary of `session.open` (reference §11.2). */
export function capabilitySummary(capabilities: readonly Capability[]): { count: number; ids: string[]; gated_tools: string[]; secret_refs: string[] } {
  return {
    count: capabilities.length,
    ids: capabilities.map((c) => c.id),
    gated_tools: gatedTools(capabilities),
    secret_refs: [...new Set(capabilities.flatMap((c) => c.inject.map((t) => t.ref)))],
  };
}

function gatedTools(capabilities: readonly Capability[]): string[] {
  if (capabilities.some((c) => c.tool === null && c.skill_id === null)) return ['*'];
  return [...new Set(capabilities.flatMap((c) => [c.tool, c.skill_id].filter((t): t is string => t !== null)))].sort();
}

/** The capability a call claims: `capability_id` (or `capability`) on the payload or in its args. */
export function claimedCapability(payload: Readonly<Record<string, unknown>>): { id: string | null; conflict: string | null } {
  const args = objectOf(payload['args']);
  const top = nonEmptyString(payload['capability_id']) ?? nonEmptyString(payload['capability']);
  const inArgs = nonEmptyString(args['capability_id']) ?? nonEmptyString(args['capability']);
  if (top !== null && inArgs !== null && top !== inArgs) return { id: null, conflict: `conflicting capability_id ${top} vs args ${inArgs}` };
  return { id: top ?? inArgs, conflict: null };
}

/** The `capability_scope` check of one call (reference §11.4), with Aura's messages. */
export function checkCapabilityScope(capabilities: readonly Capability[], input: PolicyInput, auditOnly: boolean): RuleResult | null {
  if (capabilities.length === 0 || (input.kind !== 'tool.call' && input.kind !== 'action.request')) return null;
  const rule = { type: 'capability_scope', source: 'profile.capabilities', audit_only: auditOnly };
  const result = (outcome: 'pass' | 'deny', message: string): RuleResult => ({ rule, outcome, message, audit_only: outcome === 'deny' && auditOnly });
  const gated = gatedTools(capabilities);
  const isGated = gated.includes('*') || (input.tool !== null && gated.includes(input.tool)) || (input.skillId !== null && gated.includes(input.skillId));
  const claim = claimedCapability(input.payload);
  if (claim.conflict !== null) return result('deny', claim.conflict);
  if (!isGated && claim.id === null) return null;
  const label = input.tool ?? input.skillId ?? '(no tool)';
  if (claim.id === null) return result('deny', `Capability id required for gated tool: ${label}`);
  const capability = capabilities.find((c) => c.id === claim.id);
  if (capability === undefined) return result('deny', `Unknown capability: ${claim.id}`);
  if (capability.tool !== null && capability.tool !== input.tool) return result('deny', `Capability ${capability.id} is bound to tool ${capability.tool}, not ${label}`);
  if (capability.skill_id !== null && capability.skill_id !== input.skillId) return result('deny', `Capability ${capability.id} is bound to skill ${capability.skill_id}, not ${input.skillId ?? '(none)'}`);
  const args = objectOf(input.payload['args']);
  const space = { ...input.payload, ...args };
  for (const [key, allowed] of Object.entries(capability.allowed)) {
    if (!scopeMatches(allowed, lookup(space, key))) return result('deny', `Capability ${capability.id} scope mismatch: ${key}=${JSON.stringify(lookup(space, key)) ?? 'missing'} (allowed ${JSON.stringify(allowed)})`);
  }
  if (capability.strict_args) {
    const targets = new Set(capability.inject.flatMap((t) => [t.as, t.as.split('.')[0] as string]));
    const extra = Object.keys(args).filter((key) => !(key in capability.allowed) && !RESERVED_ARGS.has(key) && !targets.has(key));
    if (extra.length > 0) return result('deny', `Capability ${capability.id} rejects extra args: ${extra.join(', ')}`);
  }
  return { ...result('pass', `capability allowed: ${capability.id}`), capability_id: capability.id };
}

/** `"*"`: present; a list: any element; a mapping: a recursive subset; else equal (no string coercion: §21.15). */
function scopeMatches(allowed: unknown, actual: unknown): boolean {
  if (allowed === '*') return actual !== undefined && actual !== null;
  if (Array.isArray(allowed)) return allowed.some((option) => scopeMatches(option, actual));
  if (allowed !== null && typeof allowed === 'object') {
    if (actual === null || typeof actual !== 'object') return false;
    return Object.entries(allowed).every(([key, value]) => scopeMatches(value, (actual as Record<string, unknown>)[key]));
  }
  return allowed === actual;
}

function lookup(space: Readonly<Record<string, unknown>>, key: string): unknown {
  if (key in space) return space[key];
  let cursor: unknown = space;
  for (const part of key.split('.')) {
    if (cursor === null || typeof cursor !== 'object') return undefined;
    cursor = (cursor as Record<string, unknown>)[part];
  }
  return cursor;
}

/** Writes `value` at a dotted path, creating objects on the way. */
export function setPath(target: Record<string, unknown>, path: string, value: string): void {
  const parts = path.split('.');
  let cursor = target;
  for (const part of parts.slice(0, -1)) {
    const next = cursor[part];
    cursor = next !== null && typeof next === 'object' && !Array.isArray(next) ? (next as Record<string, unknown>) : (cursor[part] = {});
  }
  cursor[parts[parts.length - 1] as string] = value;
}

function nonEmptyString(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}
