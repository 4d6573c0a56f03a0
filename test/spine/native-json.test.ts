/**
 * Escaped object keys, which V8 12.8 and later (Node 24) can misread (src/spine/native-json.ts):
 * the check that finds them, against a model over generated values and layouts; `parseJson`'s
 * readings; and a forgery that only a misreading verifier accepts, run on Node 24 from the npm
 * registry's `node` package (scripts/install-compat.sh, `npm test`'s pretest step) and on the
 * suite's own Node.
 */

import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { hasEscapedKey, parseJson } from '../../src/spine/native-json.js';
import { REPO } from '../helpers/fixtures.js';
import { pythonVerify } from '../helpers/python.js';
import { seededRandom } from '../helpers/random.js';
import { tempDir } from '../helpers/temp.js';

const NODE_24 = path.join(REPO, '.compat', 'node-24', 'node_modules', '.bin', 'node');
const FIXTURE = path.join(REPO, 'test', 'fixtures', 'escaped-keys.mjs');

// Characters JSON writes plainly and characters it escapes, and texts that look like JSON inside strings.
const PIECES = ['a', 'b', 'é', ' ', ':', ',', '{', '[', '"', '\\', '\n', '\t', '\u0001', '\\"', '":', '": ', '\\\\', '\\u0041'];

function textOf(random: () => number): string {
  let text = '';
  const length = Math.floor(random() * 4);
  for (let i = 0; i < length; i++) text += PIECES[Math.floor(random() * PIECES.length)] as string;
  return text;
}

function valueOf(random: () => number, depth: number): unknown {
  const pick = random();
  if (depth > 2 || pick < 0.3) return textOf(random);
  if (pick < 0.4) return Math.floor(random() * 100);
  if (pick < 0.6) return Array.from({ length: Math.floor(random() * 3) }, () => valueOf(random, depth + 1));
  const object: Record<string, unknown> = {};
  for (let i = Math.floor(random() * 4); i > 0; i--) object[textOf(random)] = valueOf(random, depth + 1);
  return object;
}

/** The model: some key, at any depth, is one JSON.stringify escapes. */
function modelHasEscapedKey(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(modelHasEscapedKey);
  if (value === null || typeof value !== 'object') return false;
  return Object.entries(value).some(([key, inner]) => JSON.stringify(key) !== `"${key}"` || modelHasEscapedKey(inner));
}

describe('hasEscapedKey', () => {
  it('finds a key written with an escape, and only a key', () => {
    expect(hasEscapedKey('{"a": 1, "b": [2]}')).toBe(false);
    expect(hasEscapedKey('{"a": "line\\nbreak", "b": "say \\"hi\\""}')).toBe(false);
    expect(hasEscapedKey('{"a\\"": 1}')).toBe(true);
    expect(hasEscapedKey('{"x": {"\\u0061": 1}}')).toBe(true);
    expect(hasEscapedKey('[{"k": 1}, {"tab\\t" \n\t : 2}]')).toBe(true);
    // A value holding what a key looks like, and a string ending in an escaped backslash.
    expect(hasEscapedKey('{"v": "\\"k\\": 1", "w": "a\\\\"}')).toBe(false);
    expect(hasEscapedKey('{"v": "a\\\\", "k\\\\": 1}')).toBe(true);
    expect(hasEscapedKey('"\\"":')).toBe(true);
    expect(hasEscapedKey('{"a": "unterminated\\')).toBe(false);
  });

  it('agrees with the model on 4,000 generated values, compact and indented', () => {
    const random = seededRandom(0x6e7);
    for (let n = 0; n < 2000; n++) {
      const value = valueOf(random, 0);
      const expected = modelHasEscapedKey(value);
      expect(hasEscapedKey(JSON.stringify(value)), JSON.stringify(value)).toBe(expected);
      expect(hasEscapedKey(JSON.stringify(value, null, 2)), JSON.stringify(value)).toBe(expected);
    }
  });
});

describe('parseJson', () => {
  it("gives JSON.parse's values, keys as written", () => {
    const text = '{"a\\"": [1, 2.5, 1e3, 1.0, 12345678901234567890], "b\\\\": {"__proto__": {"x": true}}, "c": null}';
    const value = parseJson(text) as Record<string, unknown>;
    // What JSON.parse reads for the same text with plain keys.
    const plain = JSON.parse(text.replace('"a\\""', '"A"').replace('"b\\\\"', '"B"')) as Record<string, unknown>;
    expect(Object.keys(value)).toEqual(['a"', 'b\\', 'c']);
    expect(value['a"']).toEqual(plain['A']);
    expect(value['a"']).toEqual([1, 2.5, 1000, 1, 12345678901234567000]);
    expect(value['b\\']).toEqual(plain['B']);
    const inner = value['b\\'] as object;
    expect(Object.getPrototypeOf(inner)).toBe(Object.prototype);
    expect(Object.keys(inner)).toEqual(['__proto__']);
  });

  it('refuses what the lossless reader refuses in a text with an escaped key, and what JSON.parse refuses in any', () => {
    expect(() => parseJson('{"a\\"": 1, "a\\"": 2}')).toThrow(/duplicate key "a\\"" at column/);
    expect(() => parseJson('{"a": 1,}')).toThrow(SyntaxError);
    expect(() => parseJson('{"a\\"": NaN}')).toThrow(SyntaxError);
    // Without an escaped key, a duplicate is JSON.parse's business: the last one is kept.
    expect(parseJson('{"a": 1, "a": 2}')).toEqual({ a: 2 });
  });
});

interface EscapedKeysReport {
  readonly node: string;
  readonly jsonParseKeys: string[];
  readonly parseJsonKeys: string[];
  readonly written: { chain: object; payloadKeys: string[][] };
  readonly relaid: { chain: object; payloadKeys: string[][] };
  readonly forged: { line: number; chain: object };
}

function runFixture(node: string): { report: EscapedKeysReport; home: string } {
  const home = tempDir();
  const run = spawnSync(node, [FIXTURE, REPO, home], { encoding: 'utf8' });
  expect(run.stderr).toBe('');
  return { report: JSON.parse(run.stdout) as EscapedKeysReport, home };
}

function expectReadRight({ report, home }: { report: EscapedKeysReport; home: string }): void {
  const keys = [['Probe', 'a\\'], ['Probe', 'a"']];
  expect(report.parseJsonKeys).toEqual(['Probe', 'a"']);
  expect(report.written).toEqual({ chain: { hash_chain_valid: true, events: 5, reason: null }, payloadKeys: keys });
  expect(report.relaid).toEqual({ chain: { hash_chain_valid: true, events: 5, reason: null }, payloadKeys: keys });
  // The forged line is refused, as Python Aura's rule refuses it.
  expect(report.forged).toEqual({ line: 4, chain: { hash_chain_valid: false, events: 3, reason: 'edited' } });
  expect(pythonVerify(path.join(home, 'forged.jsonl'))).toMatchObject({ valid: false, line: 4 });
}

describe('escaped keys, end to end', () => {
  it('on Node 24, whose JSON.parse misreads them: read as written, and a forgery built on the misreading refused', () => {
    expect(fs.existsSync(NODE_24), 'Node 24 in .compat/node-24: run scripts/install-compat.sh').toBe(true);
    const run = runFixture(NODE_24);
    expect(run.report.node).toMatch(/^v24\./);
    // The binary has the bug, so the rest of this test means something.
    expect(run.report.jsonParseKeys).toEqual(['Probe', 'a\\']);
    expectReadRight(run);
  });

  it(`on this Node (${process.version})`, () => {
    expectReadRight(runFixture(process.execPath));
  });
});
