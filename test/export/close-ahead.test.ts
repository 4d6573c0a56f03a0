/**
 * A long session reads its evidence ahead of close, on a thread that follows the trail as it
 * grows (export/close-ahead.ts). What close gives must be what the pass at close gives over the
 * same trail: the same summary, the same spans file byte for byte; and a trail changed under the
 * thread must still be reported as it is on disk.
 */

import * as fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CLOSE_AHEAD_BYTES } from '../../src/export/close-ahead.js';
import { exportSession } from '../../src/export/session-export.js';
import { verifyTrail } from '../../src/spine/verify.js';
import { sessionFiles } from '../../src/store/session-files.js';
import { spawnFixture, waitForExit } from '../faults/helpers.js';
import { stagedSpans } from '../helpers/close-ahead.js';
import { openSession } from '../helpers/sessions.js';
import { tempDir } from '../helpers/temp.js';

/** Emits tool calls until the trail has passed the close-ahead threshold by a margin. */
function fillPastThreshold(emit: (n: number) => void, trail: string): number {
  let n = 0;
  while (fs.statSync(trail).size < CLOSE_AHEAD_BYTES * 1.25) for (let i = 0; i < 2000; i++) emit(n++);
  return n;
}

describe('close ahead', () => {
  it('gives a long session the summary and the spans file that the pass at close gives, byte for byte', async () => {
    const { session } = openSession({ agent: { rules: [{ type: 'deny_tools', tools: ['shell.*'] }] } });
    session.emit('turn.start', { input: 'read the modules', ratio: 1.0, big: 2 ** 60 });
    const trail = session.files.trail;
    const emitted = fillPastThreshold((n) => session.emit('tool.call', { tool: 'fs.read', args: { path: `/src/module_${n}.ts` }, n }), trail);
    await expect(session.tool('shell.exec', { cmd: 'ls' }, () => 'no')).rejects.toThrow();
    // The thread has had time to read some of it (its spans are staged), and some is left for close.
    const staging = await stagedSpans(session.files.otel);
    expect(staging).not.toBeNull();
    const staged = fs.statSync(staging as string);
    expect(staged.size).toBeGreaterThan(0);
    for (let n = 0; n < 3000; n++) session.emit('tool.call', { tool: 'fs.read', n });
    const closed = await session.close();
    expect(fs.existsSync(`${closed.exports.otel as string}.staging`)).toBe(false);
    // What close committed is the file the thread staged, not one a pass at close wrote again.
    expect(fs.statSync(closed.exports.otel as string).ino).toBe(staged.ino);
    const spans = fs.readFileSync(closed.exports.otel as string, 'utf8');

    // The pass at close, over a copy of the same trail.
    const again = sessionFiles(tempDir(), session.id);
    fs.copyFileSync(trail, again.trail);
    const whole = exportSession(again, true);
    expect(closed.chain).toEqual(whole.trail.chain);
    expect(closed.chain).toMatchObject({ hash_chain_valid: true, complete: true, events: emitted + 3000 + 6 });
    // All but the trail's path (the copy is elsewhere) and the seal (only a closing session makes one).
    expect({ ...closed.summary, log: null, seal: null }).toEqual({ ...whole.summary, log: null, seal: null });
    expect(closed.summary.seal).toMatchObject({ events: whole.trail.chain.events, first_hash: whole.trail.chain.first_hash, head_hash: whole.trail.chain.head_hash });
    expect(closed.audit_report.findings.map((finding) => finding.kind)).toContain('POLICY_VIOLATION');
    expect(spans).toBe(fs.readFileSync(again.otel, 'utf8'));
  }, 60_000);

  it('reports a trail cut short under the thread as the bytes on disk say, not as they were read', async () => {
    const { session } = openSession();
    const trail = session.files.trail;
    fillPastThreshold((n) => session.emit('tool.call', { tool: 'fs.read', n }), trail);
    await new Promise((resolve) => setTimeout(resolve, 500));
    // A line of the middle taken out while the session runs: the thread read past it.
    const size = fs.statSync(trail).size;
    fs.truncateSync(trail, Math.floor(size / 2));
    const closed = await session.close();
    const onDisk = verifyTrail(trail);
    expect(onDisk.hash_chain_valid).toBe(false);
    expect(closed.chain).toEqual(onDisk);
  }, 60_000);

  it('does not keep the process alive when the session is left open, as a short session does not', async () => {
    const home = tempDir();
    // Before the fix, the thread's port kept the process running for good after this.
    const exit = await waitForExit(spawnFixture('open-session.ts', [home, 'long']), 50_000);
    expect(exit, exit.stderr).toMatchObject({ code: 0, signal: null });
    expect(exit.stdout).toContain('staged true');
  }, 60_000);
});
