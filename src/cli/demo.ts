/**
 * `aura demo`: a scripted session of a small trip-planning agent, with no network. In four turns
 * it shows what aura records and stops: a gated tool that gets its API key injected (the key
 * appears in no file aura writes: the demo checks), a denied tool the agent recovers from, a call
 * held for approval and released for exactly that call, arguments refused by their schema and
 * then fixed, and a tool result holding personal data that is masked before it is recorded (the
 * demo checks that no raw value reached a file). In a fifth, the agent polls an invitation that
 * never changes: the `break` observer nudges it at the third identical call and stops it at the
 * fifth, and the sixth is refused. It is written to the sessions folder like any session, then
 * verified from disk.
 */

import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import type { AuraConfig } from '../config/config.js';
import { ApprovalRequiredError, LoopBrokenError, PolicyDeniedError } from '../errors.js';
import { agent } from '../session/agent.js';
import type { Session } from '../session/session.js';
import { verifyTrail } from '../spine/verify.js';
import { colors, EXIT, type CommandResult } from './output.js';

const DEMO_PROFILE = {
  name: 'trip-planner',
  purpose: 'Plan a day trip: check the weather, book it in the calendar, tell the traveller',
  skills: ['weather.forecast', 'calendar.find_slot', 'calendar.book', 'mail.send', 'contacts.lookup'],
  rules: [
    { type: 'deny_tools', tools: ['shell.*', 'fs.delete'] },
    { type: 'confirm_before', tools: ['calendar.book'] },
    { type: 'schema_check', tool: 'mail.send', schema: { type: 'object', required: ['to', 'subject'], properties: { to: { type: 'string', pattern: '^[^@\\s]+@[^@\\s]+$' } } } },
  ],
  capabilities: [{ id: 'weather-api', tool: 'weather.forecast', allowed: { city: '*' }, secret: 'env:AURA_DEMO_WEATHER_KEY', inject_as: 'api_key' }],
  observers: [{ preset: 'break' }],
  middleware: { pii_mask: { strategy: 'mask' } },
};

// The traveller's contact card: an e-mail, a phone and a Luhn-valid test card number.
const TRAVELLER = { name: 'Ana', email: 'ana.traveller@example.com', phone: '+351 912 345 678', card_on_file: '4111 1111 1111 1111' };

