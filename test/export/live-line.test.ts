import * as fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { TrailLineReader } from '../../src/export/live-line.js';
import { parseJsonLossless } from '../../src/spine/json-reader.js';
import { openSession } from '../helpers/sessions.js';

/** The lines of a closed session that recorded `write`'s events. */
async function linesOf(ids: Record<string, string>, write: (emit: (kind: string, payload: Record<string, unknown>, options?: { stepId?: string; telemetry?: Record<string, unknown> }) => void) => void): Promise<string[]> {
  const { session } = openSession({ agent: { ids } });
  write((kind, payload, options) => session.emit(kind, payload, options));
  const result = await session.close();
  return fs.readFileSync(result.log_path, 'utf8').split('\n').filter((line) => line !== '');
}

describe('the live reader of a session\'s own lines', () => {
  it('reads every line the session writes as a whole parse does, the fast way where the layout allows', async () => {
    const lines = await linesOf({ tenant: 'acme' }, (emit) => {
      emit('tool.call', { tool: 'fs.read', args: { path: '/tmp/é日本😀', limit: 10, ratio: 0.5 } }, { stepId: 'step-1' });
      emit('tool.result', { tool: 'fs.read', result: { bytes: 4096 } }, { telemetry: { latency_ms: 1.5 } });
      emit('tool.result', { tool: 'fs.read', result: { bytes: 1 } }, { telemetry: { latency_ms: 1.5 } });
      // Keys named like the top-level keys that follow, nested in the objects before them.
      emit('note', { kind: 'x', nested: { telemetry: { prev_hash: null }, 'a, "telemetry": ': 1 } }, { telemetry: { prev_hash: 'p', inner: { telemetry: {} } } });
      // A step id with an escape: the plain-field cut would give its escaped text.
      emit('note', { text: 'quoted' }, { stepId: 'say "hi"\\n' });
    });
    for (const parse of [JSON.parse, parseJsonLossless] as const) {
      const reader = new TrailLineReader(parse);
      const read = lines.map((line) => reader.read(line));
      lines.forEach((line, index) => expect(read[index] ?? parse(line)).toEqual(parse(line)));
      // The session's lines are read the fast way, but for the escaped step id; the nested keys
      // are left to a whole parse or cut right.
      expect(read.filter((event) => event === null).length).toBeLessThanOrEqual(2);
      expect(read[lines.findIndex((line) => line.includes('say \\"hi'))]).toBeNull();
      expect(read.find((event) => event?.kind === 'tool.call')?.step_id).toBe('step-1');
    }
  });

  it('parses whole the lines whose agent ids hold a key named like the next top-level one', async () => {
    const lines = await linesOf({ a: 'first', kind: 'a nested "kind" key' }, (emit) => emit('note', { n: 1 }));
    const reader = new TrailLineReader(JSON.parse);
    for (const line of lines) {
      expect(reader.read(line)).toBeNull();
      expect(JSON.parse(line)).toMatchObject({ agent_ids: { ids: { kind: 'a nested "kind" key' } } });
    }
  });

  it('leaves a line in any other layout to a whole parse', () => {
    const reader = new TrailLineReader(JSON.parse);
    const line = JSON.stringify({ event_id: 'a', parent_id: null, trace_id: 't', span_id: null, step_id: null, task_id: null, session_id: 's', aura_id: 'x', agent_ids: {}, kind: 'k', timestamp: 'z', payload: {}, telemetry: {}, prev_hash: null, content_hash: 'h' });
    expect(reader.read(line)).toBeNull();
    expect(reader.read(line.replace(/":/g, '": ').replace(/,"/g, ', "'))).toEqual(JSON.parse(line));
    expect(reader.read('{"event_id": "a"}')).toBeNull();
    expect(reader.read('')).toBeNull();
  });
});
