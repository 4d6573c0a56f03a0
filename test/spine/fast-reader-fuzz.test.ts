/**
 * The fast readings of a trail line against the lossless one, over seeded mutations of real lines
 * (aura's and Python Aura's): white space, escapes, key order, duplicate keys, number spellings
 * (1.0, 1e5, -0, 1e400, 16+ digits), unicode and surrogates, raw control characters, nesting
 * depth, and raw character edits. Whenever a fast reading takes a line, it must give the lossless
 * reading's hashed text and values; and verify's verdict must be the lossless one.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readRecordFast, readRecordSlices } from '../../src/spine/fast-record.js';
import { NULLABLE_KEYS, OBJECT_KEYS } from '../../src/spine/canonical-line.js';
import { contentHash } from '../../src/spine/hash.js';
import { JsonReadError, parseJsonLossless, readCanonicalPairs, type JsonValue } from '../../src/spine/json-reader.js';
import { PythonNumber } from '../../src/spine/python-number.js';
import { hashedBody, RECORD_KEYS, SORTED_RECORD_KEYS, UNHASHED_KEYS, type CanonicalFields } from '../../src/spine/record.js';
import type { TrailLine } from '../../src/spine/trail-lines.js';
import { verifyLines } from '../../src/spine/verify.js';
import { seededRandom } from '../helpers/random.js';
import { lines, openSession } from '../helpers/sessions.js';

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'aura-py', 'sessions');
const CASES_PER_BASE = 150;
const PLACEHOLDER = 'f'.repeat(64);

class Fuzz {
  constructor(readonly random: () => number) {}
  chance(p: number): boolean {
    return this.random() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random() * items.length)] as T;
  }
  int(n: number): number {
    return Math.floor(this.random() * n);
  }
}

/** A number token written as given (the model of a number spelling). */
class Token {
  constructor(readonly text: string) {}
}
type Model = null | boolean | string | Token | Model[] | { [key: string]: Model };

const NUMBERS = ['0', '7', '-3', '100', '0.5', '-0.25', '0.1', '1.5', '123456789012345', '-123456789012345', '1234567890123456', '12345678901234567890', '1.0', '-0.0', '1.50', '1e5', '1E5', '1e-7', '0.00001', '0.0001', '1e400', '-1e400', '-0', '0.30000000000000004', '1e16', '12345678901234.5', '0.123456789012345', '0.1234567890123456', '01', '1.', '.5', '+1', 'NaN', 'Infinity', '-Infinity'];
const STRINGS = ['', 'plain', 'é', 'naïve café', '😀', 'a😀b', '\u2028', '\u007f', '\ud800', '\udc00x', 'x\ud83d', '\u0001', '\u001f', '\n', '\t', '\r\n', '\b\f', 'say "hi"', 'back\\slash', '/path/to', '\uffff', '\ue000', 'ключ', '"', ': ', ', "', '\\u0041'];
const KEYS = ['a', 'b', 'A', 'ab', 'a b', 'a!', 'a"', 'z', '', '__proto__', 'é', '😀', '\uffff', '\ue000', 'key', 'kind', 'tool', '\u007f', 'ü', 'a\\b', 'x\u0001'];
/** Keys whose order by code point, by UTF-16 unit and by escaped spelling differ from each other. */
const CONFUSABLE_KEYS = ['a', 'a!', 'a"', 'aB', 'a\\', 'a\n', 'a\u0001', 'a b', 'a😀', 'a\uffff', 'a\ue000', 'ab', 'a\u007f'];
const SPACES = [' ', '', '  ', '\t', '\n', '\r', ' \n'];

/** Mutations of a value's model (not its spelling). */
function mutateModel(value: Model, fuzz: Fuzz, depth: number): Model {
  if (fuzz.chance(0.08)) return randomModel(fuzz, depth);
  if (Array.isArray(value)) return value.map((item) => mutateModel(item, fuzz, depth + 1));
  if (value !== null && typeof value === 'object' && !(value instanceof Token)) {
    const out = emptyObject();
    for (const [key, item] of Object.entries(value)) out[key] = mutateModel(item, fuzz, depth + 1);
    if (fuzz.chance(0.15)) out[fuzz.pick(KEYS)] = randomModel(fuzz, depth + 1);
    return out;
  }
  return value;
}

