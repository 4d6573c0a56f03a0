/**
 * A reader of the trail lines a session hands to live export, cheaper than parsing them whole.
 * The session writes every line one way (record.ts's `encodeEvent`: the keys in a fixed order,
 * `agent_ids`, `payload` and `telemetry` as canonical text), so the plain fields can be cut out
 * where they stand and only the three objects parsed; `agent_ids` and `telemetry` repeat from
 * line to line and are parsed once while they do. Spans are built from the same values a whole
 * parse gives. Any line not in that form (an escape in a plain field, a key where the layout has
 * none) is read whole by the caller, so the fast way never guesses.
 */

import type { AuraEvent, JsonObject } from '../spine/record.js';

/** Thrown inside the reader when a line leaves the layout; never escapes it. */
const OFF_LAYOUT = new Error('not a line in the layout the session writes');

const AFTER = (key: string): string => `, "${key}": `;
const PARENT_ID = AFTER('parent_id');
const TRACE_ID = AFTER('trace_id');
const SPAN_ID = AFTER('span_id');
const STEP_ID = AFTER('step_id');
const TASK_ID = AFTER('task_id');
const SESSION_ID = AFTER('session_id');
const AURA_ID = AFTER('aura_id');
const AGENT_IDS = AFTER('agent_ids');
const KIND = AFTER('kind');
const TIMESTAMP = AFTER('timestamp');
const PAYLOAD = AFTER('payload');
const TELEMETRY = AFTER('telemetry');
const PREV_HASH = AFTER('prev_hash');
const CONTENT_HASH = AFTER('content_hash');
const FIRST_KEY = '{"event_id": ';

/** Reads one session's lines; keeps the last `agent_ids` and `telemetry` it parsed. */
export class TrailLineReader {
  private line = '';
  private at = 0;
  private agentIdsText = '';
  private agentIds: JsonObject = {};
  private telemetryText = '';
  private telemetry: JsonObject = {};

  /** `parseObject` reads the canonical text of an object (JSON.parse, or the lossless reader). */
  constructor(private readonly parseObject: (text: string) => unknown) {}

  /** The event of a line as the session wrote it (no newline), or null when it must be read whole. */
  read(line: string): AuraEvent | null {
    this.line = line;
    this.at = 0;
    try {
      return this.event();
    } catch {
      // Off the layout, or a prefix of an object (cut at a nested key named like the next
      // top-level one), which does not parse.
      return null;
    } finally {
      this.line = '';
    }
  }

  private event(): AuraEvent {
    this.expect(FIRST_KEY);
    const event_id = this.string();
    this.expect(PARENT_ID);
    const parent_id = this.nullableString();
    this.expect(TRACE_ID);
    const trace_id = this.string();
    this.expect(SPAN_ID);
    const span_id = this.nullableString();
    this.expect(STEP_ID);
    const step_id = this.nullableString();
    this.expect(TASK_ID);
    const task_id = this.nullableString();
    this.expect(SESSION_ID);
    const session_id = this.string();
    this.expect(AURA_ID);
    const aura_id = this.string();
    this.expect(AGENT_IDS);
    const agentIdsText = this.objectText(KIND);
    if (agentIdsText !== this.agentIdsText) {
      this.agentIds = this.object(agentIdsText);
      this.agentIdsText = agentIdsText;
    }
    this.expect(KIND);
    const kind = this.string();
    this.expect(TIMESTAMP);
    const timestamp = this.string();
    this.expect(PAYLOAD);
    const payload = this.object(this.objectText(TELEMETRY));
    this.expect(TELEMETRY);
    const telemetryText = this.objectText(PREV_HASH);
    if (telemetryText !== this.telemetryText) {
      this.telemetry = this.object(telemetryText);
      this.telemetryText = telemetryText;
    }
    this.expect(PREV_HASH);
    const prev_hash = this.nullableString();
    this.expect(CONTENT_HASH);
    const content_hash = this.string();
    if (this.at !== this.line.length - 1 || this.line.charCodeAt(this.at) !== 0x7d) throw OFF_LAYOUT;
    return { event_id, parent_id, trace_id, span_id, step_id, task_id, session_id, aura_id, agent_ids: this.agentIds, kind, timestamp, payload, telemetry: this.telemetry, prev_hash, content_hash };
  }

  private expect(text: string): void {
    if (!this.line.startsWith(text, this.at)) throw OFF_LAYOUT;
    this.at += text.length;
  }

  /** A string with no escapes (ids, kinds, timestamps, hashes): its text as it stands. */
  private string(): string {
    if (this.line.charCodeAt(this.at) !== 0x22) throw OFF_LAYOUT;
    const end = this.line.indexOf('"', this.at + 1);
    if (end === -1) throw OFF_LAYOUT;
    const value = this.line.slice(this.at + 1, end);
    if (value.includes('\\')) throw OFF_LAYOUT;
    this.at = end + 1;
    return value;
  }

  private nullableString(): string | null {
    if (!this.line.startsWith('null', this.at)) return this.string();
    this.at += 4;
    return null;
  }

  /** The text up to the next top-level key; a nested key of that name leaves a text that does not parse. */
  private objectText(next: string): string {
    const end = this.line.indexOf(next, this.at);
    if (end === -1) throw OFF_LAYOUT;
    const text = this.line.slice(this.at, end);
    this.at = end;
    return text;
  }

  private object(text: string): JsonObject {
    const value = this.parseObject(text);
    if (value === null || typeof value !== 'object' || Array.isArray(value)) throw OFF_LAYOUT;
    return value as JsonObject;
  }
}
