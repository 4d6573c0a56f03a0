import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { NotFoundError } from '../../src/errors.js';
import { reportHtml, scriptSafeJson } from '../../src/report/html.js';
import { groupOf, reportPageModel } from '../../src/report/page-model.js';
import { KeyRing } from '../../src/spine/signing.js';
import { sessionFiles } from '../../src/store/session-files.js';
import { expectAuraError } from '../helpers/errors.js';
import { AURA_PY, interopIndex, REPO } from '../helpers/fixtures.js';
import { lines, openSession, writeLines } from '../helpers/sessions.js';
import { tempDir } from '../helpers/temp.js';

/** A closed session of a few marked kinds; its files. */
async function closedSession(home = tempDir()): Promise<ReturnType<typeof sessionFiles>> {
  const { session } = openSession({ home });
  session.emit('turn.start', { turn: 1, input: 'hello' });
  session.emit('tool.result', { tool: 'search', result: 'ok' }, { telemetry: { latency_ms: 42.5 } });
  session.emit('constraint.approved', { request_id: 'req_1', principal: 'ops@acme.test', tool: 'pay' });
  session.emit('observer.alert', { pattern: 'ACTION_FIXATION', message: 'same call thrice', remedial_directive: 'stop', cycle_entry_hash: 'a', cycle_recurrence_hash: 'b' });
  session.emit('middleware.applied', { op: 'pii_mask', strategy: 'mask', entities_detected: { EMAIL: 2 }, redactions: 2, fields: ['input'] });
  session.emit('mcp.session', { transport: 'stdio', client: { name: 'inspector', version: '1' } });
  session.emit('observer.alert', { type: 'tool_calls_exceeded', message: 'tool calls: 9 > 8', observer_id: 'limit' });
  session.emit('membrane.nudge', { message: 'try another tool', source: 'observer' });
  session.emit('sequencer.step.start', { type: 'tool', ref: 'fetch', attempt: 1 }, { stepId: 'fetch-1' });
  session.emit('sequencer.step.end', { status: 'ok', attempt: 1 }, { stepId: 'fetch-1' });
  const closed = await session.close();
  return sessionFiles(path.join(home, 'sessions'), closed.session_id);
}

describe('scriptSafeJson', () => {
  it('leaves no < in the text, and parses back to the same value', () => {
    const value = { a: '</script><!-- <b>', b: 'line\u2028sep\u2029', c: [1, 'x<y'] };
    const text = scriptSafeJson(value);
    expect(text).not.toMatch(/[<\u2028\u2029]/);
    expect(JSON.parse(text)).toEqual(value);
  });
});

describe('groupOf', () => {
  it('groups kinds by name, the ones added by other features included, and unknown kinds as other', () => {
    expect(['observer.alert', 'membrane.nudge', 'middleware.applied', 'sequencer.step.start', 'sequencer.step.end', 'mcp.session', 'constraint.approved', 'constraint.violated', 'tool.call', 'turn.end', 'chain.checkpoint', 'agent.note'].map(groupOf)).toEqual([
      'observer', 'observer', 'pii', 'sequencer', 'sequencer', 'mcp', 'approval', 'policy', 'tool', 'turn', 'chain', 'other',
    ]);
  });
});

