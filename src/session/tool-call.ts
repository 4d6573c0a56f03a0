/**
 * A guarded tool call as a sequence of the session's stages: `tool.intent` → policy →
 * `tool.call` → the tool → `tool.result` (or `tool.error`). Secrets of the claimed capability are
 * injected into the live arguments only, and scrubbed from the record; masked arguments and results
 * are what is recorded and what the caller gets back. What the tool throws reaches the caller
 * cleaned the same way, in every field (./caller-error.ts).
 */

import { InvalidOptionError, NonJsonValueError } from '../errors.js';
import type { SessionRedactor } from '../middleware/redact.js';
import type { SessionPii } from '../middleware/middleware.js';
import type { Masked } from '../middleware/pii-mask.js';
import type { Policy } from '../policy/policy.js';
import type { SecretBroker } from '../policy/secrets.js';
import { canonicalJson } from '../spine/canonical.js';
import { callerCopy } from './caller-error.js';
import { injectSecrets, withoutSecretKeys } from './egress.js';
import type { PolicyGate } from './enforce.js';
import type { MaskStage } from './mask.js';
import { parseTraceparent } from './trace-context.js';
import type { EmitOptions, Masking, RecordFn, ToolOptions } from './types.js';

// Distinct calls whose attempts are remembered.
const ATTEMPT_MEMORY = 4096;
// Frameworks' ids are short (`call_…`, `toolu_…`); a longer one is not an id.
const MAX_CALL_ID = 256;

export class ToolCalls {
  private readonly attempts = new Map<string, number>();
  /** A secret was injected into a call: a tool may hold it from then on (a client it configured), and throw it in any call. */
  private injected = false;

  constructor(
    private readonly record: RecordFn,
    private readonly gate: PolicyGate,
    private readonly mask: MaskStage,
    private readonly policy: Policy,
    private readonly broker: SecretBroker | null,
    private readonly redactor: SessionRedactor,
  ) {}

  /**
   * Runs `fn` through the guarded path.
   * @returns what `fn` returned (masked when results are).
   * @throws PolicyDeniedError, ApprovalRequiredError, LoopBrokenError, SecretNotFoundError, or what `fn` threw (recorded as `tool.error`; cleaned of injected secrets and masked personal data)
   */
  async call<R>(name: string, args: Readonly<Record<string, unknown>>, fn: (liveArgs: Record<string, unknown>) => R | Promise<R>, options: ToolOptions): Promise<R> {
    if (typeof name !== 'string' || name === '') throw new InvalidOptionError('tool', name, 'a non-empty tool name');
    const masker = this.mask.forCall(options);
    const maskedArgs = masker?.boundaries.has('tool.args') === true ? masker.masker.mask(args, 'args') : null;
    // The policy sees the call as made; the record holds the masked arguments.
    const raw: Record<string, unknown> = { tool: name, skill_id: options.skillId ?? null, args };
    if (options.capabilityId !== undefined) raw['capability_id'] = options.capabilityId;
    if (options.stepId !== undefined) raw['step_id'] = options.stepId;
    if (options.callId !== undefined) raw['tool_call_id'] = callIdOf(options.callId);
    const argsReport = maskedArgs?.report ?? null;
    const base: Record<string, unknown> = maskedArgs === null || argsReport === null ? raw : { ...raw, args: maskedArgs.value };
    const stepId = options.stepId ?? null;
    const emitOptions: EmitOptions = options.stepId === undefined ? {} : { stepId: options.stepId };
    const traceParent = options.traceParent === undefined ? {} : { trace_parent: parseTraceparent(options.traceParent, 'traceParent') };
    const intent = this.record('tool.intent', { ...base, ...traceParent, membrane: 'egress' }, emitOptions);
    if (argsReport !== null) this.mask.applied(argsReport, 'tool.args', intent.event_id, stepId, name);
    const attempt = this.attempt(name, args);
    const { decision } = this.gate.enforce('tool.call', raw, { ...emitOptions, telemetry: { attempt } }, maskingOf(masker, base));

    const live = withoutSecretKeys(args) as Record<string, unknown>;
    const capability = this.policy.capabilityFor(decision);
    if (capability !== null && capability.inject.length > 0) {
      try {
        const injected = await injectSecrets(capability, this.broker, live, (value) => this.redactor.addSecret(value));
        this.injected = true;
        this.record('capability.injected', { capability_id: capability.id, tool: name, skill_id: options.skillId ?? null, injected }, emitOptions);
      } catch (error) {
        const ref = (error as { data?: { ref?: string } }).data?.ref ?? null;
        this.record('tool.error', { ...base, error: 'secret_broker_unresolved', secret_ref: ref, capability_id: capability.id }, { ...emitOptions, telemetry: { attempt } });
        throw error;
      }
    }

    const started = performance.now();
    let result: R;
    try {
      result = await fn(live);
    } catch (error) {
      const failure = error instanceof Error ? { name: error.name, message: error.message } : { name: 'Error', message: String(error) };
      const maskedFailure = masker?.boundaries.has('tool.result') === true ? masker.masker.mask(failure, 'error') : null;
      const errorEvent = this.record('tool.error', { ...base, error: maskedFailure?.value ?? failure }, { ...emitOptions, telemetry: { attempt, latency_ms: elapsed(started) } });
      const failureReport = maskedFailure?.report ?? null;
      if (failureReport !== null) this.mask.applied(failureReport, 'tool.result', errorEvent.event_id, stepId, name);
      throw this.failureForCaller(error, masker);
    }
    const telemetry = { attempt, latency_ms: elapsed(started) };
    const maskedResult: Masked<R> | null = masker?.boundaries.has('tool.result') === true ? masker.masker.mask(result, 'result') : null;
    const rawResult = { ...raw, result };
    const resultReport = maskedResult?.report ?? null;
    if (maskedResult === null || resultReport === null) {
      try {
        this.gate.enforce('tool.result', rawResult, { ...emitOptions, telemetry }, maskingOf(masker, { ...base, result }));
      } catch (error) {
        // The tool ran: an answer the trail cannot hold (nested too deep, a cycle) is recorded as
        // why, its checks made on that, and the caller gets the answer; a refusal here would say
        // the tool did not run, and a model would call it again.
        if (!(error instanceof NonJsonValueError)) throw error;
        const unrecorded = { not_recorded: error.message };
        this.gate.enforce('tool.result', { ...raw, result: unrecorded }, { ...emitOptions, telemetry }, maskingOf(masker, { ...base, result: unrecorded }));
        // An answer that cannot be walked whole cannot be cleared of a secret injected into this
        // call or an earlier one, which the tool (an MCP server that keeps what it was sent) may echo.
        const cleared = this.redactor.withoutInjectedWhole(result);
        if (cleared === undefined) {
          throw new NonJsonValueError(`the tool ran, but its answer is kept back: ${error.message}, so it cannot be cleared of the secrets injected into the session's calls`, error.data ?? { path: 'result', reason: 'too_deep' });
        }
        return cleared;
      }
      return this.redactor.withoutInjected(result);
    }
    const recorded = { ...base, result: maskedResult.value };
    this.mask.recordMasked(resultReport, 'tool.result', stepId, name, () => this.gate.enforce('tool.result', rawResult, { ...emitOptions, telemetry }, maskingOf(masker, recorded)).event);
    // What the caller (the model's side) gets is what was recorded: it never sees the raw value,
    // nor a secret injected into the call that the tool's answer echoes.
    return this.redactor.withoutInjected(maskedResult.value);
  }

