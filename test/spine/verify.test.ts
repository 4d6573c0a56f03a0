import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readTrailLines } from '../../src/spine/trail-reader.js';
import { trailLines } from '../../src/spine/trail-lines.js';
import { verifyTrail } from '../../src/spine/verify.js';
import { AURA_PY, interopIndex, pythonTrail } from '../helpers/fixtures.js';
import { lines, openSession, rehash, writeLines, writeSampleTrail } from '../helpers/sessions.js';
import { pythonVerify } from '../helpers/python.js';
import { tempDir } from '../helpers/temp.js';

describe('verifyTrail', () => {
  describe('when given the trails Python Aura 0.3.3 wrote', () => {
    const index = interopIndex();
    for (const [name, { session_id }] of Object.entries(index.sessions)) {
      it(`verifies ${name} (${session_id}) as valid and complete`, () => {
        const report = verifyTrail(pythonTrail(session_id));
        expect(report).toMatchObject({ hash_chain_valid: true, complete: true, session_id });
        expect(report.reason).toBeUndefined();
        expect(report.events).toBe(lines(pythonTrail(session_id)).length);
      });
    }
  });

  describe('when given the tampered copies', () => {
    const index = interopIndex();
    for (const [name, entry] of Object.entries(index.tampered)) {
      it(`answers ${name} as index.json requires`, () => {
        const report = verifyTrail(path.join(AURA_PY, 'tampered', entry.file));
        const must = entry.aura_must_answer;
        if (must.reason !== undefined) expect(report.reason).toBe(must.reason);
        if (must.hash_chain_valid !== undefined) expect(report.hash_chain_valid).toBe(must.hash_chain_valid);
        if (must.complete !== undefined) expect(report.complete).toBe(must.complete);
        // Where Python named the first broken event, we name the same one.
        const python = entry.python_aura_stdout === '' ? {} : (JSON.parse(entry.python_aura_stdout) as { event_id?: string });
        if (python.event_id !== undefined) expect(report.event_id).toBe(python.event_id);
      });
    }
  });

  describe('when a trail written by aura is tampered with', () => {
    it('verifies the untouched trail, and Python verifies it too', async () => {
      const { trail } = await writeSampleTrail();
      expect(verifyTrail(trail)).toMatchObject({ hash_chain_valid: true, complete: true, events: 8 });
      expect(pythonVerify(trail)).toEqual({ valid: true, events: 8 });
    });

    const cases: [string, (records: Record<string, unknown>[]) => string[], string, number][] = [
      ['a payload value edited', (r) => edit(r, 3, (e) => ((e['payload'] as Record<string, unknown>)['tool'] = 'shell')), 'edited', 4],
      ['a content_hash removed from the last line', (r) => edit(r, 7, (e) => delete e['content_hash']), 'missing_hash', 8],
      ['a prev_hash removed', (r) => edit(r, 4, (e) => delete e['prev_hash']), 'missing_hash', 5],
      ['a prev_hash edited', (r) => edit(r, 4, (e) => (e['prev_hash'] = 'f'.repeat(64))), 'deleted_or_reordered', 5],
      ['a content_hash in upper case', (r) => edit(r, 2, (e) => (e['content_hash'] = String(e['content_hash']).toUpperCase())), 'missing_hash', 3],
      ['a prev_hash of null after the first event', (r) => edit(r, 2, (e) => (e['prev_hash'] = null)), 'missing_hash', 3],
      ['an unhashed field added', (r) => edit(r, 2, (e) => (e['note'] = 'rides along')), 'malformed_record', 3],
      ['a hashed field removed', (r) => edit(r, 2, (e) => delete e['telemetry']), 'malformed_record', 3],
      ['a field of the wrong type', (r) => edit(r, 2, (e) => (e['payload'] = 'text')), 'malformed_record', 3],
      ['two events swapped', (r) => swap(r, 2, 3), 'deleted_or_reordered', 3],
      ['the first event deleted', (r) => r.slice(1).map((e) => JSON.stringify(e)), 'deleted_or_reordered', 1],
      ['an event from another session', (r) => edit(r, 3, (e) => (e['session_id'] = 'aura_sess_ffffffffffff')), 'malformed_record', 4],
    ];
    for (const [what, tamper, reason, line] of cases) {
      it(`reports ${reason} at line ${line} for ${what}`, async () => {
        const { trail } = await writeSampleTrail();
        const records = lines(trail).map((text) => JSON.parse(text) as Record<string, unknown>);
        const report = verifyTrail(writeLines(trail, 'tampered.jsonl', tamper(records)));
        expect(report).toMatchObject({ hash_chain_valid: false, complete: false, reason, line });
        expect(report.message).toBeTypeOf('string');
      });
    }

    it('reports a duplicated key as malformed_record', async () => {
      const { trail } = await writeSampleTrail();
      const text = lines(trail);
      text[2] = (text[2] as string).replace('{"event_id"', '{"kind": "decoy", "event_id"');
      expect(verifyTrail(writeLines(trail, 'dup.jsonl', text))).toMatchObject({ reason: 'malformed_record', line: 3 });
    });

    it('does not treat key order or white space inside a line as evidence', async () => {
      const { trail } = await writeSampleTrail();
      const reordered = lines(trail).map((text) => {
        const record = JSON.parse(text) as Record<string, unknown>;
        const keys = Object.keys(record).reverse();
        return `{ ${keys.map((k) => `${JSON.stringify(k)} :\t${JSON.stringify(record[k], null, 1).replaceAll('\n', ' ')}`).join(' ,  ')} }`;
      });
      expect(verifyTrail(writeLines(trail, 'reordered.jsonl', reordered))).toMatchObject({ hash_chain_valid: true, complete: true, events: 8 });
    });

    it('treats a changed number type as an edit: 1.0 to 1, -0.0 to 0.0, a big integer rounded', () => {
      const numbers = pythonTrail(interopIndex().sessions['numbers']?.session_id ?? '');
      const original = lines(numbers);
      const dir = tempDir();
      const edits: [RegExp, string][] = [
        [/"f_neg_zero": -0\.0/, '"f_neg_zero": 0.0'],
        [/"i_2p64p1": 18446744073709551617/, '"i_2p64p1": 18446744073709552000'],
        [/"f_hundred": 100\.0/, '"f_hundred": 100'],
      ];
      for (const [pattern, replacement] of edits) {
        const edited = original.map((line) => line.replace(pattern, replacement));
        expect(edited).not.toEqual(original);
        expect(verifyTrail(writeLines(path.join(dir, 'numbers.jsonl'), 'n.jsonl', edited))).toMatchObject({
          hash_chain_valid: false,
          reason: 'edited',
        });
      }
    });
  });

  describe('when a line of an aura trail would read the same to JSON.parse after an edit', () => {
    // Each edit keeps the JS value but changes what Python reads: the fast reader must step aside.
    const edits: [string, number, string, string, string][] = [
      ['an int made a float', 3, '"count": 1', '"count": 1.0', 'edited'],
      ['an int given an exponent', 3, '"count": 1', '"count": 1e0', 'edited'],
      ['an int written as a long fraction', 3, '"count": 1', '"count": 0.99999999999999999999', 'edited'],
      ['a duplicate key whose last value is the hashed one', 3, '"count": 1', '"count": 2, "count": 1', 'malformed_record'],
      ['a duplicate top-level key', 3, '{"event_id"', '{"kind": "decoy", "event_id"', 'malformed_record'],
      ['an int rounded to the same double', 4, '"big": 18446744073709552000', '"big": 18446744073709551617', 'edited'],
    ];
    for (const [what, line, from, to, reason] of edits) {
      it(`reports ${reason} for ${what}`, async () => {
        const { session } = openSession();
        session.emit('note', { count: 1 });
        session.emit('note', { big: 18446744073709552000 });
        const result = await session.close();
        const text = lines(result.log_path);
        expect(text[line - 1]).toContain(from);
        text[line - 1] = (text[line - 1] as string).replace(from, to);
        expect(verifyTrail(writeLines(result.log_path, 'edited.jsonl', text))).toMatchObject({ hash_chain_valid: false, reason, line });
      });
    }
  });

  describe('when its bytes are read another way than they were written', () => {
    it('reports edited for an int rewritten as a fraction of under 16 digits each side that rounds to it (10000000.00000000001)', async () => {
      const { session } = openSession();
      session.emit('note', { count: 10_000_000 });
      const result = await session.close();
      const text = lines(result.log_path);
      expect(text[2]).toContain('"count": 10000000}');
      text[2] = (text[2] as string).replace('"count": 10000000}', '"count": 10000000.00000000001}');
      expect(verifyTrail(writeLines(result.log_path, 'fraction.jsonl', text))).toMatchObject({ hash_chain_valid: false, reason: 'edited', line: 3 });
    });

    it('reports malformed_line for bytes that are not UTF-8, which read as U+FFFD as other bytes would; torn_tail on a last line without its newline', async () => {
      const { session } = openSession();
      session.emit('note', { text: 'caf\ufffd' });
      const result = await session.close();
      const bytes = fs.readFileSync(result.log_path);
      const replacement = Buffer.from('\ufffd');
      const at = bytes.indexOf(replacement);
      expect(verifyTrail(result.log_path)).toMatchObject({ hash_chain_valid: true, complete: true });
      // The three bytes of U+FFFD swapped for one invalid byte: the same text to a decoder that replaces.
      const forged = Buffer.concat([bytes.subarray(0, at), Buffer.from([0xff]), bytes.subarray(at + replacement.length)]);
      const file = path.join(path.dirname(result.log_path), 'invalid.jsonl');
      fs.writeFileSync(file, forged);
      const line = forged.subarray(0, at).toString('latin1').split('\n').length;
      expect(verifyTrail(file)).toMatchObject({ hash_chain_valid: false, reason: 'malformed_line', line });
      const lastLine = bytes.lastIndexOf(0x0a, bytes.length - 2) + 1;
      const cut = Buffer.concat([bytes.subarray(0, lastLine), Buffer.from('{"event_id": "caf'), Buffer.from([0xe2, 0x82])]);
      fs.writeFileSync(file, cut);
      expect(verifyTrail(file)).toMatchObject({ reason: 'torn_tail' });
    });

    it('skips only lines of JSON white space as blank: a line of U+3000 or U+FEFF is malformed_line', async () => {
      const { trail } = await writeSampleTrail();
      for (const blank of ['\u3000', '\ufeff', '\u00a0\u2028']) {
        const padded = lines(trail).flatMap((line, i) => (i === 3 ? [line, blank] : [line]));
        expect(verifyTrail(writeLines(trail, 'padded.jsonl', padded)), JSON.stringify(blank)).toMatchObject({ hash_chain_valid: false, reason: 'malformed_line', line: 5 });
      }
      const spaced = lines(trail).flatMap((line, i) => (i === 3 ? [line, ' \t\r'] : [line]));
      expect(verifyTrail(writeLines(trail, 'spaced.jsonl', spaced))).toMatchObject({ hash_chain_valid: true, events: 8 });
    });
  });

  describe('when given a seal', () => {
    it('passes the trail that matches it', async () => {
      const { trail } = await writeSampleTrail();
      const report = verifyTrail(trail);
      expect(verifyTrail(trail, { events: report.events, first_hash: report.first_hash, head_hash: report.head_hash })).toMatchObject({
        hash_chain_valid: true,
        complete: true,
      });
    });

    it('reports truncated for a sealed trail emptied, to nothing or to a blank line, as for one cut to a line', async () => {
      const { trail } = await writeSampleTrail();
      const report = verifyTrail(trail);
      const seal = { events: report.events, first_hash: report.first_hash, head_hash: report.head_hash };
      for (const content of ['', '\n']) {
        const file = path.join(path.dirname(trail), 'emptied.jsonl');
        fs.writeFileSync(file, content);
        expect(verifyTrail(file, seal)).toMatchObject({ complete: false, reason: 'truncated', events: 0 });
      }
    });

    it('reports truncated when the tail was cut off, though the chain itself walks', async () => {
      const { trail } = await writeSampleTrail();
      const seal = verifyTrail(trail);
      const cut = writeLines(trail, 'cut.jsonl', lines(trail).slice(0, -2));
      expect(verifyTrail(cut)).toMatchObject({ hash_chain_valid: true, complete: false });
      expect(verifyTrail(cut, { events: seal.events, first_hash: seal.first_hash, head_hash: seal.head_hash })).toMatchObject({
        hash_chain_valid: false,
        complete: false,
        reason: 'truncated',
      });
    });

    it('reports truncated for a chain rewritten with every hash recomputed', async () => {
      const { trail } = await writeSampleTrail();
      const seal = verifyTrail(trail);
      const forged = rehash(lines(trail).map((line) => line.replace('query 2', 'query X')));
      const file = writeLines(trail, 'forged.jsonl', forged);
      expect(verifyTrail(file)).toMatchObject({ hash_chain_valid: true, complete: true });
      expect(verifyTrail(file, { events: seal.events, first_hash: seal.first_hash, head_hash: seal.head_hash })).toMatchObject({
        reason: 'truncated',
        hash_chain_valid: false,
      });
    });

    it("compares only the count for a Python summary's event_count", () => {
      const trail = pythonTrail(interopIndex().sessions['approval_granted']?.session_id ?? '');
      expect(verifyTrail(trail, { events: 13 }).reason).toBeUndefined();
      expect(verifyTrail(trail, { events: 14 }).reason).toBe('truncated');
    });
  });

  describe('when the file is damaged', () => {
    it('reports empty for a file with no events, or only blank lines', async () => {
      const { trail } = await writeSampleTrail();
      for (const content of ['', '\n\n  \n']) {
        const file = path.join(path.dirname(trail), 'empty.jsonl');
        fs.writeFileSync(file, content);
        expect(verifyTrail(file)).toMatchObject({ hash_chain_valid: false, complete: false, reason: 'empty', events: 0 });
      }
    });

    it('skips blank lines between events, as Aura does', async () => {
      const { trail } = await writeSampleTrail();
      const spaced = lines(trail).flatMap((line) => [line, '']);
      expect(verifyTrail(writeLines(trail, 'spaced.jsonl', spaced))).toMatchObject({ hash_chain_valid: true, events: 8 });
    });

    it('reports malformed_line for a cut line that is not the last', async () => {
      const { trail } = await writeSampleTrail();
      const text = lines(trail);
      text[3] = (text[3] as string).slice(0, 50);
      expect(verifyTrail(writeLines(trail, 'cut-mid.jsonl', text))).toMatchObject({ reason: 'malformed_line', line: 4, events: 3 });
    });

    it('reports torn_tail for a last line cut short without its newline, keeping what is before it valid', async () => {
      const { trail } = await writeSampleTrail();
      const text = lines(trail);
      text[7] = (text[7] as string).slice(0, 100);
      expect(verifyTrail(writeLines(trail, 'torn.jsonl', text, false))).toMatchObject({
        hash_chain_valid: true,
        complete: false,
        reason: 'torn_tail',
        line: 8,
        events: 7,
      });
    });

    it('reads lines longer than its read buffer', async () => {
      const { session } = openSession();
      session.emit('big', { blob: 'x'.repeat(9 * 1024 * 1024) });
      const result = await session.close();
      expect(verifyTrail(result.log_path)).toMatchObject({ hash_chain_valid: true, complete: true, events: 4 });
    });
  });
});

