/**
 * The mask stage: personal data masked before anything is recorded, where the profile puts
 * `pii_mask` on a boundary (or a call asks for it), and a `middleware.applied` record of each
 * application that changed something: types, counts and paths, never a value.
 */

import { ApprovalRequiredError, InvalidOptionError, PolicyDeniedError } from '../errors.js';
import { MIDDLEWARE_OPS, type PiiBoundary, type SessionPii } from '../middleware/middleware.js';
import { PII_ENTITIES } from '../middleware/pii-detectors.js';
import { PiiMasker, type Masked, type PiiReport } from '../middleware/pii-mask.js';
import type { StepSpec } from '../sequencer/spec.js';
import type { Masking, RecordedEvent, RecordFn, ToolOptions } from './types.js';

// What `middleware: [pii_mask]` on a call (a sequencer step) masks.
const CALL_BOUNDARIES: readonly PiiBoundary[] = ['tool.args', 'tool.result'];

/** A payload masked at one boundary: what to record, and the report (null when nothing changed). */
export type MaskedPayload = Masked<Readonly<Record<string, unknown>>>;

export class MaskStage {
  /** The default masker of calls that ask for `pii_mask` when the profile declares none. */
  private callMasker: PiiMasker | null = null;

  constructor(
    /** The profile's `middleware.pii_mask`, key resolved; null when the profile has none. */
    private readonly pii: SessionPii | null,
    private readonly record: RecordFn,
  ) {}

  /** The masking of an emitted payload (the `emit` boundary), or null when nothing is masked. */
  emitted(payload: Readonly<Record<string, unknown>>): { masked: MaskedPayload & { report: PiiReport }; masking: Masking } | null {
    const masker = this.pii?.boundaries.has('emit') === true ? this.pii.masker : null;
    if (masker === null) return null;
    const masked = masker.mask(payload, '');
    if (masked.report === null) return null;
    return { masked: { value: masked.value, report: masked.report }, masking: { payload: masked.value, text: (message) => masker.maskText(message, new Map()) } };
  }

  /** The masker and boundaries of one guarded call: the profile's, plus what the call asks for. */
  forCall(options: Pick<ToolOptions, 'middleware'>): SessionPii | null {
    const asked = options.middleware;
    if (asked === undefined || asked.length === 0) return this.pii;
    if (!Array.isArray(asked) || asked.some((op) => !(MIDDLEWARE_OPS as readonly string[]).includes(op))) {
      throw new InvalidOptionError('middleware', asked, `a list of ${MIDDLEWARE_OPS.join(', ')}`);
    }
    const masker = this.pii?.masker ?? (this.callMasker ??= new PiiMasker('mask', PII_ENTITIES));
    return { masker, boundaries: new Set([...(this.pii?.boundaries ?? []), ...CALL_BOUNDARIES]) };
  }

  /**
   * Runs `recordIt` (which records a masked payload) and then `middleware.applied` for it. When
   * policy stops the event, the masked payload went into the denial or approval request instead,
   * and that is the event the record points at.
   */
  recordMasked(report: PiiReport, boundary: PiiBoundary, stepId: string | null, tool: string | null, recordIt: () => RecordedEvent): RecordedEvent {
    let event: RecordedEvent;
    try {
      event = recordIt();
    } catch (error) {
      if (error instanceof PolicyDeniedError || error instanceof ApprovalRequiredError) this.applied(report, boundary, error.data?.event_id ?? null, stepId, tool);
      throw error;
    }
    this.applied(report, boundary, event.event_id, stepId, tool);
    return event;
  }

  /** Records one application of `pii_mask` that changed something. */
  applied(report: PiiReport, boundary: PiiBoundary, forEvent: string | null, stepId: string | null, tool: string | null): void {
    const strategy = (this.pii?.masker ?? this.callMasker)?.strategy ?? 'mask';
    this.record(
      'middleware.applied',
      { op: 'pii_mask', strategy, boundary, entities_detected: report.entities_detected, redactions: report.redactions, fields: report.fields, for_event: forEvent, ...(tool === null ? {} : { tool }) },
      { stepId },
    );
  }

  /**
   * `sequencer.step.end` for a failed attempt. The error text is masked when the step's calls are:
   * a tool's error quotes its output, a policy message its arguments.
   */
  stepFailed(step: StepSpec, attempt: number, error: unknown): void {
    const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    const masker = this.forCall(step.middleware.length > 0 ? { middleware: step.middleware } : {});
    const boundary = (['tool.result', 'tool.args'] as const).find((b) => masker?.boundaries.has(b) === true) ?? null;
    const masked = masker === null || boundary === null ? null : masker.masker.mask({ error: text }, '');
    const end = this.record('sequencer.step.end', { status: 'error', attempt, error: masked?.value.error ?? text }, { stepId: step.id });
    const report = masked?.report ?? null;
    if (report !== null && boundary !== null) this.applied(report, boundary, end.event_id, step.id, step.tool);
  }
}
