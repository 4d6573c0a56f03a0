/**
 * The operator's identity in what leaves the trail (reference §17.4): the trail records who ran a
 * session (`identity.bound`, and `agent_ids.ids.operator` on every later event); summaries and
 * spans carry the record without the operator's e-mail, name and subject, wherever it rides.
 */

import { freeKey } from '../spine/redactor.js';

/** The fields that leave the trail only when `identity_export_pii` is set (reference §17.4). */
const OPERATOR_PII_FIELDS: readonly string[] = ['email', 'name', 'phone', 'subject'];

/** An operator record for a summary or a span: PII fields nulled, the subject kept only as its hash. */
function redactOperatorRecord(record: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const redacted: Record<string, unknown> = { ...record };
  for (const field of OPERATOR_PII_FIELDS) if (field in redacted) redacted[field] = null;
  return redacted;
}

// A shorter value (a first name) is replaced only where it is a whole string, not inside text.
const MIN_INLINE_LENGTH = 8;
/** What stands in for the operator's identity in text that carried it. */
const OPERATOR_REDACTED = '[operator]';

/**
 * Keeps the operator's identity out of what leaves the trail (summaries, spans), wherever it
 * rides: an operator record (an object under the key `operator`, as `identity.bound` and every
 * later event's `agent_ids.ids.operator` hold it) gets its PII fields nulled, and any string
 * holding the e-mail, name or subject of an operator the session bound (a principal who was the
 * operator, a message quoting them) gets it replaced by `[operator]`.
 */
export class IdentityRedactor {
  private values: string[] = [];

  /** True once an operator was noted: until then nothing is changed. */
  get active(): boolean {
    return this.values.length > 0;
  }

  /** Learns the identity of the operator of an event, from its trailer or its `identity.bound` payload. */
  noteEvent(agentIds: Readonly<Record<string, unknown>>, kind: string, payload: Readonly<Record<string, unknown>>): void {
    const ids = agentIds['ids'];
    if (ids !== null && typeof ids === 'object') this.note((ids as Record<string, unknown>)['operator']);
    if (kind === 'identity.bound') this.note(payload['operator']);
  }

  /** A copy of `value` without the operator's identity (the value itself when there is none in it). */
  redact<T>(value: T): T {
    return this.active ? (this.walk(value, null) as T) : value;
  }

  /** `text` with every known identity value replaced. */
  text(text: string): string {
    let out = text;
    for (const value of this.values) {
      if (out === value) return OPERATOR_REDACTED;
      if (value.length >= MIN_INLINE_LENGTH && out.includes(value)) out = out.split(value).join(OPERATOR_REDACTED);
    }
    return out;
  }

  private note(record: unknown): void {
    if (record === null || typeof record !== 'object' || Array.isArray(record)) return;
    for (const field of OPERATOR_PII_FIELDS) {
      const value = (record as Record<string, unknown>)[field];
      if (typeof value === 'string' && value !== '' && !this.values.includes(value)) this.values = [...this.values, value].sort((a, b) => b.length - a.length);
    }
  }

  private walk(value: unknown, key: string | null): unknown {
    if (typeof value === 'string') return this.text(value);
    if (value === null || typeof value !== 'object') return value;
    if (Array.isArray(value)) return value.map((item) => this.walk(item, null));
    if (Object.getPrototypeOf(value) !== Object.prototype) return value;
    const source = key === 'operator' ? redactOperatorRecord(value as Record<string, unknown>) : (value as Record<string, unknown>);
    const copy: Record<string, unknown> = {};
    for (const [name, item] of Object.entries(source)) {
      const shown = this.text(name);
      copy[shown === name ? name : freeKey(shown, (candidate) => Object.hasOwn(copy, candidate) || Object.hasOwn(source, candidate))] = this.walk(item, name);
    }
    return copy;
  }
}
