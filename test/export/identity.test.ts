/**
 * The operator's identity (e-mail, name, subject), which the summary's `identity` block redacts,
 * reaches no exported byte: not the summary (whose conformance violations copy whole events, with
 * their identity trailer), not the spans on disk or pushed to a collector, not `report show --json`.
 */

import * as fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { exportOtelCommand } from '../../src/cli/export.js';
import { resolveConfig } from '../../src/config/config.js';
import { ApprovalRequiredError } from '../../src/errors.js';
import type { AgentOptions } from '../../src/session/agent.js';
import type { SessionOptions, SessionResult } from '../../src/session/session.js';
import { aura } from '../helpers/cli.js';
import { OtlpReceiver, RECEIVER_TOKEN } from '../helpers/otlp-receiver.js';
import { openSession } from '../helpers/sessions.js';

const OPERATOR = { subject: 'olga.subject@acme.test', email: 'olga.ops@acme.test', name: 'Olga Operatorova' };
const receivers: OtlpReceiver[] = [];

afterEach(async () => {
  for (const receiver of receivers.splice(0)) await receiver.stop();
});

/** A session bound to the operator, with a violation, an approval the operator gave, and a call that names them. */
async function operatorSession(agentOptions: AgentOptions, sessionOptions: SessionOptions, endpoint: string): Promise<{ result: SessionResult; home: string }> {
  const { session, home } = openSession({
    agent: {
      rules: [
        { type: 'deny_tools', tools: ['shell.*'] },
        { type: 'confirm_before', tools: ['mail.send'] },
      ],
      overrides: { otel: { endpoint, headers: { authorization: `Bearer ${RECEIVER_TOKEN}` }, close_timeout_ms: 5000, capture_tool_content: true, protocol: 'http/json' } },
      ...agentOptions,
    },
    session: sessionOptions,
  });
  await session.tool('shell.exec', { cmd: 'ls' }, () => 'ran').catch(() => undefined);
  const mail = { to: OPERATOR.email, subject: `report for ${OPERATOR.name}` };
  const held = await session.tool('mail.send', mail, () => 'sent').catch((error: unknown) => error);
  expect(held).toBeInstanceOf(ApprovalRequiredError);
  // No principal given: the operator approved it, and the record says who.
  session.approve((held as ApprovalRequiredError).data?.request_id ?? '');
  await session.tool('mail.send', mail, () => 'sent');
  return { result: await session.close(), home };
}

describe("the operator's identity", () => {
  for (const [how, agentOptions, sessionOptions] of [
    ['bound by the session', {}, { operator: { ...OPERATOR, verified: true } }],
    ["declared in the profile's ids", { ids: { operator: { ...OPERATOR, verified: false } } }, {}],
  ] as const) {
    it(`${how}, reaches no exported byte`, async () => {
      const collector = await OtlpReceiver.start();
      receivers.push(collector);
      const { result, home } = await operatorSession(agentOptions, sessionOptions, collector.endpoint);
      const summary = JSON.parse(fs.readFileSync(result.exports.summary ?? '', 'utf8')) as { identity: unknown; conformance: { violations: { agent_ids: { ids: { operator: unknown } } }[] } };
      // The record of who ran the session stays, without the PII.
      expect(summary.conformance.violations.length).toBeGreaterThan(0);
      expect(summary.conformance.violations[0]?.agent_ids.ids.operator).toMatchObject({ email: null, name: null, subject: null, subject_hash: expect.stringMatching(/^[0-9a-f]{16}$/) });
      const pushed = await exportOtelCommand(result.session_id, { endpoint: collector.endpoint, protocol: 'http/protobuf', headers: [`authorization=Bearer ${RECEIVER_TOKEN}`] }, resolveConfig({ home, env: {} }), {});
      expect(pushed.exitCode).toBe(0);
      const shown = aura(['report', 'show', result.session_id, '--json'], { home });
      const exported: [string, Buffer][] = [
        ['summary', fs.readFileSync(result.exports.summary ?? '')],
        ['spans', fs.readFileSync(result.exports.otel ?? '')],
        ['pushed spans', collector.bytes],
        ['report show --json', Buffer.from(shown.stdout)],
      ];
      expect(collector.requests.length).toBeGreaterThan(1);
      for (const [where, bytes] of exported) {
        for (const value of Object.values(OPERATOR)) expect(bytes.includes(value), `${value} in ${where}`).toBe(false);
      }
      // The approval still says the operator gave it.
      expect(fs.readFileSync(result.exports.otel ?? '', 'utf8')).toContain('"[operator]"');
    });
  }

  it('is kept in the summary with identity_export_pii, as configured', async () => {
    const collector = await OtlpReceiver.start();
    receivers.push(collector);
    const { result } = await operatorSession({ overrides: { identity_export_pii: true } }, { operator: { ...OPERATOR, verified: true } }, collector.endpoint);
    const summary = JSON.parse(fs.readFileSync(result.exports.summary ?? '', 'utf8')) as { identity: { operator: Record<string, unknown> } };
    expect(summary.identity.operator).toMatchObject(OPERATOR);
    // Spans leave the machine: they never carry it.
    for (const value of Object.values(OPERATOR)) expect(fs.readFileSync(result.exports.otel ?? '', 'utf8')).not.toContain(value);
  });
});
