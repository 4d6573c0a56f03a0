import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { AURA_PY, interopIndex } from '../helpers/fixtures.js';
import { spawnSync } from 'node:child_process';
import { AURA_BIN, aura, auraJson, shellQuote, STACK_TRACE } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { agent } from '../../src/session/agent.js';
import { countingIds, lines, steppingClock } from '../helpers/sessions.js';

/** A home holding copies of every Python Aura session. */
function pythonHome(): string {
  const home = tempDir();
  fs.mkdirSync(path.join(home, 'sessions'));
  for (const name of fs.readdirSync(path.join(AURA_PY, 'sessions'))) fs.copyFileSync(path.join(AURA_PY, 'sessions', name), path.join(home, 'sessions', name));
  return home;
}

describe('aura report show', () => {
  it('shows an aura session: verdict first, findings by severity, scorecard, recommendations; exit 1 on fail', () => {
    const home = tempDir();
    const id = String(auraJson(['demo'], { home }).json['session_id']);
    const run = aura(['report', 'show', id], { home });
    expect(run.status).toBe(1);
    const lines = run.stdout.split('\n');
    expect(lines[0]).toBe('Verdict: FAIL (conformance: 1 deny_tools violation, 1 schema_check violation, 1 observer_break violation)');
    expect(run.stdout).toContain('the stored summary, written by aura, agrees');
    expect(run.stdout).toMatch(/warn\s+POLICY_VIOLATION\s+Tool denied: shell\.exec/);
    expect(run.stdout).toMatch(/Scorecard:\n\s+policy\s+declared_rules 3/);
    expect(run.stdout).toContain('Recommendations:');
    const json = auraJson(['report', 'show', id], { home });
    expect(json.json).toMatchObject({
      session_id: id,
      source: 'trail',
      stored_by: 'aura',
      summary_agrees: true,
      verdict_reason: 'conformance: 1 deny_tools violation, 1 schema_check violation, 1 observer_break violation',
      audit_report: { verdict: 'fail', hash_chain_valid: true },
    });
  });

  for (const [name, { session_id }] of Object.entries(interopIndex().sessions)) {
    it(`works on the Python Aura session ${name}, agreeing with Python's verdict`, () => {
      const home = pythonHome();
      const stored = JSON.parse(fs.readFileSync(path.join(home, 'sessions', `${session_id}.summary.json`), 'utf8')) as { audit_report: { verdict: string; findings: { code: string }[] } };
      const run = auraJson(['report', 'show', session_id], { home });
      expect(run.json).toMatchObject({ stored_by: 'python-aura', summary_agrees: true });
      const report = run.json['audit_report'] as { verdict: string; findings: { kind: string }[] };
      expect(report.verdict).toBe(stored.audit_report.verdict);
      expect(report.findings.map((f) => f.kind)).toEqual(stored.audit_report.findings.map((f) => f.code));
      expect(run.status).toBe(report.verdict === 'fail' ? 1 : 0);
    });
  }

  it('reports a summary that disagrees with its trail as a critical SUMMARY_MISMATCH', () => {
    const home = tempDir();
    const id = String(auraJson(['demo'], { home }).json['session_id']);
    const file = path.join(home, 'sessions', `${id}.summary.json`);
    const summary = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
    fs.writeFileSync(file, JSON.stringify({ ...summary, event_count: 3 }));
    const run = auraJson(['report', 'show', id], { home });
    expect(run.json['summary_agrees']).toBe(false);
    const [first] = (run.json['audit_report'] as { findings: { kind: string; severity: string; message: string }[] }).findings;
    expect(first).toMatchObject({ kind: 'SUMMARY_MISMATCH', severity: 'critical' });
    expect(first?.message).toContain('event_count 3 vs');
  });

  it('shows the stored summary when the trail is gone, and says so, with the reason for its verdict', () => {
    const home = tempDir();
    const id = String(auraJson(['demo'], { home }).json['session_id']);
    fs.rmSync(path.join(home, 'sessions', `${id}.jsonl`));
    const run = aura(['report', 'show', id], { home });
    expect(run.stdout).toContain('the trail is missing: shown from the stored summary');
    expect(run.stdout.split('\n')[0]).toBe('Verdict: FAIL (conformance: 1 deny_tools violation, 1 schema_check violation, 1 observer_break violation)');
  });

  it('says why a verdict is below pass: the critical findings of a trail edited after close', () => {
    const home = tempDir();
    const id = String(auraJson(['demo'], { home }).json['session_id']);
    const trail = path.join(home, 'sessions', `${id}.jsonl`);
    fs.writeFileSync(trail, fs.readFileSync(trail, 'utf8').replace('"turn": 2', '"turn": 20'));
    const run = aura(['report', 'show', id], { home });
    expect(run.status).toBe(1);
    expect(run.stdout.split('\n')[0]).toMatch(/^Verdict: FAIL \(conformance: .*; critical: SUMMARY_MISMATCH, HASH_CHAIN_BROKEN\)$/);
  });

  const bad: [string, (home: string, id: string) => void, RegExp][] = [
    ['a missing session', () => undefined, /summary not found/],
    ['a summary that is not JSON', (home, id) => fs.writeFileSync(path.join(home, 'sessions', `${id}.summary.json`), '{"session_id": '), /is not a JSON summary/],
    ['a summary of a newer format', (home, id) => fs.writeFileSync(path.join(home, 'sessions', `${id}.summary.json`), '{"summary_version": 7, "audit_report": {}}'), /newer aura/],
  ];
  for (const [what, setup, message] of bad) {
    it(`exits 2 with a clear message for ${what}`, () => {
      const home = tempDir();
      const id = 'aura_sess_0123456789ab';
      fs.mkdirSync(path.join(home, 'sessions'));
      setup(home, id);
      const run = aura(['report', 'show', id], { home });
      expect(run.status).toBe(2);
      expect(run.stderr).toMatch(message);
      expect(run.stderr).not.toMatch(STACK_TRACE);
    });
  }
});

