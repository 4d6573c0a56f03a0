import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ApprovalRequiredError, LoopBrokenError, ReadError, SessionClosedError, SessionLockedError } from '../../src/errors.js';
import { agent } from '../../src/session/agent.js';
import { Session } from '../../src/session/session.js';
import { canonicalJson } from '../../src/spine/canonical.js';
import { sha256 } from '../../src/spine/hash.js';
import { readTrail } from '../../src/spine/trail-reader.js';
import { verifyTrail } from '../../src/spine/verify.js';
import { expectAuraError } from '../helpers/errors.js';
import { pythonVerify } from '../helpers/python.js';
import { tempDir } from '../helpers/temp.js';

const ID = 'aura_sess_5a5e55105e55';

function sharedAgent(home: string) {
  return agent('acme/shared', { home, rules: [{ type: 'confirm_before', tools: ['pay'] }], observers: [{ preset: 'break', config: { soft: 2, hard: 3 } }] });
}

/** One "process": takes the session up, does its part, lets go. */
function share(home: string, part: (session: Session) => void): void {
  const session = Session.attach(sharedAgent(home), { sessionId: ID, ownerPid: process.pid, traceParent: null });
  try {
    part(session);
  } finally {
    if (!session.closed) session.detach();
  }
}

describe('Session.attach', () => {
  it('continues one chain across processes, with approvals and a break stop rebuilt from the trail', async () => {
    const home = tempDir();
    share(home, (s) => s.emit('turn.start', { input: 'go' }));
    let request = '';
    share(home, (s) => {
      try {
        s.emit('tool.call', { tool: 'pay', args: { amount: 5 } });
      } catch (error) {
        request = (error as { data: { request_id: string } }).data.request_id;
      }
    });
    // A later process approves exactly that call: the request made by an earlier one is known.
    share(home, (s) => {
      expect(s.approveCall('pay', { amount: 5 }, { principal: 'alice' })?.kind).toBe('constraint.approved');
      s.emit('tool.call', { tool: 'pay', args: { amount: 5 } });
    });
    for (let i = 0; i < 3; i++) share(home, (s) => (s.emit('tool.call', { tool: 'poll', args: {} }), s.emit('tool.result', { tool: 'poll', result: { state: 'pending' } })));
    // The stop was made in the last process; the next one still refuses.
    share(home, (s) => {
      expect(s.stoppedBy?.pattern).toBe('ACTION_FIXATION');
      expectAuraError(() => s.emit('tool.call', { tool: 'poll', args: {} }), LoopBrokenError, 'LOOP_BROKEN');
    });
    const session = Session.attach(sharedAgent(home), { sessionId: ID, ownerPid: process.pid, traceParent: null });
    const result = await session.close();
    const events = readTrail(result.log_path).events;
    expect(events.filter((e) => e.kind === 'session.open')).toHaveLength(1);
    expect(events.find((e) => e.kind === 'tool.call' && e.payload['tool'] === 'pay')?.payload['approval']).toEqual({ request_id: request, principal: 'alice' });
    expect(verifyTrail(result.log_path)).toMatchObject({ hash_chain_valid: true, complete: true, events: events.length });
    expect(pythonVerify(result.log_path)).toEqual({ valid: true, events: events.length });
    // Ended: it cannot be taken up again, and leaves no lease behind.
    expectAuraError(() => Session.attach(sharedAgent(home), { sessionId: ID, ownerPid: process.pid }), SessionClosedError, 'SESSION_CLOSED');
    expect(fs.existsSync(`${result.log_path}.lock`)).toBe(false);
  });

  it('cuts back a line a process died writing, and refuses a trail an unshared writer holds', () => {
    const home = tempDir();
    share(home, (s) => s.emit('turn.start', { input: 'go' }));
    const trail = readTrail(`${home}/sessions/${ID}.jsonl`);
    fs.appendFileSync(`${home}/sessions/${ID}.jsonl`, '{"event_id": "cut sh');
    share(home, (s) => s.emit('turn.end', {}));
    expect(verifyTrail(`${home}/sessions/${ID}.jsonl`)).toMatchObject({ hash_chain_valid: true, events: trail.events.length + 1 });

    const other = agent('acme/other', { home }).session();
    fs.writeFileSync(`${home}/sessions/${ID}.jsonl.lock`, fs.readFileSync(`${other.files.trail}.lock`));
    expectAuraError(() => Session.attach(sharedAgent(home), { sessionId: ID, ownerPid: process.pid, waitMs: 50 }), SessionLockedError, 'SESSION_LOCKED');
  });

  it('takes the session up from what the last process saved beside the trail, reading only the trail\'s last line, and only where it matches the trail', () => {
    const home = tempDir();
    const trailPath = `${home}/sessions/${ID}.jsonl`;
    const resume = `${trailPath}.resume`;
    for (let i = 0; i < 3; i++) share(home, (s) => s.emit('turn.start', { input: `go ${i}` }));
    // A line the next process never reads: changed in place, the same length, it is not JSON any more.
    const lines = fs.readFileSync(trailPath, 'utf8').split('\n');
    lines[2] = 'x'.repeat((lines[2] as string).length);
    fs.writeFileSync(trailPath, lines.join('\n'));
    const saved = fs.readFileSync(resume, 'utf8');
    const state = JSON.parse(saved) as { tail: { sha256: string }; count: number };
    for (const untrusted of ['not json', JSON.stringify({ ...state, tail: { ...state.tail, sha256: '0'.repeat(64) } }), JSON.stringify({ ...state, session_id: 'aura_sess_000000000000' })]) {
      fs.writeFileSync(resume, untrusted);
      expectAuraError(() => Session.attach(sharedAgent(home), { sessionId: ID, ownerPid: process.pid }), ReadError, 'READ_FAILED');
    }
    fs.writeFileSync(resume, saved);
    share(home, (s) => {
      expect(s.eventCount).toBe(state.count);
      s.emit('turn.end', {});
    });
    // Verification finds the line changed by hand, as it would have anyway.
    expect(verifyTrail(trailPath)).toMatchObject({ hash_chain_valid: false, reason: 'malformed_line', line: 3 });
    const [before, last] = fs.readFileSync(trailPath, 'utf8').trimEnd().split('\n').slice(-2).map((line) => JSON.parse(line) as { kind: string; prev_hash: string; content_hash: string });
    expect(last).toMatchObject({ kind: 'turn.end', prev_hash: before?.content_hash });
    fs.rmSync(resume);
    expectAuraError(() => Session.attach(sharedAgent(home), { sessionId: ID, ownerPid: process.pid }), ReadError, 'READ_FAILED');
  });

  it('reads the trail whole when another process appended after the state was saved, and keeps what it recorded', () => {
    const home = tempDir();
    const resume = `${home}/sessions/${ID}.jsonl.resume`;
    share(home, (s) => expectAuraError(() => s.emit('tool.call', { tool: 'pay', args: { amount: 5 } }), ApprovalRequiredError, 'APPROVAL_REQUIRED'));
    const stale = fs.readFileSync(resume);
    share(home, (s) => expect(s.approveCall('pay', { amount: 5 }, { principal: 'alice' })?.kind).toBe('constraint.approved'));
    // Saved before the approval: taken up, it would hold the call again.
    fs.writeFileSync(resume, stale);
    share(home, (s) => expect(s.emit('tool.call', { tool: 'pay', args: { amount: 5 } }).kind).toBe('tool.call'));
    const events = readTrail(`${home}/sessions/${ID}.jsonl`).events;
    expect(events.filter((e) => e.kind === 'tool.call').map((e) => e.payload['approval'])).toEqual([{ request_id: expect.any(String), principal: 'alice' }]);
  });

  it('binds an approval made in one process to the retry in another by a salt no trail holds: masked arguments too, and a password is not brute-forced', async () => {
    const home = tempDir();
    const trailPath = `${home}/sessions/${ID}.jsonl`;
    const saltPath = `${trailPath}.approval-salt`;
    const masking = () => agent('acme/shared', { home, middleware: { pii_mask: { strategy: 'redact', boundaries: ['emit'] } }, rules: [{ type: 'confirm_before', tools: ['mail.send', 'db.exec'] }] });
    const take = (part: (session: Session) => void): void => {
      const session = Session.attach(masking(), { sessionId: ID, ownerPid: process.pid, traceParent: null });
      try {
        part(session);
      } finally {
        session.detach();
      }
    };
    const mail = { tool: 'mail.send', args: { to: 'jane.doe@example.com' } };
    const db = { tool: 'db.exec', args: { command: 'mysql -uroot -pSummer2024', password: 'Summer2024' } };
    take((s) => {
      s.emit('turn.start', { input: 'go' });
      expect(s.approveCall(mail.tool, mail.args)).toBeNull();
    });
    // A session no call of which was held needs no salt, and has none written.
    expect(fs.existsSync(saltPath)).toBe(false);
    take((s) => {
      expectAuraError(() => s.emit('tool.call', mail), ApprovalRequiredError, 'APPROVAL_REQUIRED');
      expectAuraError(() => s.emit('tool.call', db), ApprovalRequiredError, 'APPROVAL_REQUIRED');
    });
    expect(fs.statSync(saltPath).mode & 0o777).toBe(0o600);
    take((s) => {
      expect(s.approveCall(mail.tool, mail.args, { principal: 'alice' })?.kind).toBe('constraint.approved');
      expect(s.approveCall(db.tool, db.args, { principal: 'alice' })?.kind).toBe('constraint.approved');
    });
    take((s) => {
      expect(s.emit('tool.call', mail).kind).toBe('tool.call');
      expect(s.emit('tool.call', db).kind).toBe('tool.call');
    });
    const events = readTrail(trailPath).events;
    expect(events.filter((e) => e.kind === 'tool.call').map((e) => e.payload['approval'])).toEqual([
      { request_id: expect.any(String), principal: 'alice' },
      { request_id: expect.any(String), principal: 'alice' },
    ]);
    const held = events.find((e) => e.kind === 'constraint.approval_required' && (e.payload['pending_event'] as { payload: { tool: string } }).payload.tool === 'db.exec');
    const guessed = { command: 'mysql -uroot -pSummer2024', password: 'Summer2024' };
    expect(sha256(canonicalJson({ args: guessed, session_id: ID, tool: 'db.exec' }))).not.toBe(held?.payload['digest']);
    const salt = fs.readFileSync(saltPath, 'utf8');
    for (const file of [trailPath, `${trailPath}.resume`]) expect(fs.readFileSync(file, 'utf8')).not.toContain(salt);
    const result = await Session.attach(masking(), { sessionId: ID, ownerPid: process.pid }).close();
    // No approval is made after the close: the salt goes with it.
    expect(fs.existsSync(saltPath)).toBe(false);
    expect(fs.readFileSync(result.log_path, 'utf8')).not.toMatch(/Summer2024|jane\.doe/);
  });

  it('goes on when something else is where its state is saved: a FIFO is not read, a folder fails neither a hook nor the close', async () => {
    const home = tempDir();
    const resume = `${home}/sessions/${ID}.jsonl.resume`;
    share(home, (s) => s.emit('turn.start', { input: 'go' }));
    fs.rmSync(resume);
    execFileSync('mkfifo', [resume]);
    share(home, (s) => s.emit('turn.end', {}));
    fs.rmSync(resume);
    fs.mkdirSync(resume);
    share(home, (s) => s.emit('turn.start', { input: 'again' }));
    const result = await Session.attach(sharedAgent(home), { sessionId: ID, ownerPid: process.pid }).close();
    expect(verifyTrail(result.log_path)).toMatchObject({ hash_chain_valid: true, complete: true, events: 6 });
  });
});
