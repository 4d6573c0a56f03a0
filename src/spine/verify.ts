/**
 * Chain verification (DESIGN §2.3), in sigstore's shape: one pure check per rule, each returning
 * or throwing a {@link ChainVerificationError}, and {@link verifyTrail} reading as the checklist.
 * Integrity (every record intact and linked) and completeness (the trail ends with
 * `session.close` and matches its seal) are reported apart.
 *
 * Every line is untrusted: it may be hand-edited, cut short by a crash, or not JSON at all.
 */

import { ChainVerificationError, type ChainFailureReason } from '../errors.js';
import { contentHash, HASH_PATTERN } from './hash.js';
import { decodeJsonString, JsonReadError, parseJsonLossless, readCanonicalPairs, type CanonicalPair } from './json-reader.js';
import { parseJson } from './native-json.js';
import { checkpointText, sealText, verifySignature, type KeyRing } from './signing.js';
import { readRecordFast, readRecordSlices } from './fast-record.js';
import { SORTED_RECORD_KEYS, UNHASHED_KEYS, type AuraEvent } from './record.js';
import { MAX_LINE_BYTES, trailLines, type TrailLine } from './trail-lines.js';

/**
 * What a summary records of its trail at close, to catch truncation and rewrites. A hash left
 * out is not compared (a Python Aura summary records only its `event_count`).
 */
export interface ChainSeal {
  readonly events: number;
  readonly first_hash?: string | null;
  readonly head_hash?: string | null;
  /** A signed seal's fields (evidence issue): checked when keys are given. */
  readonly session_id?: string;
  readonly closed_at?: string | null;
  readonly key_id?: string | null;
  readonly signature?: string | null;
}

/** How a trail is verified. */
export interface VerifyOptions {
  /** Trusted public keys: checkpoint and seal signatures are checked against them. */
  readonly keys?: KeyRing;
}

/** What the signatures of a trail say. */
export interface SignatureReport {
  /** The session declared a signing key at open. */
  readonly signed: boolean;
  readonly key_id: string | null;
  /** Checkpoints found (and checked). */
  readonly checkpoints: number;
  /** True when every signature verified against the keys given; null when no keys were given. */
  readonly verified: boolean | null;
  /**
   * Signatures checked and found good (the checkpoints', the seal's): none in an open session
   * before its first checkpoint, which then proves nothing of who wrote it.
   */
  readonly checked: number;
}

/** The answer of {@link verifyTrail}. */
export interface ChainReport {
  /** Every complete record is intact and linked to the one before. */
  readonly hash_chain_valid: boolean;
  /** The trail ends with `session.close`, has no torn tail, and matches the seal when one is given. */
  readonly complete: boolean;
  /** Events that verified (all of them when valid; those before the first problem otherwise). */
  readonly events: number;
  readonly session_id: string | null;
  readonly first_hash: string | null;
  readonly head_hash: string | null;
  readonly signatures: SignatureReport;
  /** The first problem found, if any. */
  readonly reason?: ChainFailureReason;
  readonly event_id?: string | null;
  readonly line?: number;
  readonly message?: string;
}

/** Verifies the trail file at `path`, and against `seal` when given. Throws only for an unreadable file. */
export function verifyTrail(path: string, seal?: ChainSeal, options: VerifyOptions = {}): ChainReport {
  return verifyLines(trailLines(path), seal, options);
}

/** Verifies trail lines from any source; stops reading at the first problem. */
export function verifyLines(lines: Iterable<TrailLine>, seal?: ChainSeal, options: VerifyOptions = {}): ChainReport {
  const verifier = new ChainVerifier(options);
  for (const line of lines) {
    verifier.check(line);
    if (verifier.stopped) break;
  }
  return verifier.result(seal);
}

/** Verifies a trail fed line by line; remembers the first problem and ignores what follows it. */
export class ChainVerifier {
  private readonly walk: ChainWalk;
  private problem: ChainVerificationError | undefined;

  constructor(options: VerifyOptions = {}) {
    this.walk = new ChainWalk(options.keys ?? null);
  }

  /** True once a problem was found. */
  get stopped(): boolean {
    return this.problem !== undefined;
  }

  /** Checks one line; returns its record when it was read on the way (so callers need not parse it again). */
  add(line: TrailLine): AuraEvent | null {
    return this.walked(line, true);
  }

  /** Checks one line, and builds no record: the cheapest check, for a caller that needs only the verdict. */
  check(line: TrailLine): void {
    this.walked(line, false);
  }

