/**
 * No layout of a trail line fools a reader: generated adversarial layouts (white space around ':'
 * and ',', escaped key names, duplicates at every depth, keys inside strings, unicode escapes) go
 * through the fast reader and the lossless one, which must agree, and every duplicate is refused
 * by every reader of evidence. The forgery that passed `verify chain` (a duplicate written with a
 * space before its colon, which the fast reader's count did not see) runs through the real CLI.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readRecordFast, readRecordSlices, parseJsonStrict, parseLineText } from '../../src/spine/fast-record.js';
import { JsonReadError, parseJsonLossless, readCanonicalPairs } from '../../src/spine/json-reader.js';
import { hashedBody, UNHASHED_KEYS } from '../../src/spine/record.js';
import { KeyRing } from '../../src/spine/signing.js';
import { verifyLines } from '../../src/spine/verify.js';
import type { TrailLine } from '../../src/spine/trail-lines.js';
import { AuraError } from '../../src/errors.js';
import { agent } from '../../src/session/agent.js';
import { readJsonFile } from '../../src/store/json-file.js';
import { readSealLog } from '../../src/store/seal-log.js';
import { summarySeal } from '../../src/store/summary-seal.js';
import { auraJson } from '../helpers/cli.js';
import { lines, openSession } from '../helpers/sessions.js';
import { tempDir } from '../helpers/temp.js';

/** A payload with objects four deep, so a duplicate can sit at every depth. */
const PAYLOAD = { tool: 'search', args: { q: 'weather', opts: { lang: 'en', deep: { level: 3, leaf: { x: 1 } } } }, note: 'plain text' };

/** One generated layout of a record line. */
interface Layout {
  readonly name: string;
  readonly text: string;
  /** The key a reader must refuse as a duplicate, or null when the line holds none. */
  readonly duplicate: string | null;
}

const SPACES = ['', ' ', '  ', '\t', '\n', '\r', ' \t\n\r ', '\r\n'];
/** Spellings of `tool` a JSON reader decodes to the same key. */
const TOOL_SPELLINGS = ['tool', 't\\u006fol', '\\u0074\\u006F\\u006f\\u006c', 'to\\u006Fl', 'too\\u006c'];
/** Spellings of `kind`. */
const KIND_SPELLINGS = ['kind', 'k\\u0069nd', '\\u006bind', 'kin\\u0064'];

async function recordLines(): Promise<string[]> {
  const { session } = openSession();
  session.emit('tool.call', PAYLOAD);
  session.emit('note', { text: 'after' });
  const result = await session.close();
  return lines(result.log_path);
}

/** Inserts `member` (e.g. `"k": 1, `) right after the opening brace of the object whose key is `key`. */
function insertInto(text: string, key: string, member: string): string {
  const at = text.indexOf(`"${key}": {`);
  if (at < 0) throw new Error(`no object ${key} in ${text}`);
  const open = at + `"${key}": {`.length;
  return text.slice(0, open) + member + text.slice(open);
}

/** Re-lays a line's separators: `before`/`after` around every ':' and ',' between tokens. */
function spaced(text: string, colon: [string, string], comma: [string, string]): string {
  return text.replaceAll('": ', `"${colon[0]}:${colon[1]}`).replaceAll(', "', `${comma[0]},${comma[1]}"`);
}

