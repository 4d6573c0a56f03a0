import { describe, expect, it } from 'vitest';
import { ProfileError } from '../../src/errors.js';
import { agent } from '../../src/session/agent.js';
import { expectAuraError } from '../helpers/errors.js';
import { trail } from '../helpers/observers.js';
import { openSession } from '../helpers/sessions.js';
import { expectProfileRefused, writeProfile } from '../helpers/profiles.js';
import { tempDir } from '../helpers/temp.js';

describe('observers[] in a profile', () => {
  it('attaches presets by name with their config, from a file', async () => {
    const file = writeProfile('observers:\n  - preset: break\n    config: { soft: 2, hard: 4, window: 16 }\n  - { preset: goal-drift, id: goal, config: { forbidden_topics: [crypto] } }\n');
    const ag = agent('acme/bot', { home: tempDir(), profileFile: file });
    expect(ag.policy.observers.specs.map((s) => [s.id, s.preset, s.source])).toEqual([
      ['break', 'break', 'profile'],
      ['goal', 'goal_drift', 'profile'],
    ]);
    const session = ag.session();
    expect(trail(session)[0]?.payload['observers']).toEqual([
      { id: 'break', preset: 'break' },
      { id: 'goal', preset: 'goal_drift' },
    ]);
    await session.close();
  });

  const bad: [string, string, number, string, RegExp][] = [
    ['an unknown preset', 'observers:\n  - preset: brake\n', 2, 'observers[0].preset', /unknown preset "brake"; expected one of monitor, limit, break, goal_drift, schedule_slo/],
    ['an entry key that is not preset, id or config', 'observers:\n  - preset: break\n    options: {}\n', 3, 'observers[0].options', /unknown key for an observer/],
    ['an unknown config key', 'observers:\n  - preset: break\n    config:\n      soft: 2\n      hardd: 4\n', 5, 'observers[0].config.hardd', /unknown config key; expected soft, hard, window/],
    ['a threshold that is not a count', 'observers:\n  - preset: break\n    config: { soft: two }\n', 3, 'observers[0].config.soft', /expected an integer >= 0, got "two"/],
    ['an unknown loop pattern', 'observers:\n  - preset: break\n    config:\n      patterns:\n        LOOPING: false\n', 5, 'observers[0].config.patterns.LOOPING', /unknown pattern; expected ACTION_FIXATION/],
    ['a hard threshold under the soft one', 'observers:\n  - preset: break\n    config:\n      patterns:\n        ACTION_FIXATION: { soft: 4, hard: 3 }\n', 5, 'observers[0].config.patterns.ACTION_FIXATION', /hard threshold \(3\) must be above the soft one \(4\)/],
    ['a shared hard threshold that is not above a default soft one', 'observers:\n  - preset: break\n    config:\n      hard: 3\n', 4, 'observers[0].config.hard', /hard threshold \(3\) must be above the soft one \(3\) for ACTION_FIXATION/],
    ['a window too small for its cycles', 'observers:\n  - preset: break\n    config: { window: 6, max_cycle: 4 }\n', 3, 'observers[0].config.window', /at least twice max_cycle \(8\)/],
    ['a limit with no cap', 'observers:\n  - preset: limit\n    config: { warn_ratio: 0.5 }\n', 3, 'observers[0].config', /set at least one cap/],
    ['a warn ratio above 1', 'observers:\n  - preset: limit\n    config: { max_events: 10, warn_ratio: 2 }\n', 3, 'observers[0].config.warn_ratio', /in \(0, 1\]/],
    ['a goal_drift with nothing to check', 'observers:\n  - preset: goal_drift\n', 2, 'observers[0].config', /nothing to check/],
    ['a schedule_slo without a schedule', 'observers:\n  - { preset: schedule_slo, config: { required_tool: x } }\n', 2, 'observers[0].config.schedule', /needs a schedule/],
    ['a schedule that does not parse', 'observers:\n  - preset: schedule_slo\n    config: { schedule: "half past eight" }\n', 3, 'observers[0].config.schedule', /expected "HH:MM" or a cron/],
    ['two observers with one id', 'observers:\n  - preset: monitor\n  - { preset: limit, id: monitor, config: { max_events: 9 } }\n', 3, 'observers[1]', /duplicate observer id "monitor"/],
    ['observers that are not a list', 'observers: { preset: break }\n', 1, 'observers', /expected a list/],
    ['an unknown spectrum service with strict_services', 'spectrum:\n  level: mid\n  strict_services: true\n  services: [monitor, brake]\n', 4, 'spectrum.services', /unknown service "brake" \(strict_services\)/],
    ['service config for an unknown service', 'spectrum:\n  services: [limit]\n  service_config:\n    limitt: { max_events: 5 }\n', 4, 'spectrum.service_config.limitt', /unknown service/],
    ['a bad value in a service config', 'spectrum:\n  services: [limit]\n  service_config:\n    limit:\n      max_events: -1\n', 5, 'spectrum.service_config.limit.max_events', /expected an integer >= 0/],
  ];
  for (const [what, text, line, key, message] of bad) {
    it(`refuses ${what}, naming the file, line ${line} and ${key}`, () => {
      expectProfileRefused(text, line, key, message);
    });
  }

  it('refuses a bad entry given in code, naming the key', () => {
    const error = expectAuraError(() => agent('acme/bot', { home: tempDir(), observers: [{ preset: 'break', config: { window: 'big' } }] }), ProfileError, 'PROFILE_INVALID');
    expect(error.data).toEqual({ path: '<code>', line: null, key: 'observers[0].config.window' });
  });
});