  private walked(line: TrailLine, wantRecord: boolean): AuraEvent | null {
    if (this.problem !== undefined) return null;
    let record: AuraEvent | null = null;
    this.problem = attempt(() => {
      record = this.walk.add(line, wantRecord);
    });
    return record;
  }

  /** The report, once every line was added. */
  result(seal?: ChainSeal): ChainReport {
    // A sealed session was closed whole: a last line cut short is a truncation, not a torn write.
    if (seal !== undefined && this.problem?.code === 'torn_tail') {
      const line = this.problem.data?.line ?? this.walk.lastLine;
      this.problem = new ChainVerificationError('truncated', `line ${line} is cut short, but the session was sealed at close with ${seal.events} events: the trail was truncated after close`, { event_id: null, line });
    }
    // The seal first: against it, a cut tail is `truncated`, which says more than a missing checkpoint.
    this.problem ??= attempt(() => this.walk.finish(seal));
    return this.walk.report(this.problem);
  }
}

function attempt(check: () => void): ChainVerificationError | undefined {
  try {
    check();
    return undefined;
  } catch (error) {
    if (error instanceof ChainVerificationError) return error;
    throw error;
  }
}

const BLANK_LINE = /^[ \t\r]*$/;

/** The running state of a walk over a trail. */
class ChainWalk {
  events = 0;
  sessionId: string | null = null;
  firstHash: string | null = null;
  headHash: string | null = null;
  lastKind: string | null = null;
  previousKind: string | null = null;
  lastLine = 0;
  /** The signing declared in `session.open`: checkpoints must then follow its cadence. */
  signing: { readonly keyId: string; readonly every: number } | null = null;
  checkpoints = 0;
  /** Signatures checked against the keys and found good: checkpoints', and the seal's. */
  signaturesChecked = 0;
  sinceCheckpoint = 0;
  /** The opening (`membrane.ingress`, then `session.open`) is over. */
  opened = false;

  constructor(readonly keys: KeyRing | null) {}

  /**
   * Checks one line. The fast readings only ever accept a line, and only one the lossless reading
   * would accept with the same record and hashed text; every refusal is the lossless reading's.
   * Returns the record when a fast reading took the line and `wantRecord` (else the caller parses).
   */
  add(line: TrailLine, wantRecord: boolean): AuraEvent | null {
    this.lastLine = line.number;
    if (line.overlong === true) {
      fail('malformed_line', `line ${line.number} is longer than ${MAX_LINE_BYTES} bytes, the most a line may hold: it cannot be read as a record`, null, line.number);
    }
    if (line.invalidUtf8 === true) {
      if (!line.terminated) fail('torn_tail', `line ${line.number} is cut short (an interrupted write): it ends inside a character, or is not UTF-8`, null, line.number);
      fail('malformed_line', `line ${line.number} is not UTF-8: its invalid bytes read as U+FFFD, as other bytes would (a trail is UTF-8 text)`, null, line.number);
    }
    const text = line.text;
    // Aura's reader skips blank lines; they carry nothing that could be hashed. Only JSON's white
    // space: a line of other spaces (U+3000, U+FEFF) is text that some reader may read.
    if (text.charCodeAt(0) !== 0x7b && BLANK_LINE.test(text)) return null;
    const sliced = readRecordSlices(text, wantRecord);
    if (sliced !== null) {
      if (this.links(sliced, sliced.body)) {
        const record = sliced.record;
        this.checkSigning(sliced, () => record?.payload ?? (parseJson(sliced.payloadText) as Readonly<Record<string, unknown>>), line.number);
        this.accept(sliced);
        return record;
      }
    } else {
      const fast = readRecordFast(text);
      if (fast !== null && this.links(fast.record, fast.body)) {
        this.checkSigning(fast.record, () => fast.record.payload, line.number);
        this.accept(fast.record);
        return fast.record;
      }
    }
    const pairs = checkLine(line);
    const record = checkRecordShape(pairs, line.number);
    this.checkChain(record, line.number);
    checkContent(record, pairs, line.number);
    this.checkSigning(record, () => payloadOf(pairs), line.number);
    this.accept(record);
    return null;
  }

  /**
   * Checks 3–6 at once for a record read the fast way: true when it belongs to the session, links
   * to the head and its content matches its hash. Then the lossless checks pass too: a
   * content_hash equal to a computed hash, and a prev_hash equal to the head (null only before the
   * first event), are 64 lowercase hex. False leaves the verdict to the lossless reading.
   */
  private links(record: CheckedRecord, body: string): boolean {
    return (this.sessionId === null || record.session_id === this.sessionId) && record.prev_hash === this.headHash && contentHash(record.prev_hash, body) === record.content_hash;
  }

