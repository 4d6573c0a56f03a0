/**
 * The fast readings of a trail line, each used only where it provably gives the hashed text and
 * values of the lossless reader (json-reader.ts); a line neither is sure of goes to that reader.
 * - {@link readRecordSlices}, for lines in aura's own layout (every line aura writes): the hashed
 *   body is assembled from slices of the line, proven canonical by one scan (canonical-line.ts),
 *   and no value is built. With it, verifying bench/verify-python.bench.ts's 100k-event trail in a
 *   fresh process took about half the CPU time of the reading below.
 * - {@link readRecordFast}, for other layouts (Python Aura writes nested values unsorted):
 *   `JSON.parse` (native) and the canonical writer. It is not the same as the lossless reader when
 *   the line holds a number JSON.parse would misread (a float with an integral value, an exponent,
 *   16 or more digits), a duplicate key (JSON.parse keeps the last one silently) or a key written
 *   with an escape (which V8 12.8 and later can misread: native-json.ts); such lines go to the
 *   lossless reader. It took bench/verify-chain.bench.ts from 0.32 to 0.59 of its JSON.parse
 *   baseline. Every `JSON.parse` of this module comes after those checks.
 *
 * Why no duplicate passes readRecordFast (the text is untrusted: an attacker lays it out to fool this check):
 * 1. A key is a string followed, after optional white space, by ':'. A text in which some '"' is
 *    followed by white space and then ':' is not taken ({@link SPACED_COLON}), so in a taken text
 *    every key's closing quote is directly followed by ':', whatever its escapes (`"k\u0065y"`
 *    ends with '"' like any key).
 * 2. So the count of '":' in the text is the number of keys in the text plus the '":' inside
 *    string values (written `\":`), and is at least the number of keys in the text.
 * 3. The keys in the text are at least the keys JSON.parse kept (it drops only duplicates), which
 *    the canonical writer counts over every object of the value.
 * 4. When the two counts are equal, both inequalities are equalities: no key was dropped, and no
 *    string holds '":'. Anything else goes to the lossless reader, which refuses a duplicate.
 * test/spine/reader-layouts.test.ts runs the readers over generated adversarial layouts, and
 * test/spine/fast-reader-fuzz.test.ts over seeded mutations of real lines.
 */

import { canonicalJson } from './canonical.js';
import { CanonicalLine, NULLABLE_KEYS, OBJECT_KEYS } from './canonical-line.js';
import { JsonReadError, parseJsonLossless, type JsonValue } from './json-reader.js';
import { hasEscapedKey, parseJson } from './native-json.js';
import { hashedBody, quoteField, RECORD_KEYS, type AuraEvent, type JsonObject } from './record.js';

/** A record read the fast way, with the canonical text of its hashed body. */
export interface FastRecord {
  readonly record: AuraEvent;
  readonly body: string;
}