describe('aura logs', () => {
  it('prints the timeline, filtered by kind glob and time', () => {
    const home = tempDir();
    const id = String(auraJson(['demo'], { home }).json['session_id']);
    const all = aura(['logs', id], { home }).stdout.trim().split('\n');
    expect(all.length).toBeGreaterThan(30);
    expect(all[0]).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+\s+membrane\.ingress\s+\S+=/);
    const tools = aura(['logs', id, '--kind', 'tool.*'], { home }).stdout.trim().split('\n');
    expect(tools.every((line) => /\s+tool\.(intent|call|result|error)\s/.test(line))).toBe(true);
    const json = auraJson(['logs', id, '--since', '2999-01-01T00:00:00Z'], { home });
    expect(json.json['events']).toEqual([]);
    const badGlob = aura(['logs', id, '--kind', 'tool.['], { home });
    expect(badGlob.status).toBe(2);
    expect(badGlob.stderr).toContain('invalid --kind');
    for (const since of ['yesterday', '-5', '5', '2026-13-45']) {
      const run = aura(['logs', id, '--since', since], { home });
      expect(run.status).toBe(2);
      expect(run.stderr).toContain(`invalid --since "${since}": expected an ISO 8601 time`);
    }
    expect(auraJson(['logs', id, '--since', '2000-01-01'], { home }).json['events']).toHaveLength(all.length);
  });

  it("writes a record's control characters as escapes, never to the terminal, and reads a trail whose fields have another type", async () => {
    const home = tempDir();
    const session = agent('acme/esc', { home }).session({ ids: countingIds(), clock: steppingClock() });
    session.emit('turn.start', { input: 'hello \u001b[2J\u001b]0;pwned\u0007 \u202edesrever' });
    const { log_path: trail, session_id: id } = await session.close();
    const run = aura(['logs', id], { home });
    expect(run.status).toBe(0);
    // eslint-disable-next-line no-control-regex -- the characters that must not reach the terminal
    expect(run.stdout).not.toMatch(/[\u001b\u0007\u202e]/);
    expect(run.stdout).toContain('hello \\u001b[2J\\u001b]0;pwned\\u0007 \\u202edesrever');
    // A timestamp that is a number: the chain says it is malformed, and the timeline still shows.
    const rows = lines(trail);
    fs.writeFileSync(trail, [...rows.slice(0, 1).map((line) => line.replace(/"timestamp": "[^"]*"/, '"timestamp": 5')), ...rows.slice(1)].join('\n') + '\n');
    const broken = aura(['logs', id], { home });
    expect(broken.status).toBe(0);
    expect(broken.stdout).toContain('the chain does not verify');
  });
});

describe('text for people', () => {
  it("writes what a trail holds that a terminal acts on as escapes, in every command's text and its errors", async () => {
    const home = tempDir();
    const hostile = 'shell\u001b[2J\u001b]0;pwned\u0007\r\u202e';
    const session = agent('acme/esc', { home, rules: [{ type: 'deny_tools', tools: ['shell*'] }] }).session({ ids: countingIds(), clock: steppingClock() });
    await expect(session.tool(hostile, {}, () => 'ran')).rejects.toThrow();
    const { session_id: id } = await session.close();
    const outputs = [aura(['report', 'show', id], { home }), aura(['sessions', 'list'], { home }), aura(['verify', 'chain', id], { home }), aura(['verify', 'store'], { home }), aura(['compare', id, id], { home })];
    for (const run of outputs) {
      // eslint-disable-next-line no-control-regex -- the characters that must not reach the terminal
      expect(run.stdout + run.stderr).not.toMatch(/[\u001b\u0007\r\u202e]/);
    }
    expect(outputs[0]?.stdout).toContain('shell\\u001b[2J\\u001b]0;pwned\\u0007\\u000d\\u202e');
    // On a terminal, aura's own colours are written, a record's never (its colour codes too).
    const colored = Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== 'NO_COLOR'));
    const script = spawnSync('script', ['-qc', `${shellQuote(process.execPath)} ${shellQuote(AURA_BIN)} --home ${shellQuote(home)} report show ${id}`, '/dev/null'], { encoding: 'utf8', env: colored });
    // eslint-disable-next-line no-control-regex -- aura's own colour
    expect(script.stdout).toMatch(/\u001b\[3[12]m/);
    // eslint-disable-next-line no-control-regex -- the record's controls, which must not reach the terminal
    expect(script.stdout).not.toMatch(/\u001b\[2J|\u001b\]0;|\u0007/);
    expect(script.stdout).toContain('shell\\u001b[2J');
    const refused = aura(['report', 'show', 'aura_sess_\u001b[2J'], { home });
    expect(refused.status).toBe(2);
    // eslint-disable-next-line no-control-regex -- the characters that must not reach the terminal
    expect(refused.stderr).not.toMatch(/\u001b/);
  });
});

describe('aura compare', () => {
  it('exits 0 for two runs of the same agent that agree, and 1 when they differ', () => {
    const home = pythonHome();
    const a = String(auraJson(['demo'], { home }).json['session_id']);
    const b = String(auraJson(['demo'], { home }).json['session_id']);
    const same = auraJson(['compare', a, b], { home });
    expect(same.status).toBe(0);
    expect(same.json).toMatchObject({ same: true, audit_verdict: { a: 'fail', b: 'fail', same: true }, snapshot_hash: { same_policy: true }, findings_by_kind: { POLICY_VIOLATION: { a: 2, b: 2, same: true }, COGNITIVE_CYCLE_DETECTED: { a: 2, b: 2, same: true } } });
    const differ = auraJson(['compare', a, 'aura_sess_7b0064268f4b'], { home });
    expect(differ.status).toBe(1);
    expect(differ.json).toMatchObject({ same: false, audit_verdict: { a: 'fail', b: 'pass', same: false } });
    expect(aura(['compare', a, '../x'], { home }).status).toBe(2);
  });
});