function layoutsOf(line: string): Layout[] {
  const out: Layout[] = [];
  // White space alone: never a duplicate, and the same hashed text.
  for (const a of SPACES) {
    for (const b of ['', ' ', '\t']) {
      out.push({ name: `colon ${JSON.stringify(a)}:${JSON.stringify(b)}`, text: spaced(line, [a, b], ['', ' ']), duplicate: null });
      out.push({ name: `comma ${JSON.stringify(a)},${JSON.stringify(b)}`, text: spaced(line, ['', ' '], [a, b]), duplicate: null });
    }
  }
  // The forgery as found, then its spellings: a decoy before the real key, which JSON.parse drops.
  const depths: [string, string][] = [
    ['payload', 'tool'],
    ['args', 'q'],
    ['opts', 'lang'],
    ['deep', 'level'],
    ['leaf', 'x'],
  ];
  for (const space of SPACES) {
    for (const [depth, [object, key]] of depths.entries()) {
      out.push({ name: `duplicate ${key} at depth ${depth + 1}, ${JSON.stringify(space)} before ':'`, text: insertInto(line, object, `"${key}"${space}: "EVIL", `), duplicate: key });
    }
    const kind = line.indexOf('"kind": ');
    out.push({ name: `duplicate kind at depth 0, ${JSON.stringify(space)} before ':'`, text: `${line.slice(0, kind)}"kind"${space}: "evil.kind", ${line.slice(kind)}`, duplicate: 'kind' });
  }
  for (const spelling of TOOL_SPELLINGS) {
    for (const space of ['', ' ']) {
      out.push({ name: `duplicate tool spelled ${spelling}, ${JSON.stringify(space)} before ':'`, text: insertInto(line, 'payload', `"${spelling}"${space}: "EVIL.tool", `), duplicate: 'tool' });
    }
    // After the real key too: a reader that keeps the first value sees the real one, JSON.parse the decoy.
    out.push({ name: `duplicate tool spelled ${spelling}, last`, text: line.replace('"tool": "search"', `"tool": "search", "${spelling}" : "EVIL.tool"`), duplicate: 'tool' });
  }
  for (const spelling of KIND_SPELLINGS) {
    const kind = line.indexOf('"kind": ');
    out.push({ name: `duplicate kind spelled ${spelling}`, text: `${line.slice(0, kind)}"${spelling}" : "evil.kind", ${line.slice(kind)}`, duplicate: 'kind' });
    out.push({ name: `duplicate kind spelled ${spelling}, tight colon, after`, text: line.replace('"timestamp": ', `"${spelling}": "evil.kind", "timestamp": `), duplicate: 'kind' });
  }
  // The count fooled both ways at once: one spaced duplicate, one '":' hidden in a string to make up for it.
  out.push({
    name: 'a spaced duplicate balanced by a quoted colon in a string',
    text: insertInto(line, 'payload', '"tool" : "EVIL.tool", ').replace('"plain text"', '"plain \\": text"'),
    duplicate: 'tool',
  });
  out.push({
    name: 'a duplicate whose key ends in an escaped quote',
    text: insertInto(insertInto(line, 'payload', '"a\\"": 1, '), 'payload', '"a\\u0022": 2, '),
    duplicate: 'a"',
  });
  out.push({ name: 'a duplicate astral key, raw and escaped', text: insertInto(insertInto(line, 'payload', '"\\ud83d\\ude00": 1, '), 'payload', '"😀": 2, '), duplicate: '😀' });
  out.push({ name: 'a duplicate __proto__', text: insertInto(insertInto(line, 'payload', '"__proto__": 1, '), 'payload', '"__proto__": {}, '), duplicate: '__proto__' });
  out.push({ name: 'a duplicate empty key', text: insertInto(insertInto(line, 'leaf', '"": 1, '), 'leaf', '"" : 2, '), duplicate: '' });
  // Keys inside string values: text that looks like keys, but is data (and changes the hash: edited, not a duplicate).
  out.push({ name: 'a key-like text in a string', text: line.replace('"plain text"', '"\\"tool\\": \\"EVIL\\", \\"kind\\" : 1"'), duplicate: null });
  out.push({ name: 'a spaced colon in a string', text: line.replace('"plain text"', '"a \\" : b"'), duplicate: null });
  out.push({ name: 'escaped names, no duplicate', text: line.replace('"tool": "search"', '"t\\u006fol": "search"').replace('"note": ', '"n\\u006fte" : '), duplicate: null });
  // Aura's own layout but for one detail the slice reader must not take as canonical.
  out.push({ name: 'keys sorted by their escaped spelling, not their value, in a string-keyed object', text: insertInto(line, 'leaf', '"aB": 1, "a\\"": 2, '), duplicate: null });
  out.push({ name: 'an astral key before a high BMP key (UTF-16 order; Python sorts by code point), in a string-keyed object', text: insertInto(line, 'leaf', '"\ud83d\ude00": 1, "\uffff": 2, '), duplicate: null });
  out.push({ name: 'a longer key before its prefix, in a string-keyed object', text: insertInto(line, 'leaf', '"a b": 1, "a": 2, '), duplicate: null });
  out.push({ name: 'an integral float 1.0 in a string-keyed object', text: line.replace('"level": 3', '"level": 3.0'), duplicate: null });
  out.push({ name: 'a value spelled with an escape Python does not write (\\u0061), the same text', text: line.replace('"plain text"', '"pl\\u0061in text"'), duplicate: null });
  // Some white-space pairs give the line as written: each text once.
  return out.filter((layout, i) => out.findIndex((other) => other.text === layout.text) === i);
}