  /**
   * What the caller gets of what a tool threw: cleaned as the tool's answer is (./caller-error.ts),
   * in every field, once the session holds a secret the tool may have written into it or the call
   * masks its results; else as thrown.
   */
  private failureForCaller(thrown: unknown, masker: SessionPii | null): unknown {
    const pii = masker?.boundaries.has('tool.result') === true ? masker.masker : null;
    if (!this.injected && pii === null) return thrown;
    return callerCopy(thrown, (text) => {
      const scrubbed = this.redactor.withoutInjected(text);
      return pii === null ? scrubbed : pii.maskText(scrubbed, new Map());
    });
  }

  /** The attempt number of this call: calls with the same tool and the same canonical arguments count up. */
  private attempt(name: string, args: Readonly<Record<string, unknown>>): number {
    const sameCall = `${name}\u0000${canonicalJson(args, 'args')}`;
    const attempt = (this.attempts.get(sameCall) ?? 0) + 1;
    // Retries come close together; a long session's distinct calls must not grow this without end.
    if (this.attempts.size >= ATTEMPT_MEMORY) this.attempts.clear();
    this.attempts.set(sameCall, attempt);
    return attempt;
  }
}

/** What policy is told of a masked call (the payload as recorded, and how to mask its rule messages); nothing when the call is not masked. */
function maskingOf(pii: SessionPii | null, recorded: Record<string, unknown>): Masking | undefined {
  return pii === null ? undefined : { payload: recorded, text: (message) => pii.masker.maskText(message, new Map()) };
}

/** A framework's tool-call id, checked: it names the call in the trail and on its span. */
function callIdOf(value: unknown): string {
  if (typeof value !== 'string' || value === '' || value.length > MAX_CALL_ID) throw new InvalidOptionError('callId', value, `a tool-call id of 1 to ${MAX_CALL_ID} characters`);
  return value;
}

function elapsed(started: number): number {
  return Math.round((performance.now() - started) * 1000) / 1000;
}