function randomModel(fuzz: Fuzz, depth: number): Model {
  const roll = fuzz.int(depth > 3 ? 4 : 7);
  if (roll === 0) return fuzz.pick(STRINGS);
  if (roll === 1) return new Token(fuzz.pick(NUMBERS));
  if (roll === 2) return fuzz.pick([true, false, null]);
  if (roll === 3) return fuzz.pick(STRINGS) + fuzz.pick(STRINGS);
  if (roll === 4) return Array.from({ length: fuzz.int(4) }, () => randomModel(fuzz, depth + 1));
  if (roll === 5 && fuzz.chance(0.1)) return nested(fuzz.pick([63, 64, 65, 70, 499, 500, 501]));
  const out = emptyObject();
  const keys = fuzz.chance(0.3) ? CONFUSABLE_KEYS : KEYS;
  for (let i = fuzz.int(4); i > 0; i--) out[fuzz.pick(keys)] = randomModel(fuzz, depth + 1);
  return out;
}

/** A null prototype: a key named `__proto__` is data. */
function emptyObject(): { [key: string]: Model } {
  return Object.create(null) as { [key: string]: Model };
}

function nested(levels: number): Model {
  let value: Model = new Token('1');
  for (let i = 0; i < levels; i++) value = i % 2 === 0 ? [value] : { k: value };
  return value;
}

function modelOf(value: JsonValue): Model {
  if (value instanceof PythonNumber) return new Token(value.canonical);
  if (typeof value === 'number') return new Token(String(value));
  if (Array.isArray(value)) return value.map(modelOf);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, modelOf(item)]));
  return value;
}

/**
 * Spells a string as Python writes it, but at rate `loose` with one unit spelled otherwise: an
 * escape JSON allows and Python does not write (`\u0041`, upper-case hex, `\/`), or a raw control.
 */
function spellString(text: string, fuzz: Fuzz, loose: number): string {
  const canonical = JSON.stringify(text);
  if (text === '' || !fuzz.chance(loose)) return canonical;
  const at = fuzz.int(text.length);
  const unit = text.charAt(at);
  const hex = unit.charCodeAt(0).toString(16).padStart(4, '0');
  const other = fuzz.pick([`\\u${hex}`, `\\u${hex.toUpperCase()}`, unit === '/' ? '\\/' : `\\u${hex}`, unit]);
  return `"${JSON.stringify(text.slice(0, at)).slice(1, -1)}${other}${JSON.stringify(text.slice(at + 1)).slice(1, -1)}"`;
}