describe('reportPageModel', () => {
  it('compacts each event to one row: id, time, kind index, latency, marker, payload text', async () => {
    const files = await closedSession();
    const model = reportPageModel(files, { generator: 'test' });
    const trail = lines(files.trail).map((line) => JSON.parse(line) as { event_id: string; kind: string; timestamp: string });
    expect(model.events.map((row) => row[0])).toEqual(trail.map((e) => e.event_id));
    expect(model.events.map((row) => model.kinds[row[2]]?.[0])).toEqual(trail.map((e) => e.kind));
    const byKind = (kind: string): (typeof model.events)[number] => model.events.find((row) => model.kinds[row[2]]?.[0] === kind) as (typeof model.events)[number];
    expect(byKind('tool.result')[3]).toBe(42.5);
    expect(model.max_latency_ms).toBe(42.5);
    expect(byKind('constraint.approved')[4]).toBe('approved by ops@acme.test');
    expect(byKind('observer.alert')[4]).toBe('alert ACTION_FIXATION: same call thrice');
    expect(byKind('middleware.applied')[4]).toBe('pii_mask mask: 2 masked');
    expect(model.events.filter((row) => model.kinds[row[2]]?.[0] === 'observer.alert').map((row) => row[4])).toEqual(['alert ACTION_FIXATION: same call thrice', 'alert tool_calls_exceeded: tool calls: 9 > 8']);
    expect(['membrane.nudge', 'sequencer.step.start', 'sequencer.step.end', 'mcp.session'].map((kind) => byKind(kind)[4])).toEqual(['nudge: try another tool', 'step fetch-1 fetch', 'step fetch-1 ok', 'inspector']);
    expect(byKind('turn.start')[5]).toBe('{"input": "hello", "turn": 1}');
    expect(model.findings.map((f) => f.kind)).toContain('PII_MASKED');
    expect(model.chart.buckets.reduce((n, b) => n + b.total, 0)).toBe(trail.length);
    expect(model.chain).toMatchObject({ checked: true, hash_chain_valid: true, complete: true, signatures: 'unsigned', events: trail.length, seal: { events: trail.length, signed: false } });
  });

  it('shows a payload of megabytes by its start, and no more payloads once the page holds 32 MiB of them', async () => {
    const home = tempDir();
    const { session } = openSession({ home });
    session.emit('tool.result', { tool: 'read', result: 'x'.repeat(1024 * 1024) });
    for (let i = 0; i < 600; i++) session.emit('tool.result', { tool: 'read', n: i, result: 'y'.repeat(60 * 1024) });
    session.emit('turn.end', { turn: 1 });
    const closed = await session.close();
    const model = reportPageModel(sessionFiles(path.join(home, 'sessions'), closed.session_id), { generator: 'test' });
    const payloads = model.events.map((row) => row[5]);
    const big = payloads.find((text) => text.includes('xxxx')) as string;
    expect(big.length).toBeLessThan(70 * 1024);
    expect(big).toMatch(/ … \(\d+ more characters; aura logs shows the event whole\)$/);
    expect(payloads.reduce((n, text) => n + text.length, 0)).toBeLessThanOrEqual(32 * 1024 * 1024 + 10_000);
    expect(payloads.filter((text) => text.startsWith('(not shown: the page holds 32 MiB of payloads already')).length).toBeGreaterThan(30);
    expect(model.events).toHaveLength(closed.chain.events);
  });

  it('says signatures are verified with the key, unchecked without keys, invalid against another key', async () => {
    const home = tempDir();
    KeyRing.generate(path.join(home, 'keys'));
    const files = await closedSession(home);
    expect(reportPageModel(files, { generator: 'test', keys: KeyRing.load(path.join(home, 'keys')) }).chain).toMatchObject({ signatures: 'verified', hash_chain_valid: true, seal: { signed: true } });
    expect(reportPageModel(files, { generator: 'test' }).chain.signatures).toBe('unchecked');
    const other = tempDir();
    KeyRing.generate(other);
    const wrong = reportPageModel(files, { generator: 'test', keys: KeyRing.load(other) });
    expect(wrong.chain).toMatchObject({ signatures: 'invalid', reason: 'signature_invalid' });
    expect(wrong.verdict).toBe('fail');
  });

  it('shows an edited trail as broken at the edited event, and a cut one as truncated against its seal', async () => {
    const files = await closedSession();
    const original = lines(files.trail);
    const at = original.findIndex((line) => line.includes('ops@acme.test'));
    const edited = original.map((line, i) => (i === at ? line.replace('ops@acme.test', 'someone@else.test') : line));
    fs.writeFileSync(files.trail, `${edited.join('\n')}\n`);
    const broken = reportPageModel(files, { generator: 'test' });
    expect(broken.chain).toMatchObject({ hash_chain_valid: false, reason: 'edited', line: at + 1, event_id: (JSON.parse(original[at] as string) as { event_id: string }).event_id });
    expect(broken.verdict).toBe('fail');
    // Every event is still on the timeline, the edited one included.
    expect(broken.events).toHaveLength(original.length);

    writeLines(files.trail, path.basename(files.trail), original.slice(0, -1));
    expect(reportPageModel(files, { generator: 'test' }).chain).toMatchObject({ complete: false, reason: 'truncated' });
  });

  it('shows a session whose trail is gone from its summary, marked as not re-checked', async () => {
    const files = await closedSession();
    fs.rmSync(files.trail);
    const model = reportPageModel(files, { generator: 'test' });
    expect(model.source).toBe('summary');
    expect(model.chain).toMatchObject({ checked: false, reason: 'missing_trail' });
    expect(model.events).toEqual([]);
  });

  it('reads a Python Aura session through the same readers as report show', () => {
    const id = interopIndex().sessions['approval_granted']?.session_id as string;
    const dir = tempDir();
    for (const suffix of ['.jsonl', '.summary.json']) fs.copyFileSync(path.join(AURA_PY, 'sessions', `${id}${suffix}`), path.join(dir, `${id}${suffix}`));
    const model = reportPageModel(sessionFiles(dir, id), { generator: 'test' });
    expect(model).toMatchObject({ stored_by: 'python-aura', disagreements: [], chain: { hash_chain_valid: true, complete: true, signatures: 'unsigned', seal: { signed: false } } });
    expect(model.events.length).toBe(lines(path.join(dir, `${id}.jsonl`)).length);
  });

  it('says why the verdict is below pass, and names each point where a Python Aura summary disagrees', () => {
    const fixtures = path.join(REPO, 'test', 'fixtures', 'python-sequencer');
    const { session_id: id } = (JSON.parse(fs.readFileSync(path.join(fixtures, 'index.json'), 'utf8')) as { sessions: Record<string, { session_id: string }> }).sessions['retry'] as { session_id: string };
    const dir = tempDir();
    for (const suffix of ['.jsonl', '.summary.json']) fs.copyFileSync(path.join(fixtures, 'sessions', `${id}${suffix}`), path.join(dir, `${id}${suffix}`));
    const model = reportPageModel(sessionFiles(dir, id), { generator: 'test' });
    expect(model).toMatchObject({ verdict: 'warn', verdict_reason: 'warn: STEP_FAILED', stored_by: 'python-aura' });
    expect(model.disagreements).toEqual(['verdict fail vs warn now', 'conformance failed vs passed now', 'sequencer check failed vs passed now']);
  });

  it('throws NotFoundError for a session with neither trail nor summary', () => {
    expectAuraError(() => reportPageModel(sessionFiles(tempDir(), 'aura_sess_000000000001'), { generator: 'test' }), NotFoundError, 'NOT_FOUND');
  });
});

describe('reportHtml', () => {
  it('is one file that loads nothing: its only URL is the empty data: icon, and its CSP pins its one script and style by hash', async () => {
    const { html, csp } = reportHtml(reportPageModel(await closedSession(), { generator: 'test' }));
    expect(html.match(/\b(?:src|href)\s*=\s*"[^"]*"/g)).toEqual(['href="data:,"']);
    expect(html).not.toMatch(/@import|url\(/);
    const script = /<script>([\s\S]*?)<\/script>/.exec(html)?.[1] as string;
    const style = /<style>([\s\S]*?)<\/style>/.exec(html)?.[1] as string;
    const hash = (text: string): string => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;
    expect(csp).toBe(`default-src 'none'; script-src ${hash(script)}; style-src ${hash(style)}; img-src data:; base-uri 'none'; form-action 'none'`);
    expect(html).toContain(`<meta http-equiv="Content-Security-Policy" content="${csp.replace(/'/g, '&#39;')}">`);
  });
});