  private checkChain(record: CheckedRecord, line: number): void {
    checkHashFields(record, line, this.events === 0);
    checkSession(record, line, this.sessionId);
    checkLink(record, line, this.headHash);
  }

  /** 7. Checkpoints: where the cadence says, over the events before them, signed by a trusted key. */
  private checkSigning(record: CheckedRecord, payload: () => Readonly<Record<string, unknown>>, line: number): void {
    if (record.kind === 'session.open') this.checkOpening(payload(), record.event_id, line);
    else if (!this.opened && record.kind !== 'membrane.ingress') this.opened = true;
    if (record.kind !== 'chain.checkpoint') {
      if (this.signing !== null && this.sinceCheckpoint >= this.signing.every) {
        fail('signature_invalid', `line ${line}: a checkpoint was due after ${this.signing.every} events and is missing (removed, or the trail rewritten)`, record.event_id, line);
      }
      this.sinceCheckpoint++;
      return;
    }
    const p = payload();
    if (p['count'] !== this.events || p['head_hash'] !== this.headHash) {
      fail('signature_invalid', `line ${line}: the checkpoint covers ${String(p['count'])} events up to ${String(p['head_hash']).slice(0, 12)}…, the trail has ${this.events} up to ${(this.headHash ?? '').slice(0, 12)}…`, record.event_id, line);
    }
    if (this.keys !== null) {
      const key = this.keys.publicKey(p['key_id']);
      if (key === null) fail('signature_invalid', `line ${line}: the checkpoint is signed by key ${String(p['key_id'])}, which is not trusted`, record.event_id, line);
      if (!verifySignature(key, checkpointText(record.session_id, this.events, String(p['head_hash'])), p['signature'])) {
        fail('signature_invalid', `line ${line}: the checkpoint signature does not verify (the chain was rewritten, or the checkpoint forged)`, record.event_id, line);
      }
      this.signaturesChecked++;
    }
    this.checkpoints++;
    this.sinceCheckpoint = 0;
  }

  /**
   * The signing a session declares is read from its opening `session.open` only (the first event
   * after the ingress record), and must be well formed: a declaration moved later, repeated, or
   * with a key id that is not a string would otherwise let a stripped trail pass as unsigned.
   */
  private checkOpening(payload: Readonly<Record<string, unknown>>, eventId: string, line: number): void {
    const declared = payload['signing'];
    const opening = !this.opened;
    this.opened = true;
    if (declared === undefined) return;
    if (!opening) fail('signature_invalid', `line ${line}: a session.open that is not the session's opening event declares signing (moved or added)`, eventId, line);
    const signing = declared as { key_id?: unknown; checkpoint_every?: unknown } | null;
    const every = signing?.checkpoint_every;
    if (typeof signing?.key_id !== 'string' || typeof every !== 'number' || !Number.isInteger(every) || every < 1) {
      fail('signature_invalid', `line ${line}: session.open declares signing with a key_id that is not a string or a checkpoint_every that is not a positive integer`, eventId, line);
    }
    // With trusted keys, a session that declares another key is no session of theirs, signed or not.
    if (this.keys !== null && this.keys.publicKey(signing.key_id) === null) {
      fail('signature_invalid', `line ${line}: session.open declares signing by key ${signing.key_id}, which is not trusted`, eventId, line);
    }
    this.signing = { keyId: signing.key_id, every };
  }

  private accept(record: CheckedRecord): void {
    this.events++;
    this.sessionId = record.session_id;
    this.firstHash ??= record.content_hash;
    this.headHash = record.content_hash;
    this.previousKind = this.lastKind;
    this.lastKind = record.kind;
  }

  /**
   * Ends with `session.close`, and in a signed session with the final checkpoint right after it.
   * A signed trail that ends at `session.close` is a write cut short (a crash, a full disk; the
   * writer puts both down in one write, but a kill may still cut a write at a page): incomplete,
   * never tampering. Cutting the checkpoint off on purpose gains nothing: the chain before it
   * stands, and a seal still counts the checkpoint (`truncated`).
   */
  get closed(): boolean {
    if (this.lastKind === 'chain.checkpoint') return this.previousKind === 'session.close';
    return this.lastKind === 'session.close' && this.signing === null;
  }

  finish(seal?: ChainSeal): void {
    // A sealed trail emptied is one cut to nothing: truncated, as one cut to a line is.
    if (seal !== undefined) checkSeal(this, seal);
    if (this.events === 0) fail('empty', 'the trail holds no events', null, this.lastLine);
  }