/** Spells a value as Python writes it, with each node laid out otherwise at rate `loose`. */
function spell(value: Model, fuzz: Fuzz, loose: number, depth = 0): string {
  const colon = !fuzz.chance(loose) ? ': ' : `${fuzz.pick(SPACES)}:${fuzz.pick(SPACES)}`;
  const comma = !fuzz.chance(loose) ? ', ' : `${fuzz.pick(SPACES)},${fuzz.pick(SPACES)}`;
  if (value instanceof Token) return value.text;
  if (typeof value === 'string') return spellString(value, fuzz, loose);
  if (value === null || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `[${value.map((item) => spell(item, fuzz, loose, depth + 1)).join(comma)}]`;
  // Sorted by UTF-16 unit (not Python's order when a key holds a surrogate); at times reversed or shuffled.
  let keys = Object.keys(value).sort();
  if (fuzz.chance(loose)) keys = keys.reverse();
  if (fuzz.chance(loose * 5)) keys = keys.map((key) => [fuzz.random(), key] as const).sort(([a], [b]) => a - b).map(([, key]) => key);
  const members = keys.map((key) => `${spellString(key, fuzz, loose)}${colon}${spell(value[key] as Model, fuzz, loose, depth + 1)}`);
  // A duplicate key: next to itself (the keys still look sorted), or anywhere. Not in a deep
  // nest, where duplicates at many levels would double the text at each.
  if (members.length > 0 && depth < 8 && fuzz.chance(loose + 0.01)) {
    const at = fuzz.int(members.length);
    members.splice(fuzz.chance(0.5) ? at : fuzz.int(members.length), 0, members[at] as string);
  }
  return `{${members.join(comma)}}`;
}

/** A record line from its fields' models, keys in Aura's order, content_hash as the placeholder. */
function spellRecord(record: Record<string, Model>, fuzz: Fuzz): string {
  // Python's layout throughout, or with a few nodes (or many) laid out otherwise.
  const loose = fuzz.pick([0, 0, 0.01, 0.03, 0.1]);
  const members = RECORD_KEYS.map((key) => {
    const value = key === 'content_hash' ? PLACEHOLDER : (record[key] as Model);
    const text = key === 'content_hash' || key === 'prev_hash' ? JSON.stringify(value) : spell(value, fuzz, loose);
    return `${fuzz.chance(loose / 2) ? fuzz.pick(SPACES) : ''}"${key}": ${text}`;
  });
  return `{${members.join(', ')}}${fuzz.chance(loose) ? fuzz.pick(SPACES) : ''}`;
}

/** Raw character edits, after the line is laid out. */
function editText(text: string, fuzz: Fuzz): string {
  const at = fuzz.int(text.length);
  switch (fuzz.int(8)) {
    case 0:
      return text.slice(0, at) + fuzz.pick([' ', '"', '\\', ',', ':', '{', '}', '[', ']', '0', 'e', '.', '-', '\u0000', '\ud800', 'é']) + text.slice(at);
    case 1:
      return text.slice(0, at) + text.slice(at + 1);
    case 2:
      return text.replace('": ', '":');
    case 3:
      return text.replace(', "', ',"');
    case 4:
      return `${text} `;
    default:
      return text;
  }
}

/** What the lossless reading says of a line: its hashed body and values, or that it refuses it. */
function lossless(text: string): { body: string; value: JsonValue } | { refused: string } {
  let pairs;
  try {
    pairs = readCanonicalPairs(text);
  } catch (error) {
    if (error instanceof JsonReadError) return { refused: error.problem };
    throw error;
  }
  if (pairs.length !== SORTED_RECORD_KEYS.length || pairs.some(([key], i) => key !== SORTED_RECORD_KEYS[i])) return { refused: 'keys' };
  const typed = pairs.every(([key, canonical]) => {
    const first = canonical.charAt(0);
    if (OBJECT_KEYS.has(key)) return first === '{';
    return first === '"' || (canonical === 'null' && NULLABLE_KEYS.has(key));
  });
  if (!typed) return { refused: 'types' };
  const fields = Object.fromEntries(pairs.filter(([key]) => !UNHASHED_KEYS.has(key))) as CanonicalFields;
  return { body: hashedBody(fields), value: parseJsonLossless(text) };
}

function asLine(text: string, number: number): TrailLine {
  return { text, number, terminated: true };
}

interface Base {
  readonly name: string;
  readonly trail: readonly string[];
}

async function auraTrail(): Promise<string[]> {
  const { session } = openSession();
  session.emit('tool.call', { tool: 'search', args: { q: 'weather', n: 3, ratio: 0.25, tags: ['a', 'b'], opts: { deep: { x: null, y: true } } }, note: 'plain text' });
  session.emit('note', { text: 'naïve café 😀', path: '/a/b', quote: 'say "hi"\n' });
  session.emit('tool.result', { tool: 'search', result: { items: [1, 2, 3], empty: {}, none: [] } });
  const result = await session.close();
  return lines(result.log_path);
}

function pythonTrails(): Base[] {
  return fs
    .readdirSync(FIXTURES)
    .filter((name) => name.endsWith('.jsonl') && !name.endsWith('.otel.jsonl'))
    .map((name) => ({ name, trail: fs.readFileSync(path.join(FIXTURES, name), 'utf8').split('\n').filter((line) => line !== '') }));
}

describe('the fast readings, over seeded mutations of real lines', async () => {
  const bases: Base[] = [{ name: 'aura', trail: await auraTrail() }, ...pythonTrails()];
  const tally = { cases: 0, sliced: 0, parsed: 0, refused: 0 };

  for (const [b, base] of bases.entries()) {
    it(`agree with the lossless reading on ${CASES_PER_BASE} mutations of each line of ${base.name}`, () => {
      const fuzz = new Fuzz(seededRandom(0x5eed + b));
      for (let at = 2; at < base.trail.length; at++) {
        const original = base.trail[at] as string;
        const record = modelOf(parseJsonLossless(original)) as Record<string, Model>;
        for (let n = 0; n < CASES_PER_BASE; n++) {
          const mutated: Record<string, Model> = { ...record };
          for (const key of ['payload', 'telemetry', 'agent_ids', 'kind', 'step_id']) {
            if (fuzz.chance(0.5)) mutated[key] = mutateModel(mutated[key] as Model, fuzz, 1);
          }
          let text = spellRecord(mutated, fuzz);
          const read = lossless(text);
          if ('body' in read) text = text.replace(PLACEHOLDER, contentHash((record['prev_hash'] as string | null) ?? null, read.body));
          if (fuzz.chance(0.2)) text = editText(text, fuzz);
          checkAgreement(text, `${base.name} line ${at + 1} case ${n}: ${text}`, tally);
          const report = verifyLines([...base.trail.slice(0, at), text].map((line, i) => asLine(line, i + 1)));
          const now = lossless(text);
          // Intact as the lossless reading sees it: read, linked to the line before, in its session, and hashed right.
          const fields = 'body' in now ? (now.value as Record<string, unknown>) : null;
          const intact =
            fields !== null &&
            'body' in now &&
            fields['prev_hash'] === record['prev_hash'] &&
            fields['session_id'] === record['session_id'] &&
            contentHash(fields['prev_hash'] as string, now.body) === fields['content_hash'];
          if (!intact) expect(report.hash_chain_valid, text).toBe(false);
          else expect(report, text).toMatchObject({ hash_chain_valid: true, events: at + 1 });
        }
      }
    });
  }

  it('took lines the fast ways, and refused others, in numbers that make the comparison mean something', () => {
    expect(tally.cases).toBeGreaterThan(5000);
    expect(tally.sliced).toBeGreaterThan(tally.cases / 10);
    expect(tally.parsed).toBeGreaterThan(tally.cases / 20);
    expect(tally.refused).toBeGreaterThan(tally.cases / 10);
  });
});

function checkAgreement(text: string, label: string, tally: { cases: number; sliced: number; parsed: number; refused: number }): void {
  tally.cases++;
  const read = lossless(text);
  const sliced = readRecordSlices(text, true);
  const parsed = sliced === null ? readRecordFast(text) : null;
  if (!('body' in read)) {
    tally.refused++;
    expect(sliced, label).toBeNull();
    expect(readRecordFast(text), label).toBeNull();
    return;
  }
  const value = read.value as Record<string, JsonValue>;
  if (sliced !== null) {
    tally.sliced++;
    expect(sliced.body, label).toBe(read.body);
    expect({ event_id: sliced.event_id, session_id: sliced.session_id, kind: sliced.kind, prev_hash: sliced.prev_hash, content_hash: sliced.content_hash }, label).toEqual({
      event_id: value['event_id'],
      session_id: value['session_id'],
      kind: value['kind'],
      prev_hash: value['prev_hash'],
      content_hash: value['content_hash'],
    });
    // The record handed to readers, built from the slices, and the payload the signing checks
    // read, are what JSON.parse reads, with the keys in the line's order.
    expect(JSON.parse(text), label).toEqual(value);
    expect(sliced.record, label).toEqual(value);
    expect(Object.keys(sliced.record ?? {}), label).toEqual(Object.keys(JSON.parse(text) as object));
    expect(JSON.parse(sliced.payloadText), label).toEqual(value['payload']);
  }
  const fast = readRecordFast(text);
  if (fast !== null) {
    if (parsed !== null) tally.parsed++;
    expect(fast.body, label).toBe(read.body);
    expect(fast.record, label).toEqual(value);
  }
}
