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
    const event = verifier.add(line) ?? eventOfLine(line.text);
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
  const digester = new TrailDigester(keep, each, options);
  for (const line of trailLines(path)) digester.add(line);
  return digester.result(seal);
}

/** {@link digestTrail} fed line by line, so a trail can be digested as it grows. */
export class TrailDigester {
  private readonly verifier: ChainVerifier;
  private readonly events: AuraEvent[] = [];
  private readonly lines: string[] = [];
  private readonly positions: number[] = [];
  private readonly kinds = new Map<string, number>();
  private count = 0;

  constructor(
    private readonly keep: (event: AuraEvent) => boolean,
    private readonly each: (event: AuraEvent) => void,
    options: VerifyOptions = {},
  ) {
    this.verifier = new ChainVerifier(options);
  }

  /** The text of each kept event's line, in order: how a digest crosses to another thread. */
  get keptLines(): readonly string[] {
    return this.lines;
  }

  add(line: TrailLine): void {
    const event = this.verifier.add(line) ?? eventOfLine(line.text);
    if (event === null) return;
    this.each(event);
    this.kinds.set(event.kind, (this.kinds.get(event.kind) ?? 0) + 1);
    if (this.keep(event)) {
      this.events.push(event);
      this.lines.push(line.text);
      this.positions.push(this.count);
    }
    this.count++;
  }

  result(seal?: ChainSeal): TrailRead {
    return { chain: this.verifier.result(seal), events: this.events, digest: { count: this.count, kinds: this.kinds, positions: this.positions } };
  }
}

/** How many events of `kind` the trail holds, whether `events` is all of them or a digest's. */
export function kindCount(events: readonly AuraEvent[], kind: string, digest?: TrailDigest): number {
  if (digest !== undefined) return digest.kinds.get(kind) ?? 0;
  let count = 0;
  for (const event of events) if (event.kind === kind) count++;
  return count;
}

/** The record a line holds (null for a blank line or one that is not a record), read losslessly. */
export function eventOfLine(text: string): AuraEvent | null {
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
