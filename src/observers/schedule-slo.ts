/**
 * The `schedule_slo` preset (reference §15.2): a scheduled task must finish its required step by
 * the schedule time plus a grace. The deadline is the first schedule time (UTC) at or after the
 * session's start, plus `schedule_grace_minutes`; a `required_kind` event for `required_tool`
 * before it completes the task. When an event arrives after the deadline, or the session closes
 * after it, with the task not done, one `slo.missed` `{type, reason, observer_id, required_tool,
 * deadline, deadline_at, grace_minutes, phase: "deadline_missed"}` is recorded.
 *
 * Two Aura bugs are not carried (§21.24): a session that closes before its deadline has not
 * missed it (it gets an `observer.note` `slo_pending`, not a miss), and the miss is recorded
 * inside the session, before `session.close`, not after it.
 */

import type { ObservedEvent, Observer, ObserverContext } from './bus.js';
import type { PresetConfig } from './config.js';

/** The config keys of `schedule_slo`. */
export const SCHEDULE_SLO_KEYS = ['schedule', 'schedule_grace_minutes', 'required_tool', 'required_kind'];

/** The checked config of a `schedule_slo` observer. */
export interface ScheduleSloSettings {
  /** Minutes after midnight UTC. */
  readonly minuteOfDay: number;
  readonly graceMinutes: number;
  readonly requiredTool: string | null;
  readonly requiredSkill: string | null;
  readonly requiredKind: string;
}

const CLOCK = /^([01]?\d|2[0-3]):([0-5]\d)$/;
const CRON = /^([0-5]?\d)\s+([01]?\d|2[0-3])(\s+\S+){3}$/;
const MICROS_PER_MINUTE = 60_000_000;
const MICROS_PER_DAY = 24 * 60 * MICROS_PER_MINUTE;

/**
 * Checks a `schedule_slo` config; schedule and grace default to the profile's variables.
 * @throws ProfileError for a missing or unreadable schedule, or a negative grace
 */
export function parseScheduleSloConfig(config: PresetConfig, variables: Readonly<Record<string, unknown>>): ScheduleSloSettings {
  const declared = variables['schedule'];
  const schedule = config.text('schedule', typeof declared === 'string' ? declared : null);
  if (schedule === null) throw config.error('schedule', 'schedule_slo needs a schedule ("HH:MM" or a cron "M H * * *"), in its config or in variables.schedule');
  const clock = CLOCK.exec(schedule.trim());
  const cron = clock === null ? CRON.exec(schedule.trim()) : null;
  if (clock === null && cron === null) throw config.error('schedule', `expected "HH:MM" or a cron "M H * * *", got ${JSON.stringify(schedule)}`);
  const minuteOfDay = clock !== null ? Number(clock[1]) * 60 + Number(clock[2]) : Number(cron?.[2]) * 60 + Number(cron?.[1]);
  const declaredGrace = variables['schedule_grace_minutes'];
  const graceMinutes = config.count('schedule_grace_minutes', typeof declaredGrace === 'number' && Number.isInteger(declaredGrace) && declaredGrace >= 0 ? declaredGrace : 15);
  const required = config.text('required_tool', null);
  const slash = required === null ? -1 : required.indexOf('/');
  return {
    minuteOfDay,
    graceMinutes,
    requiredTool: required === null ? null : required.slice(slash + 1),
    requiredSkill: required === null || slash < 0 ? null : required.slice(0, slash),
    requiredKind: config.text('required_kind', 'tool.result') ?? 'tool.result',
  };
}

/** A `schedule_slo` observer. */
export class ScheduleSloObserver implements Observer {
  readonly preset = 'schedule_slo';
  /** The deadline, grace included, in epoch microseconds, set by the session's first event. */
  private deadline = Number.POSITIVE_INFINITY;
  private started = false;
  private done = false;
  private missed = false;

  constructor(
    readonly id: string,
    private readonly settings: ScheduleSloSettings,
  ) {}

  onEvent(event: ObservedEvent, context: ObserverContext): void {
    if (!this.started) this.start(event.micros);
    if (this.done || this.missed) return;
    if (event.micros > this.deadline) {
      this.miss(context);
      return;
    }
    if (event.kind !== this.settings.requiredKind) return;
    const p = event.payload;
    const { requiredTool, requiredSkill } = this.settings;
    if (requiredTool !== null && p['tool'] !== requiredTool) return;
    if (requiredSkill !== null && p['skill_id'] !== requiredSkill) return;
    this.done = true;
  }

  /** The first schedule time at or after the session's start, plus the grace. */
  private start(micros: number): void {
    this.started = true;
    const midnight = Math.floor(micros / MICROS_PER_DAY) * MICROS_PER_DAY;
    let scheduled = midnight + this.settings.minuteOfDay * MICROS_PER_MINUTE;
    if (scheduled < micros) scheduled += MICROS_PER_DAY;
    this.deadline = scheduled + this.settings.graceMinutes * MICROS_PER_MINUTE;
  }

  onClose(context: ObserverContext): void {
    if (!this.started) this.start(context.now());
    if (this.done || this.missed) return;
    if (context.now() > this.deadline) this.miss(context);
    else context.emit('observer.note', { type: 'slo_pending', observer_id: this.id, required_tool: this.requiredLabel(), deadline: this.deadlineLabel(), deadline_at: new Date(this.deadline / 1000).toISOString() });
  }

  private miss(context: ObserverContext): void {
    this.missed = true;
    context.emit('slo.missed', {
      type: 'slo.missed',
      reason: `${this.requiredLabel()} not completed by ${this.deadlineLabel()} UTC (+${this.settings.graceMinutes} min grace)`,
      observer_id: this.id,
      required_tool: this.requiredLabel(),
      deadline: this.deadlineLabel(),
      deadline_at: new Date(this.deadline / 1000).toISOString(),
      grace_minutes: this.settings.graceMinutes,
      phase: 'deadline_missed',
    });
  }

  private requiredLabel(): string {
    const { requiredTool, requiredSkill, requiredKind } = this.settings;
    return requiredTool === null ? requiredKind : requiredSkill === null ? requiredTool : `${requiredSkill}/${requiredTool}`;
  }

  private deadlineLabel(): string {
    const minute = this.settings.minuteOfDay;
    return `${String(Math.floor(minute / 60)).padStart(2, '0')}:${String(minute % 60).padStart(2, '0')}`;
  }
}
