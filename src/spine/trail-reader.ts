/**
 * Reads a trail's events as values, verifying the chain on the same pass, so whatever is built
 * from a trail (summary, spans, report) knows how far the record can be trusted.
 */

import { JsonReadError, parseJsonLossless } from './json-reader.js';
import type { AuraEvent } from './record.js';
import { trailLines, type TrailLine } from './trail-lines.js';
import { ChainVerifier, type ChainReport, type ChainSeal, type VerifyOptions } from './verify.js';

/** A trail read from disk. */
export interface TrailRead {
  readonly chain: ChainReport;
  /**
   * The events that parse as records, in order, including any after the first chain problem
   * (so a report can still show them); `chain.events` says how many of them verified.
   */
  readonly events: readonly AuraEvent[];
  /** Set when `events` holds only some of the trail's events (see {@link digestTrail}). */
  readonly digest?: TrailDigest;
}

/** What a digest knows of the events it did not keep. */
export interface TrailDigest {
  /** Events in the trail, kept or not. */
  readonly count: number;
  /** Events of each kind, kept or not. */
  readonly kinds: ReadonlyMap<string, number>;
  /** The 0-based position in the trail of each kept event. */
  readonly positions: readonly number[];
}

/** Reads and verifies the trail at `path`. Throws only when the file cannot be read. */
export function readTrail(path: string, seal?: ChainSeal, options: VerifyOptions = {}): TrailRead {
  return readTrailLines(trailLines(path), seal, options);
}

/**
 * Reads and verifies trail lines from any source.
 * @param each called with every line's record (null for a line that is not one), in line order
 * @param hold keep the events in the result (a caller that takes them through `each` may not)
 */
export function readTrailLines(lines: Iterable<TrailLine>, seal?: ChainSeal, options: VerifyOptions = {}, each?: (event: AuraEvent | null) => void, hold = true): TrailRead {
  const verifier = new ChainVerifier(options);
  const events: AuraEvent[] = [];
  for (const line of lines) {
    const event = verifier.add(line) ?? eventOf(line.text);
    each?.(event);
    if (hold && event !== null) events.push(event);
  }
  return { chain: verifier.result(seal), events };
}

/**
 * Reads and verifies the trail at `path` in one streaming pass, in constant memory: every event is
 * handed to `each`, and only those `keep` asks for are kept; the rest are counted.
 * Throws only when the file cannot be read.
 */
export function digestTrail(path: string, keep: (event: AuraEvent) => boolean, each: (event: AuraEvent) => void, seal?: ChainSeal, options: VerifyOptions = {}): TrailRead {
  const events: AuraEvent[] = [];
  const positions: number[] = [];
  const kinds = new Map<string, number>();
  let count = 0;
  const read = readTrailLines(trailLines(path), seal, options, (event) => {
    if (event === null) return;
    each(event);
    kinds.set(event.kind, (kinds.get(event.kind) ?? 0) + 1);
    if (keep(event)) {
      events.push(event);
      positions.push(count);
    }
    count++;
  }, false);
  return { chain: read.chain, events, digest: { count, kinds, positions } };
}

/** How many events of `kind` the trail holds, whether `events` is all of them or a digest's. */
export function kindCount(events: readonly AuraEvent[], kind: string, digest?: TrailDigest): number {
  if (digest !== undefined) return digest.kinds.get(kind) ?? 0;
  let count = 0;
  for (const event of events) if (event.kind === kind) count++;
  return count;
}

function eventOf(text: string): AuraEvent | null {
  if (text.trim() === '') return null;
  try {
    const value = parseJsonLossless(text);
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return null;
    const record = value as Record<string, unknown>;
    if (typeof record['kind'] !== 'string' || typeof record['event_id'] !== 'string') return null;
    if (!isObject(record['payload'])) return null;
    return value as unknown as AuraEvent;
  } catch (error) {
    if (error instanceof JsonReadError) return null;
    throw error;
  }
}

function isObject(value: unknown): boolean {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
