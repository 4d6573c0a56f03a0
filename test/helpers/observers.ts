/** Sessions with observers, and the trail read back from disk, for the observer tests. */

import { expect } from 'vitest';
import type { AgentOptions } from '../../src/session/agent.js';
import type { Session, SessionOptions } from '../../src/session/session.js';
import type { AuraEvent } from '../../src/spine/record.js';
import { readTrail } from '../../src/spine/trail-reader.js';
import { openSession } from './sessions.js';

/** A session with these observers (profile entries) and repeatable ids and times. */
export function observed(observers: readonly unknown[], agent: AgentOptions = {}, session: SessionOptions = {}): Session {
  return openSession({ agent: { observers, ...agent }, session }).session;
}

/** The session's events as read back from its trail on disk (the chain verified on the way). */
export function trail(session: Session): readonly AuraEvent[] {
  const read = readTrail(session.files.trail);
  expect(read.chain.hash_chain_valid).toBe(true);
  return read.events;
}

/** The events of one kind. */
export function ofKind(events: readonly AuraEvent[], kind: string): AuraEvent[] {
  return events.filter((event) => event.kind === kind);
}

/** The event with this id (fails the test when there is none). */
export function byId(events: readonly AuraEvent[], eventId: unknown): AuraEvent {
  const event = events.find((e) => e.event_id === eventId);
  expect(event, `event ${String(eventId)}`).toBeDefined();
  return event as AuraEvent;
}
