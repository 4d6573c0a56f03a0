/**
 * Agents: a profile (identity, purpose, declared policy) and the registry that keeps an agent's
 * `aura_id` stable across processes (reference §5). The profile in code is the source of truth;
 * the registry only remembers which `aura_id` a ref was given, and the last profile it saw.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { withConfigOrigin, type AuraConfig, type ConfigOptions } from '../config/config.js';
import { currentConfig } from '../config/configure.js';
import { ConfigError, describeCause, InvalidAgentRefError } from '../errors.js';
import { canonicalJson } from '../spine/canonical.js';
import { sha256 } from '../spine/hash.js';
import { parseJson } from '../spine/native-json.js';
import { makeFolder, removeFile, writing } from '../store/fs-write.js';
import { newUlid } from './ids.js';
import { Policy, type DefaultToolPolicy } from '../policy/policy.js';
import { codeSource, profileError, type ProfileSource } from '../policy/profile-source.js';
import { brokerSchemes, refuseCredentials, type SecretBroker } from '../policy/secrets.js';
import { readProfileFile, type ProfileKey } from './profile-file.js';
import { configKeyRef, NO_MIDDLEWARE, parseMiddleware, type MiddlewareConfig } from '../middleware/middleware.js';
import { parseSequencer, type SequencerSpec } from '../sequencer/spec.js';
import { Session } from './session.js';
import { parseSessionMode, type AgentProfile, type SessionAgent, type SessionMode, type SessionOptions } from './types.js';

/** What `agent()` takes besides the ref. Each option wins over the same key of `profileFile`. */
export interface AgentOptions extends ConfigOptions {
  /** A YAML (or JSON) profile with Aura's keys; unknown keys and rule types are errors. */
  readonly profileFile?: string;
  /** Use this `aura_id` instead of the registered (or a new) one. */
  readonly auraId?: string;
  readonly name?: string;
  readonly purpose?: string;
  /** Default `"1"`. */
  readonly policyVersion?: string;
  readonly defaultMode?: SessionMode;
  readonly variables?: Readonly<Record<string, unknown>>;
  readonly rules?: readonly unknown[];
  readonly skills?: readonly string[];
  readonly ids?: Readonly<Record<string, unknown>>;
  /** `capabilities[]`: scopes on tools and the secrets (by ref) they get. */
  readonly capabilities?: readonly unknown[];
  /** `{level: low | mid | high | full, services, identity_required, schema_enforcement, …}`. */
  readonly spectrum?: Readonly<Record<string, unknown>>;
  /** `escalations[]`: `{on, actions, after_minutes?, id?}`. */
  readonly escalations?: readonly unknown[];
  /** What a tool no rule names gets: `allow` (default) or `deny`. */
  readonly defaultToolPolicy?: DefaultToolPolicy;
  /** Declared steps, `{steps: [{id, …}]}`: `session.runSequencer()` runs them and conformance checks the trail against them. */
  readonly sequencer?: Readonly<Record<string, unknown>>;
  /** `observers[]`: presets by name, `{preset: 'break', id?, config?}`. */
  readonly observers?: readonly unknown[];
  /** `{pii_mask: {strategy, entities, boundaries, key}}`: personal data masked before it is recorded. */
  readonly middleware?: Readonly<Record<string, unknown>>;
  /**
   * Resolves the secret refs of this agent's sessions (default: the environment, `env:NAME`). The
   * schemes it declares are the ones the profile's refs may use; a session may bring its own broker.
   */
  readonly secretBroker?: SecretBroker;
}

// Aura's rule; ASCII is checked before lower-casing, because Unicode case mapping turns some
// non-ASCII letters into ASCII ones (KELVIN SIGN lower-cases to 'k').
const AGENT_REF = /^[a-z0-9][a-z0-9._-]*(\/[a-z0-9][a-z0-9._-]*)?$/;
const ASCII = /^[\x20-\x7e]*$/;

/** Normalises and checks an agent ref: `slug` or `tenant/slug`, lowercase ASCII. */
export function parseAgentRef(value: string): string {
  if (typeof value !== 'string' || !ASCII.test(value)) throw new InvalidAgentRefError(String(value));
  const ref = value.trim().toLowerCase();
  if (!AGENT_REF.test(ref)) throw new InvalidAgentRefError(value);
  return ref;
}

