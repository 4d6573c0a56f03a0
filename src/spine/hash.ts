/**
 * The content hash of an event (DESIGN §2.2): `sha256_hex(utf8(P + ":" + C))`, where `P` is the
 * previous event's `content_hash` (or `genesis` for the first) and `C` the canonical text of the
 * 13 hashed keys.
 */

import * as crypto from 'node:crypto';

/** The prefix of the first event's hash. */
export const GENESIS = 'genesis';

/** 64 lowercase hex: the only form a `content_hash` or `prev_hash` may take. */
export const HASH_PATTERN = /^[0-9a-f]{64}$/;

// crypto.hash (Node >= 20.12) skips the Hash object: 25-35% less time than createHash on
// 700-byte texts (measured on Node 20.20, 300k hashes). Older 20.x lines fall back to createHash.
const sha256Hex: (text: string) => string =
  typeof crypto.hash === 'function'
    ? (text) => crypto.hash('sha256', text, 'hex')
    : (text) => crypto.createHash('sha256').update(text).digest('hex');

/** The content hash of a canonical body chained after `prevHash`. */
export function contentHash(prevHash: string | null, canonicalBody: string): string {
  return sha256Hex(`${prevHash ?? GENESIS}:${canonicalBody}`);
}

/** Lowercase hex SHA-256 of a text (UTF-8). */
export function sha256(text: string): string {
  return sha256Hex(text);
}

/** Lowercase hex SHA-256 of some bytes, taken as one. */
export function digestOf(parts: readonly Uint8Array[]): string {
  const hash = crypto.createHash('sha256');
  for (const part of parts) hash.update(part);
  return hash.digest('hex');
}
