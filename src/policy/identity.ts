/**
 * Operator identity (reference §17): who runs the session. An adapter resolves an operator at
 * open; the session records `identity.bound` after `session.open` and carries the operator under
 * `agent_ids.ids.operator` on every later event. Where policy requires a verified operator, a
 * session without one does not open.
 */

import { sha256 } from '../spine/hash.js';
import type { Spectrum } from './spectrum.js';

/** An operator as an adapter resolves it. */
export interface Operator {
  readonly subject: string;
  readonly method: string;
  /** True only when the adapter checked a credential; a self-declared operator is not verified. */
  readonly verified: boolean;
  readonly email?: string;
  readonly name?: string;
  readonly issuer?: string;
}

/** What an adapter is told about the session it binds to. */
export interface IdentityContext {
  readonly session_id: string;
  readonly aura_id: string;
  readonly agent_ref: string | null;
  readonly profile_ids: Readonly<Record<string, unknown>>;
}

/** Resolves the operator of a session, or null when it has none to offer. */
export interface OperatorIdentityAdapter {
  readonly method: string;
  resolve(context: IdentityContext): Operator | null;
}

/**
 * The operator given in code or in the profile's `ids.operator`, as declared. It is recorded with
 * method `manual`, and is verified only if the declaration says so: the caller vouches for it.
 */
export class ManualIdentityAdapter implements OperatorIdentityAdapter {
  readonly method = 'manual';

  constructor(private readonly operator?: Partial<Operator>) {}

  resolve(context: IdentityContext): Operator | null {
    const declared = this.operator ?? (context.profile_ids['operator'] as Partial<Operator> | undefined);
    if (declared === undefined || declared === null || typeof declared !== 'object' || typeof declared.subject !== 'string' || declared.subject === '') return null;
    return {
      subject: declared.subject,
      method: typeof declared.method === 'string' ? declared.method : this.method,
      verified: declared.verified === true,
      ...(typeof declared.email === 'string' ? { email: declared.email } : {}),
      ...(typeof declared.name === 'string' ? { name: declared.name } : {}),
      ...(typeof declared.issuer === 'string' ? { issuer: declared.issuer } : {}),
    };
  }
}

/** Whether a verified operator is required, and which setting said so (reference §17.3). */
export interface IdentityPolicy {
  readonly required: boolean;
  readonly source: string;
}

/** The verified-identity policy: session override, then the profile's spectrum, then config, then the level default. */
export function identityPolicy(sessionOverride: boolean | undefined, spectrum: Spectrum | null, configRequired: boolean): IdentityPolicy {
  if (sessionOverride !== undefined) return { required: sessionOverride, source: 'session_override' };
  if (spectrum?.identity_required !== null && spectrum?.identity_required !== undefined) return { required: spectrum.identity_required, source: 'profile.spectrum' };
  if (configRequired) return { required: true, source: 'global_config' };
  if (spectrum !== null) return { required: spectrum.level === 'high' || spectrum.level === 'full', source: `level_default:${spectrum.level}` };
  return { required: false, source: 'none' };
}

/** The operator as recorded on the trail: `subject_hash` is the first 16 hex of SHA-256 of the subject. */
export function operatorRecord(operator: Operator): Record<string, unknown> {
  return {
    verified: operator.verified,
    method: operator.method,
    subject: operator.subject,
    subject_hash: sha256(operator.subject).slice(0, 16),
    ...(operator.email === undefined ? {} : { email: operator.email }),
    ...(operator.name === undefined ? {} : { name: operator.name }),
    ...(operator.issuer === undefined ? {} : { issuer: operator.issuer }),
  };
}