/** An agent: its profile and where its sessions go. */
export class Agent implements SessionAgent {
  constructor(
    readonly profile: AgentProfile,
    readonly config: AuraConfig,
    /** The compiled policy: rules, capabilities, spectrum, escalations. */
    readonly policy: Policy,
    /** The parsed `middleware` block. */
    readonly middleware: MiddlewareConfig = NO_MIDDLEWARE,
    /** The parsed `sequencer`, or null. */
    readonly sequencer: SequencerSpec | null = null,
    /** The broker of its sessions, unless a session brings its own. */
    readonly secretBroker: SecretBroker | null = null,
  ) {}

  get auraId(): string {
    return this.profile.aura_id;
  }

  get ref(): string | null {
    return this.profile.agent_ref;
  }

  /** Opens a session: writes `membrane.ingress` and `session.open` before it returns. */
  session(options: SessionOptions = {}): Session {
    return Session.open(this, options);
  }

  /** The identity trailer copied onto every event (reference §5.4). */
  trailer(): Record<string, unknown> {
    const p = this.profile;
    return {
      aura_id: p.aura_id,
      ...(p.agent_ref === null ? {} : { agent_ref: p.agent_ref }),
      ...(p.name === null ? {} : { name: p.name }),
      ...(Object.keys(p.ids).length === 0 ? {} : { ids: p.ids }),
      policy_version: p.policy_version,
    };
  }

  /** Aura's snapshot hash of the declared policy (reference §3.6): ASCII-escaped, 16 hex. */
  snapshotHash(): string {
    const p = this.profile;
    const blob = canonicalJson(
      {
        aura_id: p.aura_id,
        agent_ref: p.agent_ref,
        name: p.name,
        purpose: p.purpose,
        policy_version: p.policy_version,
        variables: p.variables,
        rules: this.policy.declaredRules,
        skills: p.skills,
        sequencer: p.sequencer,
        capabilities: p.capabilities,
      },
      'profile',
      { asciiOnly: true },
    );
    return sha256(blob).slice(0, 16);
  }
}

/**
 * The agent with this ref, registered under the configured folder: its `aura_id` is the one the
 * registry gave the ref before, or a new ULID.
 * @throws InvalidAgentRefError, NonJsonValueError (a profile value that is not JSON)
 */
export function agent(ref: string, options: AgentOptions = {}): Agent {
  const agentRef = parseAgentRef(ref);
  const file = options.profileFile === undefined ? null : readProfileFile(options.profileFile);
  const code = codeSource(options);
  // Each key from code if given there, else from the file: errors then point at where it came from.
  const part = (codeValue: unknown, key: ProfileKey): { value: unknown; source: ProfileSource } =>
    codeValue !== undefined || file === null ? { value: codeValue, source: code } : { value: file.values[key], source: file.source };
  // A profile in code holds no credential either (a file is checked as it is read).
  refuseCredentials(profileOptions(options), code, []);
  const secretSchemes = brokerSchemes(options.secretBroker);
  const fileRef = file?.values.agent_ref;
  if (typeof fileRef === 'string' && file !== null && parseAgentRef(fileRef) !== agentRef) {
    throw profileError(file.source, ['agent_ref'], `the profile is for ${fileRef}, not ${agentRef}`);
  }
  const config = currentConfig(options);
  const registry = new Registry(config);
  const tenant = agentRef.includes('/') ? agentRef.slice(0, agentRef.indexOf('/')) : null;
  const value = <T>(codeValue: T | undefined, key: ProfileKey, fallback: T): T => (part(codeValue, key).value as T | undefined | null) ?? fallback;
  const mode = value<string>(options.defaultMode, 'default_mode', 'script');
  const policy = Policy.compile({
    rules: part(options.rules, 'rules'),
    capabilities: part(options.capabilities, 'capabilities'),
    spectrum: part(options.spectrum, 'spectrum'),
    escalations: part(options.escalations, 'escalations'),
    variables: part(options.variables, 'variables'),
    default_tool_policy: part(options.defaultToolPolicy, 'default_tool_policy'),
    observers: part(options.observers, 'observers'),
    skills: value<readonly string[]>(options.skills, 'skills', []),
    secretSchemes,
  });
  const middlewarePart = part(options.middleware, 'middleware');
  const middleware = parseMiddleware(middlewarePart.value, middlewarePart.source, ['middleware'], secretSchemes, withConfigOrigin(config, () => configKeyRef(config.values['pii_key'], secretSchemes)));
  const sequencerPart = part(options.sequencer, 'sequencer');
  const sequencer = parseSequencer(sequencerPart.value, sequencerPart.source, ['sequencer']);
  const profile: AgentProfile = {
    aura_id: options.auraId ?? value<string | undefined>(undefined, 'aura_id', undefined) ?? registry.auraIdOf(agentRef) ?? newUlid(),
    agent_ref: agentRef,
    name: value<string | null>(options.name, 'name', null),
    ids: { ...(tenant === null ? {} : { tenant }), ...value<Readonly<Record<string, unknown>>>(options.ids, 'ids', {}) },
    purpose: value<string | null>(options.purpose, 'purpose', null),
    policy_version: String(value<string | number>(options.policyVersion, 'policy_version', '1')),
    variables: value<Readonly<Record<string, unknown>>>(options.variables, 'variables', {}),
    rules: value<readonly unknown[]>(options.rules, 'rules', []),
    skills: value<readonly string[]>(options.skills, 'skills', []),
    sequencer: value<unknown>(options.sequencer, 'sequencer', null),
    observers: value<readonly unknown[]>(options.observers, 'observers', []),
    escalations: value<readonly unknown[]>(options.escalations, 'escalations', []),
    spectrum: value<unknown>(options.spectrum, 'spectrum', null),
    capabilities: value<readonly unknown[]>(options.capabilities, 'capabilities', []),
    types: value<readonly unknown[]>(undefined, 'types', []),
    default_mode: parseSessionMode(mode),
    default_tool_policy: policy.defaultToolPolicy,
    middleware: middlewarePart.value ?? null,
  };
  // Checks now that the profile is JSON, so a bad value fails here and not at the first session.
  canonicalJson(profile, 'profile');
  registry.save(profile);
  return new Agent(profile, config, policy, middleware, sequencer, options.secretBroker ?? null);
}

