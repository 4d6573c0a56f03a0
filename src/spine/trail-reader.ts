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
}

/** Reads and verifies the trail at `path`. Throws only when the file cannot be read. */
export function readTrail(path: string, seal?: ChainSeal, options: VerifyOptions = {}): TrailRead {
  return readTrailLines(trailLines(path), seal, options);
}

/**
 * Reads and verifies trail lines from any source.
 * @param each called with every line's record (null for a line that is not one), in line order
 */
export function readTrailLines(lines: Iterable<TrailLine>, seal?: ChainSeal, options: VerifyOptions = {}, each?: (event: AuraEvent | null) => void): TrailRead {
  const verifier = new ChainVerifier(options);
  const events: AuraEvent[] = [];
  for (const line of lines) {
    const event = verifier.add(line) ?? eventOf(line.text);
    each?.(event);
    if (event !== null) events.push(event);
  }
  return { chain: verifier.result(seal), events };
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
