/**
 * `aura demo`: a scripted session of a small trip-planning agent: two turns, a model call per
 * turn, three tool calls (one fails and is retried), no network. It is written to the sessions
 * folder like any session, then verified from disk.
 */

import type { AuraConfig } from '../config/config.js';
import { agent } from '../session/agent.js';
import type { Session } from '../session/session.js';
import { verifyTrail } from '../spine/verify.js';
import { colors, EXIT, type CommandResult } from './output.js';

interface DemoTool {
  readonly name: string;
  readonly args: Record<string, unknown>;
  readonly run: () => Record<string, unknown>;
}

const WEATHER: DemoTool = {
  name: 'weather.forecast',
  args: { city: 'Lisbon', day: 'saturday' },
  run: () => ({ summary: 'sunny', high_c: 24.5, low_c: 16, rain_probability: 0.05 }),
};

/** A calendar whose first booking attempt fails, so the demo shows an error and its retry. */
function calendarTool(): DemoTool {
  let attempts = 0;
  return {
    name: 'calendar.book',
    args: { title: 'Day trip to Sintra', day: 'saturday', start: '09:00' },
    run: () => {
      attempts++;
      if (attempts === 1) throw new Error('slot 09:00 is taken');
      return { booked: true, start: '09:30', event_ref: 'cal-7f3a' };
    },
  };
}

/** Runs the demo session and reports where it went and how it verified. */
export async function demoCommand(config: AuraConfig): Promise<CommandResult> {
  const planner = agent('demo/trip-planner', {
    home: config.paths.home,
    ...(config.paths.projectDir === null ? {} : { projectDir: config.paths.projectDir }),
    name: 'trip-planner',
    purpose: 'Plan a day trip: check the weather, then book it in the calendar',
    skills: ['weather.forecast', 'calendar.book'],
  });
  const calendar = calendarTool();
  const session = planner.session({ mode: 'task' });

  session.emit('turn.start', { turn: 1, input: 'Is Saturday good for a day trip to Sintra?' });
  session.emit('model.call', { model: 'demo-model', prompt_tokens: 412, completion_tokens: 38 }, { telemetry: { latency_ms: 812.4 } });
  callTool(session, WEATHER, 1);
  session.emit('turn.end', { turn: 1, output: 'Saturday looks sunny, 24.5 °C.', tokens: 450 });

  session.emit('turn.start', { turn: 2, input: 'Book it for 9 am.' });
  session.emit('model.call', { model: 'demo-model', prompt_tokens: 530, completion_tokens: 22 }, { telemetry: { latency_ms: 640.1 } });
  callTool(session, calendar, 1);
  callTool(session, calendar, 2);
  session.emit('turn.end', { turn: 2, output: 'Booked Saturday 09:30 (09:00 was taken).', tokens: 552 });
  session.completeGoal({ booked: 'cal-7f3a' });

  const result = await session.close();
  const verified = verifyTrail(result.log_path, result.summary.chain);
  const verdict = result.audit_report.verdict;
  const ok = verified.hash_chain_valid && verified.reason === undefined;
  const human = [
    `aura demo: session ${result.session_id} of agent demo/trip-planner`,
    `  trail    ${result.log_path} (${verified.events} events)`,
    ...(result.exports.summary === undefined ? [] : [`  summary  ${result.exports.summary}`]),
    ...(result.exports.otel === undefined ? [] : [`  spans    ${result.exports.otel}`]),
    `  verdict  ${verdict === 'pass' ? colors.green('PASS') : colors.yellow(verdict.toUpperCase())}`,
    `  verify   ${ok ? colors.green(`hash chain valid, ${verified.complete ? 'complete' : 'incomplete'}, matches the seal`) : colors.red(verified.message ?? 'failed')}`,
  ].join('\n');
  return {
    exitCode: ok ? EXIT.ok : EXIT.checkFailed,
    json: { session_id: result.session_id, trail: result.log_path, exports: result.exports, verdict, verify: verified },
    human,
  };
}

function callTool(session: Session, tool: DemoTool, attempt: number): void {
  const base = { tool: tool.name, skill_id: tool.name.split('.')[0] ?? tool.name, args: tool.args };
  session.emit('tool.intent', { ...base, membrane: 'egress' });
  session.emit('tool.call', base, { telemetry: { attempt } });
  const started = performance.now();
  try {
    const output = tool.run();
    session.emit('tool.result', { ...base, result: output }, { telemetry: { attempt, latency_ms: elapsed(started) } });
  } catch (error) {
    session.emit('tool.error', { ...base, error: (error as Error).message }, { telemetry: { attempt, latency_ms: elapsed(started) } });
  }
}

function elapsed(started: number): number {
  return Math.round((performance.now() - started) * 1000) / 1000;
}