/** The profile keys of `agent()`'s options (the rest configure where it runs). */
function profileOptions(options: AgentOptions): Record<string, unknown> {
  const { name, purpose, policyVersion, variables, rules, skills, ids, capabilities, spectrum, escalations, sequencer, observers, middleware } = options;
  return { name, purpose, policyVersion, variables, rules, skills, ids, capabilities, spectrum, escalations, sequencer, observers, middleware };
}

interface RegistryState {
  aliases: Record<string, string>;
  refs: Record<string, string>;
}

/** `agents/{aura_id}.json` and `registry_state.json` (reference §5.2). */
class Registry {
  constructor(private readonly config: AuraConfig) {}

  auraIdOf(ref: string): string | undefined {
    return this.state().refs[ref];
  }

  save(profile: AgentProfile): void {
    const { agents, registryState } = this.config.paths;
    writing(agents, () => makeFolder(agents));
    const file = path.join(agents, `${profile.aura_id.replaceAll('/', '_')}.json`);
    writeIfChanged(file, `${JSON.stringify({ ...profile, archived: false }, null, 2)}\n`);
    const state = this.state();
    if (profile.agent_ref !== null) state.refs[profile.agent_ref] = profile.aura_id;
    if (profile.name !== null) state.aliases[profile.name] = profile.aura_id;
    writeIfChanged(registryState, `${JSON.stringify(state, null, 2)}\n`);
  }

  private state(): RegistryState {
    const file = this.config.paths.registryState;
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { aliases: {}, refs: {} };
      throw new ConfigError(file, null, `cannot read: ${describeCause(error)}`);
    }
    let parsed: Partial<RegistryState>;
    try {
      parsed = parseJson(text) as Partial<RegistryState>;
    } catch (error) {
      // Refuse rather than start afresh: rewriting it would lose every agent's registered id.
      throw new ConfigError(file, null, `not valid JSON (${(error as Error).message})`);
    }
    return { aliases: { ...parsed.aliases }, refs: { ...parsed.refs } };
  }
}

/**
 * Writes through a temporary file and a rename, and only when the content changed.
 * @throws WriteError (a full disk, a read-only folder, a folder where the file should be); the file is as it was
 */
function writeIfChanged(file: string, content: string): void {
  try {
    if (fs.readFileSync(file, 'utf8') === content) return;
  } catch {
    // Not there yet (or unreadable: the write below says why).
  }
  const staging = `${file}.${process.pid}.tmp`;
  writing(file, () => {
    try {
      fs.writeFileSync(staging, content);
      fs.renameSync(staging, file);
    } finally {
      removeFile(staging);
    }
  });
}