// A number token (after ':', ',' or '[') that a JS number may not hold as Python reads it: a float
// written with an integral value, an exponent, 16 or more digits (a fraction of 16 digits and more
// in all may round to an integral double: `100000000000000.001`). Inside a string this may match
// too; then the line only takes the slower reader.
const LOSSY_NUMBER = /[:,[]\s*-?(?:\d+\.0+(?!\d)|\d+(?:\.\d+)?[eE]|\d{16}|\d+\.\d{16}|(?=[\d.]{17})\d+\.\d)/;
// Step 1 above: JSON's four white-space characters between a closing quote and a colon.
const SPACED_COLON = /"[ \t\n\r]+:/;

/** What verification reads of a line in aura's own layout, taken from slices of the line. */
export interface SlicedRecord {
  readonly event_id: string;
  readonly session_id: string;
  readonly kind: string;
  readonly prev_hash: string | null;
  readonly content_hash: string;
  /** The canonical text of the hashed body. */
  readonly body: string;
  /** The payload's canonical text, which `JSON.parse` reads as the lossless reader does. */
  readonly payloadText: string;
  /** The whole record, when asked for: what `JSON.parse` reads the line as, built from its slices. */
  readonly record: AuraEvent | null;
}

// One scan state, reused line after line: the scan allocates nothing.
const line = new CanonicalLine();

/**
 * `agent_ids` and `telemetry` as the last line that held the same text had them. A session's lines
 * repeat them, so one parse serves every line; the value is frozen, since records share it.
 */
class RepeatedValue {
  private text = '';
  private value: JsonObject = Object.freeze({});

  of(text: string): JsonObject {
    if (text !== this.text) {
      this.value = deepFreeze(parseJson(text) as JsonObject);
      this.text = text;
    }
    return this.value;
  }
}

const agentIds = new RepeatedValue();
const telemetry = new RepeatedValue();

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

/**
 * The fields and hashed body of a line in aura's own layout, and with `withRecord` its record, or
 * null when it is not in that layout (then read it another way).
 */
export function readRecordSlices(text: string, withRecord = false): SlicedRecord | null {
  if (!line.read(text)) return null;
  const eventId = line.string('event_id') as string;
  const sessionId = line.string('session_id') as string;
  const kind = line.string('kind') as string;
  const prevHash = line.string('prev_hash');
  const contentHash = line.string('content_hash') as string;
  const payloadText = line.value('payload');
  return {
    event_id: eventId,
    session_id: sessionId,
    kind,
    prev_hash: prevHash,
    content_hash: contentHash,
    body: hashedBody({
      agent_ids: line.value('agent_ids'),
      aura_id: line.value('aura_id'),
      event_id: line.value('event_id'),
      kind: line.value('kind'),
      parent_id: line.value('parent_id'),
      payload: payloadText,
      session_id: line.value('session_id'),
      span_id: line.value('span_id'),
      step_id: line.value('step_id'),
      task_id: line.value('task_id'),
      telemetry: line.value('telemetry'),
      timestamp: line.value('timestamp'),
      trace_id: line.value('trace_id'),
    }),
    payloadText,
    // The scan proved each value canonical: parsing the values alone reads what parsing the whole
    // line reads (in the line's key order) without going over its ids and hashes again, and a
    // session's repeated agent_ids and telemetry once. 2.45 us a line for JSON.parse of a 750-byte
    // line, 1.35 this way (bench data of fleet's push, one core).
    record: withRecord
      ? {
          event_id: eventId,
          parent_id: line.string('parent_id'),
          trace_id: line.string('trace_id') as string,
          span_id: line.string('span_id'),
          step_id: line.string('step_id'),
          task_id: line.string('task_id'),
          session_id: sessionId,
          aura_id: line.string('aura_id') as string,
          agent_ids: agentIds.of(line.value('agent_ids')),
          kind,
          timestamp: line.string('timestamp') as string,
          payload: parseJson(payloadText) as JsonObject,
          telemetry: telemetry.of(line.value('telemetry')),
          prev_hash: prevHash,
          content_hash: contentHash,
        }
      : null,
  };
}

/** The record and its hashed body, or null when the line must be read losslessly. */
export function readRecordFast(text: string): FastRecord | null {
  if (LOSSY_NUMBER.test(text) || SPACED_COLON.test(text) || hasEscapedKey(text)) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return null;
  const record = value as Record<string, unknown>;
  if (Object.keys(record).length !== RECORD_KEYS.length) return null;
  for (const key of RECORD_KEYS) {
    const field = record[key];
    if (OBJECT_KEYS.has(key)) {
      if (field === null || typeof field !== 'object' || Array.isArray(field)) return null;
    } else if (typeof field !== 'string' && !(field === null && NULLABLE_KEYS.has(key))) {
      return null;
    }
  }
  const counter = { keys: RECORD_KEYS.length };
  // Nested in the record, one level down: refused at the depth the lossless reader refuses.
  const nested = { counter, depth: 1 };
  let body: string;
  try {
    const s = (key: (typeof RECORD_KEYS)[number]): string => quoteField(record[key] as string | null, key);
    body = hashedBody({
      agent_ids: canonicalJson(record['agent_ids'], 'agent_ids', nested),
      aura_id: s('aura_id'),
      event_id: s('event_id'),
      kind: s('kind'),
      parent_id: s('parent_id'),
      payload: canonicalJson(record['payload'], 'payload', nested),
      session_id: s('session_id'),
      span_id: s('span_id'),
      step_id: s('step_id'),
      task_id: s('task_id'),
      telemetry: canonicalJson(record['telemetry'], 'telemetry', nested),
      timestamp: s('timestamp'),
      trace_id: s('trace_id'),
    });
  } catch {
    return null;
  }
  // Step 4 of the proof above.
  if (occurrences(text, '":') !== counter.keys) return null;
  return { record: record as unknown as AuraEvent, body };
}

/**
 * A canonical JSON text aura itself just wrote (such as a payload, on its way to observers) as
 * values: `JSON.parse` where it reads every number as the lossless reader does, else the lossless
 * reader. About three times faster on a typical payload. Text read from disk goes through
 * {@link parseLineText} instead.
 */
export function parseCanonicalText(text: string): JsonValue {
  return LOSSY_NUMBER.test(text) || hasEscapedKey(text) ? parseJsonLossless(text) : (JSON.parse(text) as JsonValue);
}

/**
 * A line read from disk (untrusted) as values, as the lossless reader reads it: numbers as Python
 * reads them and a duplicate key refused, but through `JSON.parse` where that is proven the same.
 * @throws JsonReadError; SyntaxError
 */
export function parseLineText(text: string): JsonValue {
  if (LOSSY_NUMBER.test(text) || hasEscapedKey(text)) return parseJsonLossless(text);
  const value = JSON.parse(text) as JsonValue;
  return withoutDuplicates(text, value) ? value : parseJsonLossless(text);
}

/**
 * `JSON.parse` for evidence files read as plain values (a summary, a seal-log line): the same
 * values, but a duplicate key anywhere is refused, as the lossless reader refuses it, instead of
 * silently keeping the last one.
 * @throws SyntaxError, naming the duplicate key and its column
 */
export function parseJsonStrict(text: string): unknown {
  const value = parseJson(text);
  if (withoutDuplicates(text, value)) return value;
  try {
    parseJsonLossless(text);
  } catch (error) {
    // Anything the lossless reader refuses (a duplicate, or a nesting it stops at before reaching one) is refused.
    if (error instanceof JsonReadError) throw new SyntaxError(error.message);
    throw error;
  }
  // The count was not sure (a '":' inside a string), but the lossless reader found no duplicate.
  return value;
}

/** The proof of the module comment over a parsed value: true only when the text holds no duplicate key. */
function withoutDuplicates(text: string, value: unknown): boolean {
  return !SPACED_COLON.test(text) && occurrences(text, '":') === keysOf(value);
}

function keysOf(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  let count = 0;
  if (Array.isArray(value)) {
    for (const item of value) count += keysOf(item);
    return count;
  }
  for (const key of Object.keys(value)) count += 1 + keysOf((value as Record<string, unknown>)[key]);
  return count;
}

function occurrences(text: string, needle: string): number {
  let count = 0;
  for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + needle.length)) count++;
  return count;
}