  report(problem?: ChainVerificationError): ChainReport {
    const base = {
      events: this.events,
      session_id: this.sessionId,
      first_hash: this.firstHash,
      head_hash: this.headHash,
      signatures: {
        signed: this.signing !== null,
        key_id: this.signing?.keyId ?? null,
        checkpoints: this.checkpoints,
        verified: this.keys === null ? null : problem?.code !== 'signature_invalid',
        checked: this.signaturesChecked,
      },
    };
    if (problem === undefined) {
      return { hash_chain_valid: true, complete: this.closed, ...base };
    }
    // A torn tail is an interrupted write: what is before it is intact. A seal mismatch is not.
    return {
      hash_chain_valid: problem.code === 'torn_tail' && this.events > 0,
      complete: false,
      ...base,
      reason: problem.code,
      event_id: problem.data?.event_id ?? null,
      line: problem.data?.line ?? this.lastLine,
      message: problem.message,
    };
  }
}

/** The fields of a record that verification reads, once its shape is known to be right. */
interface CheckedRecord {
  readonly event_id: string;
  readonly session_id: string;
  readonly kind: string;
  readonly prev_hash: string | null;
  readonly content_hash: string;
}

function fail(reason: ChainFailureReason, message: string, eventId: string | null, line: number): never {
  throw new ChainVerificationError(reason, message, { event_id: eventId, line });
}

/** 1. The line is JSON. A last line cut short with no newline is a torn write, not tampering. */
function checkLine(line: TrailLine): CanonicalPair[] {
  try {
    return readCanonicalPairs(line.text);
  } catch (error) {
    if (!(error instanceof JsonReadError)) throw error;
    // A duplicate key is tampering, whatever the layout: the hash covers one value, and a reader of the raw line may see the other.
    if (error.problem === 'duplicate_key') fail('malformed_record', `line ${line.number}: ${error.message}: a record holds each key once, so a second value rides along unhashed (refused)`, null, line.number);
    if (error.problem !== 'syntax') fail('malformed_record', `line ${line.number}: ${error.message}`, null, line.number);
    if (!line.terminated) {
      fail('torn_tail', `line ${line.number} is cut short (an interrupted write): ${error.message}`, null, line.number);
    }
    return fail('malformed_line', `line ${line.number} is not JSON: ${error.message}`, null, line.number);
  }
}

const TYPE_RULES: Readonly<Record<string, (text: string) => boolean>> = {
  event_id: isString,
  parent_id: isStringOrNull,
  trace_id: isString,
  span_id: isStringOrNull,
  step_id: isStringOrNull,
  task_id: isStringOrNull,
  session_id: isString,
  aura_id: isString,
  agent_ids: isObject,
  kind: isString,
  timestamp: isString,
  payload: isObject,
  telemetry: isObject,
  prev_hash: isStringOrNull,
  content_hash: isString,
};

function isString(text: string): boolean {
  return text.charCodeAt(0) === 0x22;
}
function isStringOrNull(text: string): boolean {
  return text === 'null' || isString(text);
}
function isObject(text: string): boolean {
  return text.charCodeAt(0) === 0x7b;
}

/** 2. The record has exactly the 15 keys, each of its type; a missing hash key is `missing_hash`. */
function checkRecordShape(pairs: readonly CanonicalPair[], line: number): CheckedRecord {
  const values = new Map(pairs);
  const eventIdText = values.get('event_id');
  const eventId = eventIdText !== undefined && isString(eventIdText) ? stringValue(eventIdText) : null;
  if (!sameKeys(pairs)) {
    const present = new Set(values.keys());
    const missing = SORTED_RECORD_KEYS.filter((key) => !present.has(key));
    const extra = [...present].filter((key) => !SORTED_RECORD_KEYS.includes(key));
    if (extra.length === 0 && missing.every((key) => UNHASHED_KEYS.has(key))) {
      fail('missing_hash', `line ${line}: the record has no ${missing.join(' or ')}`, eventId, line);
    }
    const parts = [missing.length > 0 ? `missing ${missing.join(', ')}` : '', extra.length > 0 ? `unexpected ${extra.join(', ')}` : ''];
    fail('malformed_record', `line ${line}: the record's keys are wrong (${parts.filter(Boolean).join('; ')})`, eventId, line);
  }
  for (const [key, text] of pairs) {
    if (!(TYPE_RULES[key] as (text: string) => boolean)(text)) {
      fail('malformed_record', `line ${line}: ${key} has the wrong type (${text.slice(0, 40)})`, eventId, line);
    }
  }
  const prev = values.get('prev_hash') as string;
  return {
    event_id: eventId as string,
    session_id: stringValue(values.get('session_id') as string),
    kind: stringValue(values.get('kind') as string),
    prev_hash: prev === 'null' ? null : stringValue(prev),
    content_hash: stringValue(values.get('content_hash') as string),
  };
}