function asLine(text: string, number: number): TrailLine {
  return { text, number, terminated: true };
}

/** What the lossless reader says: the duplicate key it refused, or the canonical hashed body. */
function lossless(text: string): { duplicate: string } | { body: string } {
  try {
    const pairs = readCanonicalPairs(text);
    const fields = Object.fromEntries(pairs.filter(([key]) => !UNHASHED_KEYS.has(key)));
    return { body: hashedBody(fields as Parameters<typeof hashedBody>[0]) };
  } catch (error) {
    if (error instanceof JsonReadError && error.problem === 'duplicate_key') return { duplicate: JSON.parse(error.message.slice('duplicate key '.length, error.message.lastIndexOf(' at column'))) as string };
    throw error;
  }
}

function refusesDuplicate(read: () => unknown, errorType: new (...args: never[]) => Error, key: string): void {
  expect(read).toThrow(errorType);
  expect(read).toThrow(`duplicate key ${JSON.stringify(key)}`);
}

describe('the trail readers, over adversarial layouts', async () => {
  const trail = await recordLines();
  const at = trail.findIndex((l) => l.includes('"kind": "tool.call"'));
  const before = trail.slice(0, at);
  const after = trail.slice(at + 1);
  const layouts = layoutsOf(trail[at] as string);

  it('generates at least 50 distinct layouts, duplicates and clean ones', () => {
    const distinct = new Set(layouts.map((l) => l.text));
    expect(distinct.size).toBe(layouts.length);
    expect(distinct.size).toBeGreaterThanOrEqual(50);
    expect(layouts.filter((l) => l.duplicate !== null).length).toBeGreaterThanOrEqual(50);
    expect(layouts.filter((l) => l.duplicate === null).length).toBeGreaterThanOrEqual(20);
  });

  for (const layout of layouts) {
    it(`${layout.duplicate === null ? 'agree on' : 'refuse'} ${layout.name}`, () => {
      const slow = lossless(layout.text);
      const fast = readRecordFast(layout.text);
      if (layout.duplicate !== null) {
        expect(slow).toEqual({ duplicate: layout.duplicate });
        expect(fast).toBeNull();
        expect(readRecordSlices(layout.text)).toBeNull();
        refusesDuplicate(() => parseJsonLossless(layout.text), JsonReadError, layout.duplicate);
        refusesDuplicate(() => parseLineText(layout.text), Error, layout.duplicate);
        refusesDuplicate(() => parseJsonStrict(layout.text), SyntaxError, layout.duplicate);
      } else {
        expect(slow).toHaveProperty('body');
        // The fast reader may step aside; when it answers, it answers as the lossless reader does.
        if (fast !== null) expect(fast.body).toBe((slow as { body: string }).body);
        const sliced = readRecordSlices(layout.text);
        if (sliced !== null) expect(sliced.body).toBe((slow as { body: string }).body);
        expect(parseJsonStrict(layout.text)).toEqual(JSON.parse(layout.text));
        expect(parseLineText(layout.text)).toEqual(parseJsonLossless(layout.text));
      }
      const report = verifyLines([...before, layout.text, ...after].map((text, i) => asLine(text, i + 1)));
      const line = at + 1;
      if (layout.duplicate !== null) {
        expect(report).toMatchObject({ hash_chain_valid: false, complete: false, reason: 'malformed_record', line });
        expect(report.message).toContain(`line ${line}: duplicate key ${JSON.stringify(layout.duplicate)}`);
      } else if (layout.name.includes('string')) {
        // Data changed inside a string: the hash no longer matches.
        expect(report).toMatchObject({ hash_chain_valid: false, reason: 'edited', line });
      } else {
        expect(report).toMatchObject({ hash_chain_valid: true, complete: true });
      }
    });
  }
});

