/**
 * Python Aura sequencer sessions (test/fixtures/python-sequencer): the declared steps Python Aura
 * keeps only in its summary are read from there, and every difference between Python's stored
 * verdict or conformance and aura's re-check is named, never reported as agreement.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { aura, auraJson } from '../helpers/cli.js';
import { REPO } from '../helpers/fixtures.js';
import { tempDir } from '../helpers/temp.js';

const FIXTURES = path.join(REPO, 'test', 'fixtures', 'python-sequencer');
const INDEX = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'index.json'), 'utf8')) as { sessions: Record<string, { session_id: string }> };

function idOf(name: string): string {
  const entry = INDEX.sessions[name];
  if (entry === undefined) throw new Error(`no fixture session ${name}`);
  return entry.session_id;
}

/** A home holding copies of the Python Aura sequencer sessions. */
function home(): string {
  const dir = tempDir();
  fs.cpSync(path.join(FIXTURES, 'sessions'), path.join(dir, 'sessions'), { recursive: true });
  return dir;
}

interface Shown {
  readonly summary_agrees: boolean;
  readonly disagreements: string[];
  readonly verdict_reason: string | null;
  readonly audit_report: { verdict: string; findings: { kind: string; message: string }[] };
}

function stored(dir: string, id: string): { audit_report: { verdict: string }; conformance: { passed: boolean } } {
  return JSON.parse(fs.readFileSync(path.join(dir, 'sessions', `${id}.summary.json`), 'utf8')) as { audit_report: { verdict: string }; conformance: { passed: boolean } };
}

describe('Python Aura sequencer sessions', () => {
  it('fail a run out of declared order, with the steps Python Aura declared only in its summary', () => {
    const dir = home();
    const id = idOf('out_of_order');
    const run = auraJson(['report', 'show', id], { home: dir });
    const shown = run.json as unknown as Shown;
    expect(run.status).toBe(1);
    expect(shown.audit_report.verdict).toBe('fail');
    expect(shown.audit_report.findings).toEqual([expect.objectContaining({ kind: 'SEQUENCER_INCOMPLETE', message: 'declared steps started out of order (declared a, b, c)' })]);
    expect(shown.summary_agrees).toBe(true);
    expect(shown.verdict_reason).toBe('conformance: sequencer steps out of declared order');
    const summary = auraJson(['export', id, '--rebuild'], { home: dir }).json as { conformance: { checks: Record<string, unknown>[] } };
    // A rebuilt summary keeps the declared steps, and says where they came from.
    expect(summary.conformance.checks.find((c) => c['type'] === 'sequencer')).toMatchObject({ declared_steps: ['a', 'b', 'c'], declared_in: 'summary', order_ok: false, passed: false });
    expect(auraJson(['report', 'show', id], { home: dir }).json).toMatchObject({ summary_agrees: true, audit_report: { verdict: 'fail' } });
  });

  it('fail a run that never reached a declared step', () => {
    const run = auraJson(['report', 'show', idOf('incomplete')], { home: home() });
    expect(run.json).toMatchObject({ summary_agrees: true, verdict_reason: 'conformance: sequencer steps not completed: c', audit_report: { verdict: 'fail' } });
  });

  it('agree with a run in declared order', () => {
    expect(auraJson(['report', 'show', idOf('in_order')], { home: home() }).json).toMatchObject({ summary_agrees: true, disagreements: [], verdict_reason: null, audit_report: { verdict: 'pass' } });
  });

  for (const [name, verdict] of [
    ['retry', 'warn'],
    ['gate_rerun', 'pass'],
    ['subflow', 'pass'],
    ['rerun_after_failure', 'warn'],
  ] as const) {
    it(`name each disagreement with Python's summary when Python fails ${name} and aura does not`, () => {
      const dir = home();
      const id = idOf(name);
      expect(stored(dir, id)).toMatchObject({ audit_report: { verdict: 'fail' }, conformance: { passed: false } });
      const run = auraJson(['report', 'show', id], { home: dir });
      const shown = run.json as unknown as Shown;
      expect(shown.audit_report.verdict).toBe(verdict);
      expect(shown.summary_agrees).toBe(false);
      expect(shown.disagreements).toEqual([`verdict fail vs ${verdict} now`, 'conformance failed vs passed now', 'sequencer check failed vs passed now']);
      // Python grades by other rules: a different judgment is named, not taken for a tampered summary.
      expect(shown.audit_report.findings.map((f) => f.kind)).not.toContain('SUMMARY_MISMATCH');
      const human = aura(['report', 'show', id], { home: dir }).stdout;
      expect(human).toContain('the stored summary, written by python-aura, disagrees');
      for (const line of shown.disagreements) expect(human).toContain(`- ${line}`);
    });
  }
});
