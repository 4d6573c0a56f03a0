/**
 * Exact fingerprints of actions: SHA-256 over the tool name and the canonical text of its
 * arguments (and of its outcome, where there is one), so two calls share a fingerprint only when
 * they are the same call, never because they look alike as text.
 */

import { canonicalJson } from '../spine/canonical.js';
import { sha256 } from '../spine/hash.js';

/** The fingerprint of a call: tool and canonical arguments. */
export function callFingerprint(tool: string, args: unknown): string {
  return sha256(`${tool}\n${canonicalJson(args ?? null, 'args')}`);
}

/** The fingerprint of a call and what came of it (`result:…`, `error:…`, `denied:…`, `none`). */
export function stepFingerprint(call: string, outcome: string): string {
  return sha256(`${call}\n${outcome}`);
}

/** The form shown in alerts and directives: 16 hex digits (64 bits) of the full fingerprint. */
export function shortFingerprint(fingerprint: string): string {
  return fingerprint.slice(0, 16);
}
