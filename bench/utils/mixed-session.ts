/**
 * A long session of every kind a report shows: turns, model calls, tool calls with latencies,
 * policy denials, approvals with their principal, observer alerts and PII masking. The report
 * page benchmark and its scale test both open one of 100k events.
 */

import { agent } from '../../src/index.js';
import { toolCallPayload } from './payload.js';

/** Records a closed session of at least `events` events under `home` (fsync none); returns its id. */
export async function writeMixedSession(home: string, events: number): Promise<string> {
  const session = agent('bench/report', { home }).session({ fsync: 'none' });
  for (let turn = 1; session.eventCount < events - 1; turn++) {
    session.emit('turn.start', { turn, input: `step ${turn} of the long task` });
    session.emit('model.call', { model: 'bench-model', prompt_tokens: 400 + (turn % 50), completion_tokens: 40 }, { telemetry: { latency_ms: 200 + (turn % 400) } });
    session.emit('tool.call', toolCallPayload(turn));
    session.emit('tool.result', { tool: 'fs.read_file', result: { bytes: turn * 7 } }, { telemetry: { latency_ms: 1 + (turn % 90) } });
    if (turn % 20 === 0) session.emit('constraint.violated', { message: 'Tool denied: shell.exec', rule: { type: 'deny_tools', tools: ['shell.*'] }, audit_only: false, event: { kind: 'tool.call', payload: { tool: 'shell.exec' } } });
    if (turn % 50 === 0) session.emit('constraint.approved', { request_id: `req_${turn}`, principal: 'ops@acme.test', tool: 'calendar.book' });
    if (turn % 100 === 0) session.emit('observer.alert', { pattern: 'ACTION_FIXATION', message: 'the same call three times', remedial_directive: 'try another tool' });
    if (turn % 30 === 0) session.emit('middleware.applied', { op: 'pii_mask', strategy: 'mask', entities_detected: { EMAIL: 1 }, redactions: 1, fields: ['input'] });
    session.emit('turn.end', { turn, output: `done with step ${turn}` });
  }
  const closed = await session.close();
  return closed.session_id;
}