function sameKeys(pairs: readonly CanonicalPair[]): boolean {
  if (pairs.length !== SORTED_RECORD_KEYS.length) return false;
  for (let i = 0; i < pairs.length; i++) {
    if ((pairs[i] as CanonicalPair)[0] !== SORTED_RECORD_KEYS[i]) return false;
  }
  return true;
}

function stringValue(canonical: string): string {
  return canonical.includes('\\') ? decodeJsonString(canonical) : canonical.slice(1, -1);
}

/** 3. `content_hash` is 64 lowercase hex; `prev_hash` is null on the first event and 64 hex after. */
function checkHashFields(record: CheckedRecord, line: number, first: boolean): void {
  if (!HASH_PATTERN.test(record.content_hash)) {
    fail('missing_hash', `line ${line}: content_hash is not 64 lowercase hex`, record.event_id, line);
  }
  if (record.prev_hash === null) {
    if (!first) fail('missing_hash', `line ${line}: prev_hash is null but the event is not the first`, record.event_id, line);
  } else if (!HASH_PATTERN.test(record.prev_hash)) {
    fail('missing_hash', `line ${line}: prev_hash is not 64 lowercase hex`, record.event_id, line);
  }
}

/** 4. Every event belongs to the session of the first. */
function checkSession(record: CheckedRecord, line: number, sessionId: string | null): void {
  if (sessionId !== null && record.session_id !== sessionId) {
    fail('malformed_record', `line ${line}: session_id ${record.session_id} differs from ${sessionId}`, record.event_id, line);
  }
}

/** 5. `prev_hash` names the previous event's `content_hash` (and the first event has none). */
function checkLink(record: CheckedRecord, line: number, headHash: string | null): void {
  if (record.prev_hash !== headHash) {
    const what = headHash === null ? 'the first event links to an earlier one' : "prev_hash does not match the previous event's content_hash";
    fail('deleted_or_reordered', `line ${line}: ${what} (events deleted or reordered)`, record.event_id, line);
  }
}

/** 6. The content hash recomputed over the 13 hashed keys matches the recorded one. */
function checkContent(record: CheckedRecord, pairs: readonly CanonicalPair[], line: number): void {
  let body = '{';
  let first = true;
  for (const [key, text] of pairs) {
    if (UNHASHED_KEYS.has(key)) continue;
    body += `${first ? '' : ', '}"${key}": ${text}`;
    first = false;
  }
  body += '}';
  if (contentHash(record.prev_hash, body) !== record.content_hash) {
    fail('edited', `line ${line}: the event's content does not match its content_hash (edited)`, record.event_id, line);
  }
}

/** 7. The trail matches the seal its summary recorded at close. */
function checkSeal(chain: ChainWalk, seal: ChainSeal): void {
  const otherHead = seal.head_hash !== undefined && chain.headHash !== seal.head_hash;
  const otherFirst = seal.first_hash !== undefined && chain.firstHash !== seal.first_hash;
  if (chain.events !== seal.events || otherHead || otherFirst) {
    const what =
      chain.events < seal.events
        ? `has ${chain.events} events where the seal says ${seal.events}`
        : chain.events > seal.events
          ? `has ${chain.events} events where the seal says ${seal.events} (events added after close)`
          : otherFirst
            ? 'starts at another first hash than the seal (a rewritten chain)'
            : 'ends at another head hash than the seal (a rewritten chain)';
    fail('truncated', `the trail ${what}`, null, chain.lastLine);
  }
  if (seal.signature !== undefined && seal.signature !== null && chain.keys !== null) {
    const key = chain.keys.publicKey(seal.key_id);
    if (key === null) fail('signature_invalid', `the seal is signed by key ${String(seal.key_id)}, which is not trusted`, null, chain.lastLine);
    const text = sealText({ session_id: seal.session_id ?? chain.sessionId ?? '', events: seal.events, first_hash: seal.first_hash ?? null, head_hash: seal.head_hash ?? null, closed_at: seal.closed_at ?? null });
    if (!verifySignature(key, text, seal.signature)) fail('signature_invalid', 'the seal signature does not verify (the seal or its summary was edited)', null, chain.lastLine);
    chain.signaturesChecked++;
  }
}

/** The payload of a record read by the lossless reader (only asked for the few kinds that need it). */
function payloadOf(pairs: readonly CanonicalPair[]): Readonly<Record<string, unknown>> {
  const text = pairs.find(([key]) => key === 'payload')?.[1] ?? '{}';
  return parseJsonLossless(text) as Readonly<Record<string, unknown>>;
}