function edit(records: Record<string, unknown>[], index: number, change: (record: Record<string, unknown>) => unknown): string[] {
  return records.map((record, i) => {
    const copy = structuredClone(record);
    if (i === index) change(copy);
    return JSON.stringify(copy);
  });
}

function swap(records: Record<string, unknown>[], a: number, b: number): string[] {
  const copy = [...records];
  [copy[a], copy[b]] = [copy[b] as Record<string, unknown>, copy[a] as Record<string, unknown>];
  return copy.map((record) => JSON.stringify(record));
}

describe('the records a verifying read hands out', () => {
  it('are what JSON.parse reads each line as, and share a session’s repeated agent_ids only frozen', async () => {
    const { trail } = await writeSampleTrail(4);
    const read = readTrailLines(trailLines(trail));
    const parsed = lines(trail).map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(read.events).toEqual(parsed);
    expect(read.events.map((event) => Object.keys(event))).toEqual(parsed.map((record) => Object.keys(record)));
    const [first, second] = read.events.slice(2);
    expect(second?.agent_ids).toBe(first?.agent_ids);
    expect(() => Object.assign(first?.agent_ids ?? {}, { agent_ref: 'someone/else' })).toThrow(TypeError);
    expect(second?.agent_ids['agent_ref']).toBe('acme/tester');
  });
});
