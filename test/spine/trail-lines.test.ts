import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openTrail, TrailFollower, trailLines } from '../../src/spine/trail-lines.js';
import { tempDir } from '../helpers/temp.js';

describe('trailLines', () => {
  it('gives every line as written, short and long, multi-byte text included, across the pieces it decodes', () => {
    const written: string[] = [];
    // Lines around and past the 64 KiB pieces it decodes, and past a 4 MiB chunk, with 'é' and '😀' that a byte split would tear.
    for (let i = 0; i < 3000; i++) written.push(`{"n": ${i}, "text": "${'é😀x'.repeat(i % 97)}"}`);
    written.splice(10, 0, `{"long": "${'a'.repeat(100_000)}"}`, `{"longer": "${'é'.repeat(300_000)}"}`);
    written.splice(2000, 0, `{"huge": "${'z'.repeat(5 * 1024 * 1024)}"}`);
    const file = path.join(tempDir(), 'trail.jsonl');
    fs.writeFileSync(file, `${written.join('\n')}\n{"torn": `);
    const read = [...trailLines(file)];
    expect(read.map((line) => line.text)).toEqual([...written, '{"torn": ']);
    expect(read.map((line) => line.number)).toEqual(read.map((_, i) => i + 1));
    expect(read.map((line) => line.terminated)).toEqual([...written.map(() => true), false]);
  });
});

describe('TrailFollower', () => {
  it('takes each line once it is whole, a line cut by the end of what is written at the next read, and a last line without newline only at the end', () => {
    const file = path.join(tempDir(), 'trail.jsonl');
    fs.writeFileSync(file, '');
    const fd = openTrail(file);
    const follower = new TrailFollower(fd, file);
    const texts = (end = false): string[] | null => follower.read(end)?.map((line) => line.text) ?? null;
    expect(texts()).toBeNull();
    fs.appendFileSync(file, '{"n": 1}\n{"n": 2}\n{"n": ');
    expect(texts()).toEqual(['{"n": 1}', '{"n": 2}']);
    expect(texts()).toBeNull();
    fs.appendFileSync(file, '3, "t": "é😀"}\n');
    expect(follower.read(false)).toEqual([{ text: '{"n": 3, "t": "é😀"}', number: 3, terminated: true }]);
    const long = `{"long": "${'a'.repeat(5 * 1024 * 1024)}"}`;
    fs.appendFileSync(file, `${long}\n{"torn": `);
    const reads: string[] = [];
    for (let lines = follower.read(false); lines !== null; lines = follower.read(false)) reads.push(...lines.map((line) => line.text));
    expect(reads).toEqual([long]);
    expect(follower.read(true)).toEqual([{ text: '{"torn": ', number: 5, terminated: false }]);
    expect(follower.read(true)).toBeNull();
    expect(follower.offset).toBe(fs.statSync(file).size);
    fs.closeSync(fd);
  });
});
