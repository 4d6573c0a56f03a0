/**
 * The export at close reads the trail once, in constant memory: spans are staged as they end and
 * the summary is built from a digest that keeps only the events it reads. These tests hold it to
 * the whole read it replaced: for every trail at hand (Python Aura's, tampered ones, aura's own of
 * every kind), the same summary and the same spans file, byte for byte.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { otelLines } from '../../src/export/otel.js';
import { exportSession } from '../../src/export/session-export.js';
import { buildSummary } from '../../src/export/summary.js';
import { digestTrail, readTrail } from '../../src/spine/trail-reader.js';
import { sessionFiles } from '../../src/store/session-files.js';
import { AURA_PY } from '../helpers/fixtures.js';
import { demoSession, openSession } from '../helpers/sessions.js';
import { tempDir } from '../helpers/temp.js';

const SESSION_ID = 'aura_sess_00000000beef';

/** The summary and spans file a whole read of `trail` gives, and the ones the streaming export writes. */
function bothWays(trail: string): { whole: { summary: unknown; otel: string }; streamed: { summary: unknown; otel: string } } {
  const sessions = tempDir();
  const files = sessionFiles(sessions, SESSION_ID);
  fs.copyFileSync(trail, files.trail);
  const read = readTrail(files.trail);
  const whole = { summary: buildSummary(SESSION_ID, read, files.trail), otel: otelLines(read.events) };
  const exported = exportSession(files, true);
  return { whole, streamed: { summary: exported.summary, otel: fs.readFileSync(files.otel, 'utf8') } };
}

function pythonTrails(): string[] {
  const dirs = [path.join(AURA_PY, 'sessions'), path.join(AURA_PY, 'tampered')];
  return dirs.flatMap((dir) => fs.readdirSync(dir).filter((name) => name.endsWith('.jsonl') && !name.endsWith('.otel.jsonl')).map((name) => path.join(dir, name)));
}

describe('exportSession', () => {
  it.each(pythonTrails().map((trail) => [path.basename(path.dirname(trail)), path.basename(trail), trail]))('gives what a whole read gives for Python Aura trail %s/%s', (_dir, _name, trail) => {
    const { whole, streamed } = bothWays(trail);
    expect(streamed.summary).toEqual(whole.summary);
    expect(streamed.otel).toBe(whole.otel);
  });

  it("gives what a whole read gives for aura's demo session, and for one with an operator, approvals, denials and masking", async () => {
    const home = tempDir();
    const demo = await demoSession(home);
    const { session } = openSession({
      agent: { rules: [{ type: 'deny_tools', tools: ['shell.*'] }, { type: 'confirm_before', tools: ['pay'] }], middleware: { pii_mask: { strategy: 'mask', boundaries: ['emit'] } } },
      session: { operator: { subject: 'op-1', email: 'ops@acme.test', name: 'Ops' } },
    });
    session.emit('turn.start', { input: 'mail me at someone@example.com' });
    for (let i = 0; i < 50; i++) session.emit('tool.call', { tool: 'fs.read', args: { n: i } });
    await expect(session.tool('shell.exec', { cmd: 'ls' }, () => 'no')).rejects.toThrow();
    await expect(session.tool('pay', { amount: 5 }, () => 'paid')).rejects.toThrow();
    session.emit('observer.alert', { pattern: 'ACTION_FIXATION', message: 'again' });
    const closed = await session.close();
    for (const trail of [path.join(home, 'sessions', `${demo}.jsonl`), closed.log_path]) {
      const { whole, streamed } = bothWays(trail);
      expect(streamed.summary).toEqual(whole.summary);
      expect(streamed.otel).toBe(whole.otel);
    }
  });

  it('keeps of a long trail only the events a summary reads, and counts the rest', async () => {
    const { session } = openSession();
    for (let i = 0; i < 500; i++) session.emit(i % 2 === 0 ? 'tool.call' : 'turn.start', { tool: 'fs.read', n: i });
    const closed = await session.close();
    const digest = digestTrail(closed.log_path, (event) => event.kind === 'membrane.ingress' || event.kind === 'session.close', () => undefined);
    expect(digest.events.map((event) => event.kind)).toEqual(['membrane.ingress', 'session.close']);
    expect(digest.digest).toMatchObject({ count: 503, positions: [0, 502] });
    expect(digest.digest?.kinds.get('tool.call')).toBe(250);
    expect(closed.summary.event_count).toBe(503);
    expect(closed.audit_report.scorecard.tools.calls).toBe(250);
  });
});
