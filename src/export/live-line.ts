/**
 * A reader of the trail lines a session hands to live export, cheaper than parsing them whole.
 * The session writes every line one way (record.ts's `encodeEvent`: the keys in a fixed order,
 * `agent_ids`, `payload` and `telemetry` as canonical text), so the plain fields can be cut out
 * where they stand and only the three objects parsed; `agent_ids` and `telemetry` repeat from
 * line to line and are parsed once while they do. Spans are built from the same values a whole
 * parse gives. Any line not in that form (an escape in a plain field, a key where the layout has
 * none) is left to the caller to read whole, so the fast way never guesses.
 */

import type { AuraEvent, JsonObject } from '../spine/record.js';

// Plain fields: strings with no escape (which would need decoding) or null.
const TEXT = '"([^"\\\\]*)"';
const NULLABLE = `(?:null|${TEXT})`;
const HEAD = new RegExp(
  `\\{"event_id": ${TEXT}, "parent_id": ${NULLABLE}, "trace_id": ${TEXT}, "span_id": ${NULLABLE}, "step_id": ${NULLABLE}, ` +
    `"task_id": ${NULLABLE}, "session_id": ${TEXT}, "aura_id": ${TEXT}, "agent_ids": `,
  'y',
);
const KIND_KEY = ', "kind": ';
const MIDDLE = new RegExp(`, "kind": ${TEXT}, "timestamp": ${TEXT}, "payload": `, 'y');
const TELEMETRY_KEY = ', "telemetry": ';
const PREV_HASH_KEY = ', "prev_hash": ';
const TAIL = new RegExp(`, "prev_hash": ${NULLABLE}, "content_hash": ${TEXT}\\}$`, 'y');

/** Reads one session's lines; keeps the last `agent_ids` and `telemetry` it parsed. */
export class TrailLineReader {
  private agentIdsText = '';
  private agentIds: JsonObject = {};
  private telemetryText = '';
  private telemetry: JsonObject = {};

  /** `parseObject` reads the canonical text of an object (JSON.parse, or the lossless reader). */
  constructor(private readonly parseObject: (text: string) => unknown) {}

  /** The event of a line as the session wrote it (no newline), or null when it must be read whole. */
  read(line: string): AuraEvent | null {
    HEAD.lastIndex = 0;
    const head = HEAD.exec(line);
    if (head === null) return null;
    const agentIdsAt = HEAD.lastIndex;
    const kindAt = line.indexOf(KIND_KEY, agentIdsAt);
    MIDDLE.lastIndex = kindAt;
    const middle = kindAt === -1 ? null : MIDDLE.exec(line);
    if (middle === null) return null;
    const payloadAt = MIDDLE.lastIndex;
    // Searched from the end: a nested key of the same name can only come earlier.
    const prevHashAt = line.lastIndexOf(PREV_HASH_KEY);
    const telemetryAt = line.lastIndexOf(TELEMETRY_KEY, prevHashAt);
    if (prevHashAt === -1 || telemetryAt < payloadAt) return null;
    TAIL.lastIndex = prevHashAt;
    const tail = TAIL.exec(line);
    if (tail === null) return null;
    try {
      // Cut at a nested key of the next top-level name, `agent_ids` or `telemetry` is a prefix or
      // suffix of an object, which does not parse: such a line is read whole.
      const agentIdsText = line.slice(agentIdsAt, kindAt);
      if (agentIdsText !== this.agentIdsText) {
        this.agentIds = this.object(agentIdsText);
        this.agentIdsText = agentIdsText;
      }
      const telemetryText = line.slice(telemetryAt + TELEMETRY_KEY.length, prevHashAt);
      if (telemetryText !== this.telemetryText) {
        this.telemetry = this.object(telemetryText);
        this.telemetryText = telemetryText;
      }
      return {
        event_id: head[1] as string,
        parent_id: head[2] ?? null,
        trace_id: head[3] as string,
        span_id: head[4] ?? null,
        step_id: head[5] ?? null,
        task_id: head[6] ?? null,
        session_id: head[7] as string,
        aura_id: head[8] as string,
        agent_ids: this.agentIds,
        kind: middle[1] as string,
        timestamp: middle[2] as string,
        payload: this.object(line.slice(payloadAt, telemetryAt)),
        telemetry: this.telemetry,
        prev_hash: tail[1] ?? null,
        content_hash: tail[2] as string,
      };
    } catch {
      return null;
    }
  }

  private object(text: string): JsonObject {
    const value = this.parseObject(text);
    if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new TypeError('not an object');
    return value as JsonObject;
  }
}
