/**
 * Large stores the scenarios share, built once and kept in the bench data folder
 * (`AURA_BENCH_DATA`, default the OS temp folder's `aura-bench-data`): building 10,000 sessions
 * takes minutes, reading them takes seconds. A store is only reused once it was built whole.
 */

import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { agent } from '../../src/index.js';
import { KeyRing } from '../../src/spine/signing.js';
import { formatCount, since } from './measure.js';

/** The folder kept between runs. */
export function benchDataDir(): string {
  return path.resolve(process.env['AURA_BENCH_DATA'] ?? path.join(os.tmpdir(), 'aura-bench-data'));
}

/** The store most rows read: 10,000 closed sessions of 100 events, 1M events in all. */
export const FINDINGS_STORE = { sessions: 10_000, events: 100 } as const;

/**
 * An aura home of `sessions` closed sessions of `events` events each (agent `ref`), built once and
 * kept. Every session holds one denied call, so each carries a finding; `signed`, the home has a
 * signing key, so each session is signed (its seal and checkpoints).
 */
export async function dataset(name: string, ref: string, shape: { readonly sessions: number; readonly events: number }, options: { readonly signed?: boolean } = {}): Promise<string> {
  const home = path.join(benchDataDir(), `${name}-${shape.sessions}x${shape.events}-v2`);
  const done = path.join(home, 'complete');
  if (fs.existsSync(done)) return home;
  fs.rmSync(home, { recursive: true, force: true });
  console.log(`  building ${name}: ${formatCount(shape.sessions)} sessions x ${formatCount(shape.events)} events, once (kept in ${home})`);
  const start = performance.now();
  if (options.signed === true) KeyRing.generate(path.join(home, 'keys'));
  const ag = agent(ref, { home, rules: [{ type: 'deny_tools', tools: ['shell.*'] }] });
  for (let i = 0; i < shape.sessions; i++) {
    const session = ag.session({ fsync: 'none' });
    // session.open, membrane.ingress and session.close make three; one denied call gives every
    // session a finding, so the findings channel has 10,000 of a kind to trim.
    session.emit('constraint.violated', { tool: 'shell.exec', rule: { type: 'deny_tools' }, message: 'denied' });
    for (let j = 0; j < shape.events - 4; j++) session.emit('tool.note', { tool: 'fs.read_file', args: { path: `/src/${i}/${j}.ts`, limit: 4096 } });
    await session.close();
    if ((i + 1) % 1000 === 0) console.log(`    ${formatCount(i + 1)} sessions (${(since(start) / 1000).toFixed(0)} s)`);
  }
  fs.writeFileSync(done, '');
  console.log(`  built ${name} in ${(since(start) / 1000).toFixed(1)} s`);
  return home;
}

/**
 * A copy of a kept store that a scenario may write to: the session files are hard links (a writer
 * only adds files beside them), everything else (the seal log, which a close appends to) is copied.
 */
export function writableCopy(home: string, into: string): void {
  fs.cpSync(home, into, { recursive: true, filter: (source) => path.basename(source) !== 'sessions' || source === home });
  const sessions = path.join(home, 'sessions');
  try {
    execFileSync('cp', ['-al', sessions, path.join(into, 'sessions')]);
  } catch {
    fs.cpSync(sessions, path.join(into, 'sessions'), { recursive: true });
  }
}
