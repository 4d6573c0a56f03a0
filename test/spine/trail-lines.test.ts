import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { trailLines } from '../../src/spine/trail-lines.js';
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