/** Runs the demo session and reports what it shows, where it went and how it verified. */
export async function demoCommand(config: AuraConfig): Promise<CommandResult> {
  const planner = agent('demo/trip-planner', {
    home: config.paths.home,
    ...(config.paths.projectDir === null ? {} : { projectDir: config.paths.projectDir }),
    // What the command line chose (`--anchor-dir`) holds for the demo's session too.
    ...(config.settings.anchor_dir === null ? {} : { overrides: { anchor_dir: config.settings.anchor_dir } }),
    ...DEMO_PROFILE,
  });
  // The key from the environment when set, else one made up for this run; a broker hands it over
  // as a vault would hand over a real one.
  const weatherKey = process.env['AURA_DEMO_WEATHER_KEY'] ?? `demo-${randomBytes(12).toString('hex')}`;
  const session = planner.session({ mode: 'task', secretBroker: { resolve: (ref) => (ref === 'env:AURA_DEMO_WEATHER_KEY' ? weatherKey : undefined) } });
  const story: string[] = [];

  session.emit('turn.start', { turn: 1, input: 'Is Saturday good for a day trip to Sintra?' });
  session.emit('model.call', { model: 'demo-model', prompt_tokens: 412, completion_tokens: 38 }, { telemetry: { latency_ms: 812.4 } });
  const forecast = await session.tool(
    'weather.forecast',
    { city: 'Sintra', day: 'saturday' },
    (live) => (live['api_key'] === weatherKey ? { summary: 'sunny', high_c: 24.5, low_c: 16, rain_probability: 0.05 } : { error: 'unauthorized' }),
    { capabilityId: 'weather-api' },
  );
  story.push(`weather.forecast got its API key injected (capability weather-api): ${forecast.summary === 'sunny' ? 'authorized' : 'refused'}`);
  session.emit('turn.end', { turn: 1, output: 'Saturday looks sunny, 24.5 °C.', tokens: 450 });

  session.emit('turn.start', { turn: 2, input: 'Clean up my downloads folder first.' });
  try {
    await session.tool('shell.exec', { cmd: 'rm -rf ~/Downloads' }, () => 'never runs');
  } catch (error) {
    if (!(error instanceof PolicyDeniedError)) throw error;
    story.push(`shell.exec denied by ${error.data?.rule_type ?? 'policy'}; the agent carried on`);
  }
  session.emit('turn.end', { turn: 2, output: 'I cannot run shell commands; skipping that.', tokens: 120 });

  session.emit('turn.start', { turn: 3, input: 'Book it for 9 am.' });
  const slot = await findSlot(session);
  const booking = { title: 'Day trip to Sintra', day: 'saturday', start: slot };
  try {
    await session.tool('calendar.book', booking, () => ({ booked: true }));
  } catch (error) {
    if (!(error instanceof ApprovalRequiredError)) throw error;
    const requestId = error.data?.request_id ?? '';
    session.approve(requestId, { principal: 'demo-operator' });
    await session.tool('calendar.book', booking, () => ({ booked: true, event_ref: 'cal-7f3a' }));
    story.push(`calendar.book held for approval ${requestId}, approved by demo-operator, released for exactly that call`);
  }
  session.emit('turn.end', { turn: 3, output: `Booked Saturday ${slot}.`, tokens: 552 });

  session.emit('turn.start', { turn: 4, input: 'Mail me the plan.' });
  const contact = await session.tool('contacts.lookup', { name: 'Ana' }, () => TRAVELLER);
  story.push(`contacts.lookup returned personal data, masked before it was recorded: ${contact.email}, ${contact.phone}, ${contact.card_on_file}`);
  try {
    await session.tool('mail.send', { to: 'traveller', body: 'Sintra on Saturday' }, () => ({ sent: true }));
  } catch (error) {
    if (!(error instanceof PolicyDeniedError)) throw error;
    await session.tool('mail.send', { to: 'traveller@example.test', subject: 'Saturday: Sintra', body: 'Sintra on Saturday' }, () => ({ sent: true }));
    story.push('mail.send arguments refused by their schema, then fixed and sent');
  }
  session.emit('turn.end', { turn: 4, output: 'Plan sent.', tokens: 210 });
  story.push(await pollUntilStopped(session));
  session.completeGoal({ booked: 'cal-7f3a' });

  const result = await session.close();
  const verified = verifyTrail(result.log_path, result.summary.chain);
  const written = [result.log_path, result.exports.summary, result.exports.otel].filter((file): file is string => file !== undefined);
  const leaked = written.filter((file) => fs.readFileSync(file, 'utf8').includes(weatherKey));
  const personal = [TRAVELLER.email, TRAVELLER.phone, TRAVELLER.card_on_file];
  const piiLeaked = written.filter((file) => personal.some((value) => fs.readFileSync(file, 'utf8').includes(value)));
  const { verdict, findings } = result.audit_report;
  const ok = verified.hash_chain_valid && verified.reason === undefined && leaked.length === 0 && piiLeaked.length === 0;
  const kinds = [...new Set(findings.map((finding) => finding.kind))];
  // Informational findings (the PII masked) are records, not calls policy stopped.
  const stopped = [...new Set(findings.filter((finding) => finding.severity !== 'info').map((finding) => finding.kind))];
  const human = [
    `aura demo: session ${result.session_id} of agent demo/trip-planner`,
    `  trail    ${result.log_path} (${verified.events} events)`,
    ...(result.exports.summary === undefined ? [] : [`  summary  ${result.exports.summary}`]),
    ...(result.exports.otel === undefined ? [] : [`  spans    ${result.exports.otel}`]),
    ...story.map((line, i) => `  ${i === 0 ? 'policy' : '      '}   ${line}`),
    `  secret   the injected key appears in ${leaked.length === 0 ? colors.green('none of the files aura wrote') : colors.red(leaked.join(', '))}`,
    `  pii      the raw e-mail, phone and card number appear in ${piiLeaked.length === 0 ? colors.green('none of the files aura wrote') : colors.red(piiLeaked.join(', '))}`,
    `  verdict  ${verdict === 'pass' ? colors.green('PASS') : colors.yellow(verdict.toUpperCase())}${stopped.length === 0 ? '' : ` (findings: ${stopped.join(', ')}: the calls policy stopped)`}`,
    `  verify   ${verified.hash_chain_valid && verified.reason === undefined ? colors.green(`hash chain valid, ${verified.complete ? 'complete' : 'incomplete'}, matches the seal`) : colors.red(verified.message ?? 'failed')}`,
  ].join('\n');
  return {
    exitCode: ok ? EXIT.ok : EXIT.checkFailed,
    json: { session_id: result.session_id, trail: result.log_path, exports: result.exports, verdict, findings: kinds, story, secret_leaked_into: leaked, pii_leaked_into: piiLeaked, verify: verified },
    human,
  };
}

/** A calendar whose first lookup fails, so the trail shows a tool error and its retry. */
async function findSlot(session: Session): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await session.tool('calendar.find_slot', { day: 'saturday', after: '09:00' }, () => {
        if (attempt === 1) throw new Error('calendar service timed out');
        return '09:30';
      });
    } catch (error) {
      if (attempt >= 2) throw error;
    }
  }
}

/**
 * An agent that keeps polling an invitation that never changes, ignoring the nudge, until the
 * `break` observer stops it and the next call is refused (the tool does not run).
 */
async function pollUntilStopped(session: Session): Promise<string> {
  session.emit('turn.start', { turn: 5, input: 'Tell me when the traveller accepts.' });
  let polls = 0;
  // Bounded: a break observer that never stopped it would be a bug, not a reason to spin.
  while (polls < 10) {
    try {
      await session.tool('calendar.invite_status', { event_ref: 'cal-7f3a' }, () => {
        polls++;
        return { status: 'pending' };
      });
    } catch (error) {
      if (!(error instanceof LoopBrokenError)) throw error;
      session.emit('turn.end', { turn: 5, output: 'Still pending; I will stop checking.', tokens: 64 });
      return `calendar.invite_status polled ${polls} times with no progress: break nudged at the 3rd, stopped at the 5th (${error.data?.pattern ?? 'loop'}), refused the next call (${error.code})`;
    }
  }
  throw new Error('the break observer did not stop the polling loop');
}
