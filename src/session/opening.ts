/**
 * The first events of a session (reference §6.1): `membrane.ingress` with the profile's context,
 * `session.open` with the declared policy, and `identity.bound` when an operator is bound (later
 * events then carry the operator in their identity trailer, reference §5.4).
 */

import { capabilitySummary } from '../policy/capabilities.js';
import { operatorRecord, type Operator } from '../policy/identity.js';
import type { SecretBroker } from '../policy/secrets.js';
import { spectrumSummary } from '../policy/spectrum.js';
import type { Signer } from '../spine/signing.js';
import { PACKAGE_NAME, VERSION } from '../version.js';
import type { TraceParent } from './trace-context.js';
import type { RecordFn, SessionAgent, SessionMode } from './types.js';

/** What the opening events say of the session. */
export interface Opening {
  readonly agent: SessionAgent;
  readonly mode: SessionMode;
  readonly snapshotHash: string;
  readonly sessionKey: string | null;
  readonly observers: readonly { id: string; preset: string }[];
  readonly broker: SecretBroker | null;
  readonly identity: { readonly required: boolean; readonly source: string };
  readonly signing: { readonly signer: Signer; readonly every: number } | null;
  readonly traceParent: TraceParent | null;
  readonly operator: Operator | null;
}

/**
 * Records the opening events.
 * @returns the identity trailer for the events after them (with the bound operator), or null when it stays as it was
 */
export function recordOpening(open: Opening, record: RecordFn): Record<string, unknown> | null {
  const { agent, signing } = open;
  const p = agent.profile;
  const policy = agent.policy;
  const spectrum = spectrumSummary(policy.spectrum, { enforcementRuleCount: policy.autoRuleCount, identity: open.identity, activation: policy.observers.activation });
  const schemaRules = policy.rules.filter((rule) => rule.type === 'schema_check').length;
  const openSpectrum: Record<string, unknown> = { ...spectrum };
  if (policy.escalations.length > 0) {
    openSpectrum['escalations'] = { rule_count: policy.escalations.length, triggers: [...new Set(policy.escalations.map((e) => e.on))].sort(), destructive_requires_spectrum: 'mid|high|full' };
  }
  if (policy.capabilities.length > 0) {
    openSpectrum['capabilities'] = { ...capabilitySummary(policy.capabilities), broker: open.broker === null ? 'none' : open.broker.constructor.name, audit_only: policy.level === 'low' };
  }
  if (policy.schemaRefCount > 0 || schemaRules > 0) {
    openSpectrum['schema'] = { refs: policy.schemaRefCount, active_rules: schemaRules, auto_enforced: policy.rules.some((r) => r.type === 'schema_check' && r.declared['source'] === 'spectrum') };
  }
  record('membrane.ingress', {
    membrane: 'ingress',
    mode: open.mode,
    snapshot_hash: open.snapshotHash,
    context: { aura_id: p.aura_id, agent_ref: p.agent_ref, name: p.name, purpose: p.purpose, policy_version: p.policy_version, ids: p.ids, variables: p.variables, skills: p.skills },
    skills: p.skills,
    observers: open.observers,
    agent_ref: p.agent_ref,
    policy_version: p.policy_version,
    spectrum: { level: spectrum['level'], coat: spectrum['coat'], services: spectrum['services'], planes: spectrum['planes'] },
  });
  record('session.open', {
    mode: open.mode,
    snapshot_hash: open.snapshotHash,
    ...(open.sessionKey === null ? {} : { session_key: open.sessionKey }),
    purpose: p.purpose,
    policy_version: p.policy_version,
    agent_ref: p.agent_ref,
    declared_rules: policy.declaredRules,
    ...(p.sequencer === null ? {} : { sequencer: p.sequencer }),
    ...(agent.middleware.pii_mask === null ? {} : { middleware: { pii_mask: agent.middleware.pii_mask } }),
    default_tool_policy: policy.defaultToolPolicy,
    spectrum: openSpectrum,
    ...(signing === null ? {} : { signing: { key_id: signing.signer.keyId, checkpoint_every: signing.every } }),
    ...(open.traceParent === null ? {} : { trace_parent: open.traceParent }),
    harness: { name: PACKAGE_NAME, version: VERSION },
  });
  if (open.operator === null) return null;
  const operator = operatorRecord(open.operator);
  record('identity.bound', { operator });
  const trailer = agent.trailer();
  const ids = { ...(trailer['ids'] as Record<string, unknown> | undefined), operator };
  return { ...trailer, ids };
}
