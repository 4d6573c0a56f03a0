import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { InvalidOptionError } from '../../src/errors.js';
import { MAX_DEPTH, type ObservedEvent, type Observer, type ObserverContext } from '../../src/observers/bus.js';
import { verifyTrail } from '../../src/spine/verify.js';
import { expectAuraError } from '../helpers/errors.js';
import { observed, ofKind, trail } from '../helpers/observers.js';
import { openSession } from '../helpers/sessions.js';
import { tempDir } from '../helpers/temp.js';

/** An observer that writes down what it was handed. */
function recorder(id: string, kinds?: readonly string[]): Observer & { seen: string[] } {
  const seen: string[] = [];
  return { id, ...(kinds === undefined ? {} : { kinds }), seen, onEvent: (event) => void seen.push(event.kind) };
}

describe('the observer bus', () => {
  it('records an observer that throws as observer.error, and the session and the other observers go on', async () => {
    const after = recorder('after');
    const flaky: Observer = {
      id: 'flaky',
      kinds: ['turn.start'],
      onEvent: () => {
        throw new RangeError('counter out of range');
      },
    };
    const { session } = openSession({ session: { observers: [flaky, after] } });
    const turn = session.emit('turn.start', { turn: 1 });
    session.emit('turn.end', { turn: 1 });
    const events = trail(session);
    const [error] = ofKind(events, 'observer.error');
    expect(error?.payload).toEqual({ observer_id: 'flaky', preset: 'custom', error: 'RangeError: counter out of range', event_id: turn.event_id, kind: 'turn.start' });
    // In trail order: the event, then the error it caused, then the next event.
    expect(events.slice(2).map((e) => e.kind)).toEqual(['turn.start', 'observer.error', 'turn.end']);
    expect(after.seen).toEqual(['membrane.ingress', 'session.open', 'turn.start', 'observer.error', 'turn.end']);
    const result = await session.close();
    expect(verifyTrail(result.log_path, result.summary.chain)).toMatchObject({ hash_chain_valid: true, complete: true });
    expect(result.audit_report.findings.find((f) => f.kind === 'OBSERVER_ERROR')).toMatchObject({ severity: 'warn', observer_id: 'flaky', message: 'RangeError: counter out of range', event_ids: [error?.event_id] });
  });

  it('records an observer that throws at close, and still closes the session', async () => {
    const { session } = openSession({ session: { observers: [{ id: 'late', kinds: [], onEvent: () => undefined, onClose: () => { throw new Error('no summary'); } }] } });
    const result = await session.close();
    const events = trail(session);
    expect(events.slice(-2).map((e) => [e.kind, e.payload['error'] ?? null])).toEqual([['observer.error', 'Error: no summary'], ['session.close', null]]);
    expect(result.chain.complete).toBe(true);
  });

  it('hands an observer what others record, never what it records itself, in trail order', async () => {
    const echo: Observer = {
      id: 'echo',
      kinds: ['turn.start', 'echo.reply'],
      onEvent: (event, context) => {
        if (event.kind === 'turn.start') context.emit('echo.reply', { of: event.event_id });
      },
    };
    const watcher = recorder('watcher', ['turn.start', 'echo.reply', 'turn.end']);
    const { session } = openSession({ session: { observers: [echo, watcher] } });
    session.emit('turn.start', {});
    session.emit('turn.end', {});
    expect(watcher.seen).toEqual(['turn.start', 'echo.reply', 'turn.end']);
    expect(trail(session).slice(2).map((e) => e.kind)).toEqual(['turn.start', 'echo.reply', 'turn.end']);
    await session.close();
  });

  it(`stops two observers answering each other past ${MAX_DEPTH} levels`, async () => {
    const answer = (id: string): Observer => ({ id, kinds: ['ping'], onEvent: (_event: ObservedEvent, context: ObserverContext) => void context.emit('ping', { from: id }) });
    const { session } = openSession({ session: { observers: [answer('a'), answer('b')] } });
    session.emit('ping', { from: 'host' });
    const pings = ofKind(trail(session), 'ping');
    // The host's ping, then two answers a level (a and b answer the host, then each other); the
    // answers one level past the bound are recorded but handed to no one.
    expect(pings.length).toBe(1 + 2 * (MAX_DEPTH + 1));
    session.emit('turn.end', {});
    await session.close();
  });

  it('gives observers the recorded payload: secrets redacted, numbers as written', async () => {
    const payloads: unknown[] = [];
    const { session } = openSession({ session: { observers: [{ id: 'look', kinds: ['tool.call'], onEvent: (event) => void payloads.push(event.payload) }] } });
    session.emit('tool.call', { tool: 'http.get', args: { url: '/x', api_key: 'sk-live-0123456789abcdef' } });
    expect(JSON.parse(JSON.stringify(payloads[0]))).toEqual({ tool: 'http.get', args: { url: '/x', api_key: '[redacted]' } });
    await session.close();
  });

  it('records the attached observers in membrane.ingress, and none when there are none', async () => {
    const session = observed([{ preset: 'break' }, { preset: 'monitor', id: 'counts' }], {}, { observers: [recorder('mine')] });
    expect(trail(session)[0]?.payload['observers']).toEqual([
      { id: 'break', preset: 'break' },
      { id: 'counts', preset: 'monitor' },
      { id: 'mine', preset: 'custom' },
    ]);
    await session.close();
    const { session: bare } = openSession();
    expect(trail(bare)[0]?.payload['observers']).toEqual([]);
    await bare.close();
  });

  it('refuses an observer it cannot call or name, and two with one id, before any file is written', () => {
    const home = tempDir();
    expectAuraError(() => openSession({ home, session: { observers: [{ id: 'x' } as unknown as Observer] } }), InvalidOptionError, 'INVALID_OPTION');
    expect(fs.existsSync(path.join(home, 'sessions')) ? fs.readdirSync(path.join(home, 'sessions')) : []).toEqual([]);
    expectAuraError(() => openSession({ session: { observers: [recorder('')] } }), InvalidOptionError, 'INVALID_OPTION');
    const error = expectAuraError(() => openSession({ agent: { observers: [{ preset: 'monitor' }] }, session: { observers: [recorder('monitor')] } }), InvalidOptionError, 'INVALID_OPTION');
    expect(error.message).toContain('"monitor"');
  });
});