describe('spectrum services', () => {
  it('attach their presets with the service defaults and config, skip one a profile entry already uses, and list unknown ones', async () => {
    const { session } = openSession({
      agent: {
        observers: [{ preset: 'monitor', id: 'mine' }],
        spectrum: { level: 'mid', services: ['monitor', 'limit', 'break', 'audit', 'recall'], service_config: { break: { soft: 2, hard: 3 } } },
      },
    });
    expect(session.agent.policy.observers.specs.map((s) => [s.id, s.preset, s.source])).toEqual([
      ['mine', 'monitor', 'profile'],
      ['spectrum-limit', 'limit', 'spectrum'],
      ['spectrum-break', 'break', 'spectrum'],
    ]);
    const [ingress, open] = trail(session);
    expect(ingress?.payload['observers']).toEqual([
      { id: 'mine', preset: 'monitor' },
      { id: 'spectrum-limit', preset: 'limit' },
      { id: 'spectrum-break', preset: 'break' },
    ]);
    expect((open?.payload['spectrum'] as Record<string, unknown>)['services_activation']).toEqual({
      audit: 'declared_implicit',
      activated: ['limit', 'break'],
      skipped_explicit: ['monitor'],
      unknown: ['recall'],
      declared: ['monitor', 'limit', 'break', 'recall'],
    });
    // The break service took its hard threshold from service_config: the third repeat stops.
    for (let i = 0; i < 3; i++) await session.tool('same', {}, () => 'x');
    await expect(session.tool('same', {}, () => 'x')).rejects.toMatchObject({ code: 'LOOP_BROKEN', data: { observer_id: 'spectrum-break' } });
    await session.close();
  });

  it('follow the level defaults: monitor at high, monitor and break at full', () => {
    const at = (level: string): string[] => agent('acme/bot', { home: tempDir(), skills: ['t'], spectrum: { level, identity_required: false } }).policy.observers.specs.map((s) => s.id);
    expect(at('mid')).toEqual([]);
    expect(at('high')).toEqual(['spectrum-monitor']);
    expect(at('full')).toEqual(['spectrum-monitor', 'spectrum-break']);
  });
});