describe('verify chain, on a signed trail forged with duplicate keys', () => {
  it('refuses the spaced-colon forgery of tool and kind, naming the line and the key', async () => {
    const home = tempDir();
    KeyRing.generate(path.join(home, 'keys'));
    fs.writeFileSync(path.join(home, 'config.yaml'), 'checkpoint_every: 3\n');
    const session = agent('acme/signed', { home }).session();
    session.emit('tool.call', { tool: 'files.read', args: { path: 'notes.txt' } });
    session.emit('tool.result', { tool: 'files.read', result: 'ok' });
    const result = await session.close();
    const trail = result.log_path;
    const clean = auraJson(['verify', 'chain', result.session_id, '--keys', path.join(home, 'keys'), '--summary', result.exports.summary ?? ''], { home });
    expect(clean.status).toBe(0);

    const original = lines(trail);
    const index = original.findIndex((l) => l.includes('"kind": "tool.call"'));
    const forged = (original[index] as string).replace('"payload": {', '"payload": {"tool" : "EVIL.tool", ').replace('"kind": ', '"kind" : "evil.kind", "kind": ');
    fs.writeFileSync(trail, [...original.slice(0, index), forged, ...original.slice(index + 1)].join('\n') + '\n');

    const byId = auraJson(['verify', 'chain', result.session_id, '--keys', path.join(home, 'keys')], { home });
    expect(byId.status).toBe(1);
    expect(byId.json).toMatchObject({ hash_chain_valid: false, complete: false, reason: 'malformed_record', line: index + 1 });
    expect(byId.json['message']).toMatch(new RegExp(`^line ${index + 1}: duplicate key "(kind|tool)"`));
    const withSummary = auraJson(['verify', 'chain', trail, '--keys', path.join(home, 'keys'), '--summary', result.exports.summary ?? ''], { home });
    expect(withSummary.status).toBe(1);
    expect(withSummary.json).toMatchObject({ reason: 'malformed_record', line: index + 1 });
  });
});

describe('summaries and seal logs, read with a duplicate key', () => {
  it('refuses a summary whose seal is given twice, naming the key', async () => {
    const { session } = openSession();
    session.emit('note', { text: 'one' });
    const result = await session.close();
    const summary = result.exports.summary ?? '';
    const text = fs.readFileSync(summary, 'utf8');
    // A second "chain" before the real one: JSON.parse would keep the real one, a first-value reader the forged one.
    fs.writeFileSync(summary, text.replace('{', '{"chain" : {"events": 1, "first_hash": null, "head_hash": null},'));
    expect(() => readJsonFile(summary, 'summary')).toThrow(AuraError);
    expect(() => summarySeal(summary)).toThrow(/is not a JSON summary: duplicate key "chain"/);
    const run = auraJson(['verify', 'chain', result.log_path, '--summary', summary]);
    expect(run.status).toBe(2);
  });

  it('finds a seal-log line holding a key twice to be a problem at that line', async () => {
    const { session, home } = openSession();
    await session.close();
    const log = path.join(home, 'seals.jsonl');
    expect(readSealLog(log)).toMatchObject({ problem: null });
    const [line] = lines(log);
    fs.writeFileSync(log, `${(line as string).replace('{"seal":', '{"hash" : "forged", "seal":')}\n`);
    expect(readSealLog(log).problem).toMatchObject({ line: 1 });
  });
});
