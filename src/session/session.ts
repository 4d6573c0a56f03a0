/**
 * A session: the lifecycle of one run of an agent (reference §6). Open writes `membrane.ingress`
 * and `session.open` (and `identity.bound` when an operator is bound); each `emit` appends one
 * hash-chained event; `tool()` runs a guarded call; close writes `session.close`, then reads the
 * trail back from disk to build the summary and spans.
 *
 * `emit` is synchronous: when it returns, the line is in the kernel's hands and survives the
 * process being killed. A payload is turned into its canonical text at emit time, which is the
 * check that it is JSON, the redaction of its secrets and the copy, in one walk: changing the
 * object afterwards changes nothing recorded.
 */

import { randomBytes } from 'node:crypto';
import {
  ApprovalRequiredError,
  ExportError,
  IdentityRequiredError,
  InvalidOptionError,
  InvalidSessionIdError,
  LoopBrokenError,
  NonJsonValueError,
  PolicyDeniedError,
  SessionClosedError,
  SessionLockedError,
  TrailWriteError,
} from '../errors.js';
import { LiveExport } from '../export/live-export.js';
import type { SessionSummary } from '../export/summary.js';
import type { AuditReport } from '../audit/report.js';
import type { Conformance } from '../audit/conformance.js';
import { SessionRedactor } from '../middleware/redact.js';
import { ObserverBus, type Observer, type StopRequest } from '../observers/bus.js';
import { MIDDLEWARE_OPS, openPiiMasking, type PiiBoundary, type SessionPii } from '../middleware/middleware.js';
import { PII_ENTITIES } from '../middleware/pii-detectors.js';
import { PiiMasker, type Masked, type PiiReport } from '../middleware/pii-mask.js';
import { runSequencer, SequencerState, type SequencerResult, type SequencerRunOptions, type SequencerTools } from '../sequencer/runner.js';
import type { GateName, StepSpec } from '../sequencer/spec.js';
import { ApprovalBook, callDigest } from '../policy/approvals.js';
import { capabilitySummary } from '../policy/capabilities.js';
import { brokerSchemes, EnvSecretBroker, refScheme, type SecretBroker } from '../policy/secrets.js';
import { EscalationEngine, type EscalationHandler } from '../policy/escalations.js';
import { identityPolicy, ManualIdentityAdapter, operatorRecord, type Operator, type OperatorIdentityAdapter } from '../policy/identity.js';
import type { Decision } from '../policy/policy.js';
import { toolOf, type PolicyInput, type RuleResult } from '../policy/rules.js';
import { spectrumSummary } from '../policy/spectrum.js';
import { canonicalJson } from '../spine/canonical.js';
import { parseJsonLossless } from '../spine/json-reader.js';
import { encodeEvent } from '../spine/record.js';
import { checkpointText, KeyRing, sealText, type Signer } from '../spine/signing.js';
import { makeFolder } from '../store/fs-write.js';
import { appendSeal } from '../store/seal-log.js';
import type { ChainReport } from '../spine/verify.js';
import { parseFsyncPolicy, TrailWriter, type FsyncPolicy } from '../spine/writer.js';
import { SESSION_ID_PATTERN, sessionFiles, type SessionFiles } from '../store/session-files.js';
import { PACKAGE_NAME, VERSION } from '../version.js';
import { parseSessionMode, type Agent, type SessionMode } from './agent.js';
import { injectSecrets, withoutSecretKeys } from './egress.js';
import { isoTimestamp, randomIds, SESSION_KEY_RULE, sessionKeyOf, systemClock, type Clock, type IdSource } from './ids.js';
import { readHistory, type PastEvent, type SessionHistory } from './resume.js';
import { parseTraceparent, sessionTraceParent, type TraceParent } from './trace-context.js';

/** Options of `agent.session()`. */
export interface SessionOptions {
  /** Default: the agent's `default_mode`. */
  readonly mode?: SessionMode;
  /** Write summary and spans at close (default: config `export_on_close`, true). */
  readonly export?: boolean;
  /** When the trail is flushed to disk (default: config `fsync`, `close`). */
  readonly fsync?: FsyncPolicy;
  /** Recorded as every event's `task_id`. */
  readonly taskId?: string;
  /**
   * An opaque label the client declares for this session (`my-client-1`; 1–256 characters, no
   * control character), recorded in `session.open`: the findings channel's `session_key` scopes
   * session findings by it (SuperAuditor §7). The session id names a session too.
   */
  readonly sessionKey?: string;
  /** Resolves the profile's secret refs (default: the agent's broker, else the environment); it must declare the scheme of each. */
  readonly secretBroker?: SecretBroker;
  /** The operator running the session, as declared (recorded with method `manual`). */
  readonly operator?: Partial<Operator>;
  /** Resolves the operator instead of `operator` / the profile's `ids.operator`. */
  readonly identityAdapter?: OperatorIdentityAdapter;
  /** Require (or not) a verified operator, over the profile and config. */
  readonly requireVerifiedOperator?: boolean;
  /** Observers of this session, after the profile's presets; what they throw is recorded as `observer.error`. */
  readonly observers?: readonly Observer[];
  /** Delivers escalations (e-mail, paging); its failures are recorded, never thrown. */
  readonly escalationHandler?: EscalationHandler;
  /** Sign checkpoints and the seal with the active key in `AURA_HOME/keys` (default: when there is one). */
  readonly sign?: boolean;
  /** Id source, for tests. */
  readonly ids?: IdSource;
  /** Clock in epoch microseconds, for tests. */
  readonly clock?: Clock;
  /**
   * The W3C `traceparent` of the span this session runs under: its spans join that trace as its
   * children. Default: the active span of `@opentelemetry/api` when the app has it; null for none.
   */
  readonly traceParent?: string | null;
}

/** Options of {@link Session.attach}: one session written by many short processes in turn. */
export interface SharedSessionOptions extends SessionOptions {
  /** The session's id (`aura_sess_` + 12 hex), the same in every process. */
  readonly sessionId: string;
  /** The process whose life the session shares: it counts as open while that process runs. */
  readonly ownerPid: number;
  /** How long to wait while another process appends (default 10 s). */
  readonly waitMs?: number;
}

/** Options of {@link Session.emit}. */
export interface EmitOptions {
  readonly stepId?: string | null;
  /** The causal parent; default the previous event. */
  readonly parentId?: string;
  /** `latency_ms`, `attempt`, `skill_id`, … */
  readonly telemetry?: Readonly<Record<string, unknown>>;
}

/** Options of {@link Session.tool}. */
export interface ToolOptions {
  readonly skillId?: string;
  readonly stepId?: string;
  /** The capability the call claims (for a gated tool). */
  readonly capabilityId?: string;
  /** Middleware for this call's arguments and result beyond the profile's boundaries (`['pii_mask']`), as a sequencer step declares. */
  readonly middleware?: readonly (typeof MIDDLEWARE_OPS)[number][];
  /** The framework's id of this call (recorded as `tool_call_id`; the span's `gen_ai.tool.call.id`). */
  readonly callId?: string;
  /** The W3C `traceparent` of the caller's span: this call's span becomes its child (`aura proxy` passes the client's). */
  readonly traceParent?: string;
}

/** Tools dispatched by name through the guarded path. */
export interface ToolHost<T extends Readonly<Record<string, (liveArgs: Record<string, unknown>) => unknown>>> {
  call<K extends keyof T & string>(name: K, args: Readonly<Record<string, unknown>>, options?: ToolOptions): Promise<Awaited<ReturnType<T[K]>>>;
}

/** What `emit` recorded. */
export interface RecordedEvent {
  readonly event_id: string;
  readonly kind: string;
  readonly timestamp: string;
  readonly prev_hash: string | null;
  readonly content_hash: string;
  /** 1-based position in the trail. */
  readonly sequence: number;
}

/** What `close()` returns. */
export interface SessionResult {
  readonly session_id: string;
  readonly trace_id: string;
  readonly snapshot_hash: string;
  readonly open_snapshot_hash: string;
  readonly log_path: string;
  readonly summary: SessionSummary;
  readonly audit_report: AuditReport;
  readonly conformance: Conformance;
  /** The chain as verified from the file at close. */
  readonly chain: ChainReport;
  /** Paths written: the trail always, summary and spans when exported. */
  readonly exports: { readonly jsonl: string; readonly summary?: string; readonly otel?: string };
}

const EMPTY_OBJECT_TEXT = '{}';
// Written only by the session itself: completeness and identity must mean what they say.
const RESERVED_KINDS: ReadonlySet<string> = new Set(['membrane.ingress', 'session.open', 'session.close', 'identity.bound']);
const TOOL_KINDS: ReadonlySet<string> = new Set(['tool.call', 'action.request']);
// Distinct calls whose attempts are remembered.
const ATTEMPT_MEMORY = 4096;
// Three tries at a fresh id: a collision of 48 random bits is already unheard of.
const OPEN_ATTEMPTS = 3;
// A process appending to a shared trail holds it for milliseconds; ten seconds means it is stuck.
const SHARED_WAIT_MS = 10_000;
// Frameworks' ids are short (`call_…`, `toolu_…`); a longer one is not an id.
const MAX_CALL_ID = 256;
// What `middleware: [pii_mask]` on a call (a sequencer step) masks.
const CALL_BOUNDARIES: readonly PiiBoundary[] = ['tool.args', 'tool.result'];

/** The masking of one recorded payload: what to record instead, and how to mask rule messages about it. */
interface Masking {
  readonly payload: Readonly<Record<string, unknown>>;
  readonly text: (message: string) => string;
}

/** One session of an agent. Create it with `agent.session()`. */
export class Session implements AsyncDisposable {
  readonly id: string;
  readonly traceId: string;
  /** The span the session runs under (its spans join that trace), or null. */
  readonly traceParent: TraceParent | null;
  readonly mode: SessionMode;
  /** The snapshot hash of the declared policy, fixed at open. */
  readonly openSnapshotHash: string;
  readonly files: SessionFiles;
  /** The bound operator, if any. */
  readonly operator: Operator | null;

  private readonly writer: TrailWriter;
  /** Pushes spans to a collector as they end (config `otel.endpoint`), or null. */
  private readonly live: LiveExport | null;
  private agentIdsText: string;
  /** The agent's id as the trail records it (a shared session keeps the one its first process recorded). */
  private auraId: string;
  private readonly exportOnClose: boolean;
  private readonly taskId: string | null;
  private readonly sessionKey: string | null;
  private readonly ids: IdSource;
  private readonly clock: Clock;
  private readonly redactor = new SessionRedactor();
  private readonly approvals = new ApprovalBook(() => `req_${randomBytes(5).toString('hex')}`);
  private readonly broker: SecretBroker | null;
  private readonly escalations: EscalationEngine;
  private readonly identity: { readonly required: boolean; readonly source: string };
  private readonly attempts = new Map<string, number>();
  /** The profile's `middleware.pii_mask`, key resolved; null when the profile has none. */
  private readonly pii: SessionPii | null;
  /** The default masker of calls that ask for `pii_mask` when the profile declares none. */
  private callMasker: PiiMasker | null = null;
  private readonly sequencerState = new SequencerState();
  // Never recorded: it keeps the approval digest of a call with masked arguments from being brute-forced.
  private readonly digestSalt = randomBytes(16).toString('hex');
  private readonly signer: Signer | null;
  private readonly checkpointEvery: number;
  private sinceCheckpoint = 0;
  private pauseRequest: string | null = null;
  private readonly observers: ObserverBus | null;
  /** Set by an observer's hard alert: guarded calls are refused until its request is approved. */
  private loopStop: (StopRequest & { readonly request_id: string }) | null = null;
  private lastEventId: string | null = null;
  private headHash: string | null = null;
  /** A shared session's trail as earlier processes left it, until this process has taken it up. */
  private history: SessionHistory | null = null;
  private lastMicros = 0;
  private count = 0;
  private goalReached = false;
  private closedState = false;

  private constructor(
    readonly agent: Agent,
    options: SessionOptions,
    shared: SharedSessionOptions | null = null,
  ) {
    const { settings, paths, values } = agent.config;
    this.mode = parseSessionMode(options.mode ?? agent.profile.default_mode);
    const fsync = parseFsyncPolicy(options.fsync ?? settings.fsync);
    if (options.export !== undefined && typeof options.export !== 'boolean') throw new InvalidOptionError('export', options.export, 'true or false');
    this.exportOnClose = options.export ?? settings.export_on_close;
    this.taskId = options.taskId ?? null;
    this.sessionKey = options.sessionKey === undefined ? null : sessionKeyOf(options.sessionKey);
    if (options.sessionKey !== undefined && this.sessionKey === null) throw new InvalidOptionError('sessionKey', options.sessionKey, SESSION_KEY_RULE);
    this.ids = options.ids ?? randomIds;
    this.clock = options.clock ?? systemClock;
    const policy = agent.policy;
    const piiConfig = agent.middleware.pii_mask;
    this.broker = openBroker(options.secretBroker ?? agent.secretBroker, [...policy.capabilities.flatMap((c) => c.inject.map((t) => t.ref)), ...(piiConfig?.key == null ? [] : [piiConfig.key])]);
    this.openSnapshotHash = agent.snapshotHash();
    // Before the trail exists: a missing pseudonymization key leaves no file.
    this.pii = piiConfig === null ? null : openPiiMasking(piiConfig, this.broker, (key) => this.redactor.addSecret(key));

    // Identity is settled before the trail exists: a session refused here leaves no file.
    const sessionId = shared?.sessionId ?? this.ids.sessionId();
    if (!SESSION_ID_PATTERN.test(sessionId)) throw new InvalidSessionIdError(sessionId, "the id source must give 'aura_sess_' + 12 lowercase hex");
    const adapter = options.identityAdapter ?? new ManualIdentityAdapter(options.operator);
    this.operator = adapter.resolve({ session_id: sessionId, aura_id: agent.auraId, agent_ref: agent.ref, profile_ids: agent.profile.ids });
    this.identity = identityPolicy(options.requireVerifiedOperator, policy.spectrum, values['identity_required'] === true);
    if (this.identity.required && this.operator === null) throw new IdentityRequiredError('no_verified_operator', this.identity.source);
    if (this.identity.required && this.operator?.verified !== true) throw new IdentityRequiredError('operator_not_verified', this.identity.source);

    // Before the trail exists, like identity: a refused observer leaves no file.
    const observers = [...policy.observers.specs.map((spec) => spec.create()), ...(options.observers ?? [])];
    this.observers =
      observers.length === 0
        ? null
        : new ObserverBus(observers, { emit: (kind, payload) => this.emit(kind, payload), stop: (request) => this.stopAtLoop(request), now: () => Math.max(this.clock(), this.lastMicros) });
    this.signer = options.sign === false ? null : KeyRing.load(paths.keys).signer();
    // A shared session's spans are built at close, from the whole trail: no process sees all of it live.
    this.live = shared === null ? LiveExport.fromSettings(settings.otel) : null;
    this.checkpointEvery = settings.checkpoint_every;
    this.agentIdsText = canonicalJson(agent.trailer(), 'agent_ids');
    this.auraId = agent.profile.aura_id;
    try {
      makeFolder(paths.sessions);
    } catch (error) {
      throw new TrailWriteError(paths.sessions, error);
    }
    const opened = shared === null ? openTrail(paths.sessions, sessionId, this.ids, fsync) : attachTrail(paths.sessions, shared, fsync);
    this.id = opened.files.sessionId;
    this.files = opened.files;
    this.writer = opened.writer;
    if (opened.writer.shared?.existed === true) {
      try {
        this.history = readHistory(this.files.trail, this.id);
      } catch (error) {
        // An ended session keeps no lease; one whose trail cannot be read stays as it was.
        if (error instanceof SessionClosedError) this.writer.close();
        else this.writer.abandon();
        throw error;
      }
    }
    this.traceParent = this.history === null ? sessionTraceParent(options.traceParent) : this.history.traceParent;
    this.traceId = this.history?.last.trace_id ?? this.traceParent?.trace_id ?? this.ids.traceId();
    this.escalations = new EscalationEngine(policy.escalations, policy.level, options.escalationHandler, {
      record: (kind, payload) => this.record(kind, payload, {}).event_id,
      pause: (requestId) => {
        this.approvals.request(`pause:${requestId}`, '*', requestId);
        this.pauseRequest = requestId;
      },
      newRequestId: (prefix) => `${prefix}${randomBytes(5).toString('hex')}`,
    });
  }

  /** Opens a session of `agent`: creates its trail and records `membrane.ingress` and `session.open`. */
  static open(agent: Agent, options: SessionOptions = {}): Session {
    const session = new Session(agent, options);
    try {
      session.recordOpen();
    } catch (error) {
      session.closedState = true;
      session.writer.abandon();
      throw error;
    }
    return session;
  }

  /**
   * Opens or takes up a session that many short processes write in turn (the hooks of a Claude
   * Code session): the first creates its trail and records its open; each later one waits for the
   * trail's append lock, takes the chain head from the trail, and rebuilds what the session knows
   * (approvals, an observer's stop, the observers' windows) by handing the recorded events out
   * again. End each process's share with {@link Session.detach}, and the session with `close()`.
   * @throws SessionLockedError (another process keeps appending; an unshared writer holds it),
   *   SessionClosedError (it has ended), ReadError (a line of it is not a record), and what `agent.session()` throws
   */
  static attach(agent: Agent, options: SharedSessionOptions): Session {
    const session = new Session(agent, options, options);
    try {
      if (session.history === null) session.recordOpen();
      else session.takeUp(session.history);
    } catch (error) {
      session.closedState = true;
      session.writer.abandon();
      throw error;
    } finally {
      session.history = null;
    }
    return session;
  }

  /**
   * Lets the next process of a shared session take it up: flushes the trail and releases it
   * without closing the session. On a session of one process, nothing more may be recorded after.
   */
  detach(): void {
    this.assertOpen('detach');
    this.closedState = true;
    this.writer.detach();
  }

  /** True once `close()` was called. */
  get closed(): boolean {
    return this.closedState;
  }

  /** Events recorded so far. */
  get eventCount(): number {
    return this.count;
  }

  /** The observer stop in force, or null: until its request is approved, guarded calls throw {@link LoopBrokenError}. */
  get stoppedBy(): (StopRequest & { readonly request_id: string }) | null {
    return this.loopStop;
  }

  /**
   * Records one event. Tool calls, model calls and turn ends go through policy first: a denial is
   * recorded as `constraint.violated` and thrown as {@link PolicyDeniedError}; a call that needs
   * approval as `constraint.approval_required` and {@link ApprovalRequiredError}.
   * @param kind a dotted name such as `turn.start`.
   * @param payload a plain JSON object; copied now, secret-like keys redacted.
   * @throws SessionClosedError, NonJsonValueError (nothing written), TrailWriteError (nothing recorded),
   *   PolicyDeniedError, ApprovalRequiredError, LoopBrokenError (a tool call after an observer stopped the session)
   */
  emit(kind: string, payload: Readonly<Record<string, unknown>> = {}, options: EmitOptions = {}): RecordedEvent {
    this.assertOpen(`emit ${JSON.stringify(kind)}`);
    if (RESERVED_KINDS.has(kind)) throw new InvalidOptionError('kind', kind, `a kind other than ${[...RESERVED_KINDS].join(', ')}, which the session writes itself`);
    return this.recordEmitted(kind, payload, options);
  }

  /** A payload from the host: masked first when the profile puts `pii_mask` on the `emit` boundary, then policy, then the trail. */
  private recordEmitted(kind: string, payload: Readonly<Record<string, unknown>>, options: EmitOptions): RecordedEvent {
    // A session stopped by an observer holds every tool call, whatever the policy says.
    const guarded = this.agent.policy.applies(kind) || (this.loopStop !== null && TOOL_KINDS.has(kind));
    const masker = this.pii?.boundaries.has('emit') === true ? this.pii.masker : null;
    const masked = masker?.mask(payload, '') ?? null;
    if (masker === null || masked === null || masked.report === null) return guarded ? this.enforce(kind, payload, options).event : this.record(kind, payload, options);
    const masking: Masking = { payload: masked.value, text: (message) => masker.maskText(message, new Map()) };
    return this.recordMasked(masked.report, 'emit', options.stepId ?? null, null, () =>
      guarded ? this.enforce(kind, payload, options, masking).event : this.record(kind, masked.value, options),
    );
  }

  /**
   * A guarded tool call: `tool.intent` → policy → `tool.call` → `fn(liveArgs)` → `tool.result`
   * (or `tool.error`). A denied call, or one waiting for approval, never runs `fn`. Secrets of the
   * claimed capability are injected into the live arguments only, and scrubbed from the record.
   * @returns what `fn` returned.
   * @throws PolicyDeniedError, ApprovalRequiredError, LoopBrokenError, SecretNotFoundError, or what `fn` threw (recorded as `tool.error`)
   */
  async tool<R>(name: string, args: Readonly<Record<string, unknown>>, fn: (liveArgs: Record<string, unknown>) => R | Promise<R>, options: ToolOptions = {}): Promise<R> {
    this.assertOpen(`call ${JSON.stringify(name)}`);
    if (typeof name !== 'string' || name === '') throw new InvalidOptionError('tool', name, 'a non-empty tool name');
    const masker = this.maskerFor(options);
    const maskedArgs = masker?.boundaries.has('tool.args') === true ? masker.masker.mask(args, 'args') : null;
    // The policy sees the call as made; the record holds the masked arguments.
    const raw: Record<string, unknown> = { tool: name, skill_id: options.skillId ?? null, args };
    if (options.capabilityId !== undefined) raw['capability_id'] = options.capabilityId;
    if (options.stepId !== undefined) raw['step_id'] = options.stepId;
    if (options.callId !== undefined) raw['tool_call_id'] = callIdOf(options.callId);
    const argsReport = maskedArgs?.report ?? null;
    const base: Record<string, unknown> = maskedArgs === null || argsReport === null ? raw : { ...raw, args: maskedArgs.value };
    const maskingOf = (recorded: Record<string, unknown>): Masking | undefined => (masker === null ? undefined : { payload: recorded, text: (message) => masker.masker.maskText(message, new Map()) });
    const emitOptions: EmitOptions = options.stepId === undefined ? {} : { stepId: options.stepId };
    const traceParent = options.traceParent === undefined ? {} : { trace_parent: parseTraceparent(options.traceParent, 'traceParent') };
    const intent = this.record('tool.intent', { ...base, ...traceParent, membrane: 'egress' }, emitOptions);
    if (argsReport !== null) this.applied(argsReport, 'tool.args', intent.event_id, options.stepId ?? null, name);
    // Attempts of the same call (same tool, same canonical args); the digest itself is only needed for approvals.
    const sameCall = `${name}\u0000${canonicalJson(args, 'args')}`;
    const attempt = (this.attempts.get(sameCall) ?? 0) + 1;
    // Retries come close together; a long session's distinct calls must not grow this without end.
    if (this.attempts.size >= ATTEMPT_MEMORY) this.attempts.clear();
    this.attempts.set(sameCall, attempt);
    const { decision } = this.enforce('tool.call', raw, { ...emitOptions, telemetry: { attempt } }, maskingOf(base));

    const live = withoutSecretKeys(args) as Record<string, unknown>;
    const capability = this.agent.policy.capabilityFor(decision);
    if (capability !== null && capability.inject.length > 0) {
      try {
        const injected = await injectSecrets(capability, this.broker, live, (value) => this.redactor.addSecret(value));
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
      if (failureReport !== null) this.applied(failureReport, 'tool.result', errorEvent.event_id, options.stepId ?? null, name);
      throw error;
    }
    const telemetry = { attempt, latency_ms: elapsed(started) };
    const maskedResult: Masked<R> | null = masker?.boundaries.has('tool.result') === true ? masker.masker.mask(result, 'result') : null;
    const rawResult = { ...raw, result };
    const resultReport = maskedResult?.report ?? null;
    if (maskedResult === null || resultReport === null) {
      this.enforce('tool.result', rawResult, { ...emitOptions, telemetry }, maskingOf({ ...base, result }));
      return result;
    }
    const recorded = { ...base, result: maskedResult.value };
    this.recordMasked(resultReport, 'tool.result', options.stepId ?? null, name, () => this.enforce('tool.result', rawResult, { ...emitOptions, telemetry }, maskingOf(recorded)).event);
    // What the caller (the model's side) gets is what was recorded: it never sees the raw value.
    return maskedResult.value;
  }

  /**
   * Runs the profile's sequencer (reference §16) with these tools: each step in declared order,
   * tool and skill steps through {@link Session.tool} with their `step_id`. A gate that needs
   * approval records `constraint.approval_required` and throws {@link ApprovalRequiredError};
   * after `approve()`, calling this again resumes from that step (completed steps do not run again).
   * @throws InvalidOptionError (no sequencer declared, or a tool missing from `tools`), ApprovalRequiredError, or the error of a step that failed every attempt
   */
  async runSequencer(tools: SequencerTools, options: SequencerRunOptions = {}): Promise<SequencerResult> {
    this.assertOpen('run the sequencer');
    const spec = this.agent.sequencer;
    if (spec === null || spec.steps.length === 0) throw new InvalidOptionError('sequencer', null, 'a profile that declares sequencer.steps');
    return runSequencer(spec, this.sequencerState, {
      record: (kind, payload, stepId) => this.record(kind, payload, { stepId }),
      tool: (name, args, fn, toolOptions) => this.tool(name, args, fn, toolOptions),
      gate: (step, gate) => this.gate(step, gate),
      stepFailed: (step, attempt, error) => this.stepFailed(step, attempt, error),
    }, tools, options);
  }

  /**
   * A host adapter: the given tools, each called through {@link Session.tool}, so a host that
   * dispatches by name gets the same guarded path.
   */
  host<T extends Readonly<Record<string, (liveArgs: Record<string, unknown>) => unknown>>>(tools: T, options: Omit<ToolOptions, 'capabilityId'> = {}): ToolHost<T> {
    const call = async <K extends keyof T & string>(name: K, args: Readonly<Record<string, unknown>>, callOptions: ToolOptions = {}): Promise<Awaited<ReturnType<T[K]>>> => {
      const fn = Object.hasOwn(tools, name) ? tools[name] : undefined;
      if (fn === undefined) throw new InvalidOptionError('tool', name, `one of the host's tools: ${Object.keys(tools).join(', ')}`);
      return (await this.tool(name, args, fn, { ...options, ...callOptions })) as Awaited<ReturnType<T[K]>>;
    };
    return { call };
  }

  /** Records that the session's goal was reached (`task.complete`). */
  completeGoal(result: Readonly<Record<string, unknown>> = {}): RecordedEvent {
    this.assertOpen('complete the goal');
    const event = this.recordEmitted('task.complete', result, {});
    this.goalReached = true;
    return event;
  }

  /**
   * Approves the pending request that holds exactly this call (same tool, same arguments), when a
   * host's own approval step released it (Claude Code's permission prompt).
   * @returns what {@link Session.approve} recorded, or null when no pending request holds this call
   */
  approveCall(tool: string, args: Readonly<Record<string, unknown>>, options: { readonly principal?: string } = {}): RecordedEvent | null {
    this.assertOpen(`approve a call of ${JSON.stringify(tool)}`);
    // The salted digest is the one a call with masked arguments was held under.
    for (const digest of [callDigest(this.id, tool, args), callDigest(this.id, tool, args, this.digestSalt)]) {
      const request = this.approvals.open(digest);
      if (request?.state === 'pending') return this.approve(request.request_id, options);
    }
    return null;
  }

  /**
   * Approves a pending request (`constraint.approved`). The next call with exactly the arguments
   * of the request goes through, once.
   * @throws ApprovalError for a request never made, already approved or already used
   */
  approve(requestId: string, options: { readonly principal?: string } = {}): RecordedEvent {
    this.assertOpen(`approve ${JSON.stringify(requestId)}`);
    if (typeof requestId !== 'string' || requestId === '') throw new InvalidOptionError('request_id', requestId, 'a non-empty string');
    const principal = options.principal ?? this.operator?.subject ?? null;
    const request = this.approvals.approve(requestId, principal);
    return this.record('constraint.approved', { request_id: requestId, principal, tool: request.tool, digest: request.digest }, {});
  }

  /**
   * Closes the session: records `session.close`, flushes and releases the trail, verifies it from
   * disk and builds (and, unless `export: false`, writes) the summary and spans.
   * @throws SessionClosedError on a second close; TrailWriteError; ExportError (the trail is kept whole)
   */
  // async so that every failure, even one before the first await, is a rejection.
  async close(options: { readonly reason?: string } = {}): Promise<SessionResult> {
    this.assertOpen('close it again');
    // Observers' last words (a summary, a missed deadline) belong inside the session.
    this.observers?.close();
    this.closedState = true;
    const reason = options.reason ?? 'normal';
    try {
      // One write for both: a crash between them would leave a signed session closed but not signed to its end.
      this.writer.together(() => {
        this.record('session.close', { reason, goal_reached: this.goalReached }, {});
        // The final checkpoint covers session.close (unless the cadence just wrote one).
        if (this.signer !== null && this.sinceCheckpoint > 0) this.checkpoint(this.signer);
      });
    } finally {
      this.writer.close();
    }
    const otel = this.live === null ? undefined : await this.live.close();
    const { paths } = this.agent.config;
    const signer = this.signer;
    // Loaded at close only: the audit and the exporters are most of what a session's modules weigh,
    // and a short process that only appends (a Claude Code hook) never needs them.
    const { exportSession } = await import('../export/session-export.js');
    const exported = exportSession(this.files, this.exportOnClose, {
      exportPii: this.agent.config.values['identity_export_pii'] === true,
      spans: { captureToolContent: this.agent.config.settings.otel.capture_tool_content },
      ...(otel === undefined ? {} : { live: otel }),
      seal: (extent) => {
        const unsigned = { session_id: this.id, ...extent };
        return { ...unsigned, key_id: signer?.keyId ?? null, signature: signer === null ? null : signer.sign(sealText(unsigned)) };
      },
      // The seal is logged before the summary is committed: a failed export still leaves the seal.
      beforeCommit: (summary) => {
        if (summary.seal === null) return;
        for (const log of [paths.sealLog, paths.anchorLog]) {
          if (log === null) continue;
          try {
            appendSeal(log, summary.seal, signer);
          } catch (error) {
            throw new ExportError(this.id, log, error instanceof TrailWriteError ? error.cause : error);
          }
        }
      },
    });
    return {
      session_id: this.id,
      trace_id: this.traceId,
      snapshot_hash: this.openSnapshotHash,
      open_snapshot_hash: this.openSnapshotHash,
      log_path: this.files.trail,
      summary: exported.summary,
      audit_report: exported.summary.audit_report,
      conformance: exported.summary.conformance,
      chain: exported.trail.chain,
      exports: exported.written === null ? { jsonl: this.files.trail } : { jsonl: this.files.trail, ...exported.written },
    };
  }

  /** `await using run = agent.session()` closes the session at the end of the block (once). */
  async [Symbol.asyncDispose](): Promise<void> {
    if (!this.closedState) await this.close();
  }

  private assertOpen(action: string): void {
    if (this.closedState) throw new SessionClosedError(this.id, action);
  }

  /** The masker and boundaries of one guarded call: the profile's, plus what the call asks for. */
  private maskerFor(options: ToolOptions): SessionPii | null {
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
  private recordMasked(report: PiiReport, boundary: PiiBoundary, stepId: string | null, tool: string | null, recordIt: () => RecordedEvent): RecordedEvent {
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

  /** Records one application of `pii_mask` that changed something: types, counts and paths, never a value. */
  private applied(report: PiiReport, boundary: PiiBoundary, forEvent: string | null, stepId: string | null, tool: string | null): void {
    const strategy = (this.pii?.masker ?? this.callMasker)?.strategy ?? 'mask';
    this.record(
      'middleware.applied',
      { op: 'pii_mask', strategy, boundary, entities_detected: report.entities_detected, redactions: report.redactions, fields: report.fields, for_event: forEvent, ...(tool === null ? {} : { tool }) },
      { stepId },
    );
  }

  /** A sequencer gate (reference §16.4): an approved request for this step releases it, once. */
  private gate(step: StepSpec, gate: GateName): void {
    const digest = callDigest(this.id, `sequencer.gate.${gate}`, { step_id: step.id });
    const open = this.approvals.open(digest);
    if (open?.state === 'approved') {
      this.approvals.use(open);
      return;
    }
    const requestId = `sequencer.gate.${step.id}`;
    const request = open ?? this.approvals.request(digest, requestId, requestId);
    const required = this.record(
      'constraint.approval_required',
      { request_id: request.request_id, message: `Step ${step.id} needs ${gate} before it runs`, rule: { type: gate, step_id: step.id }, digest },
      { stepId: step.id },
    );
    throw new ApprovalRequiredError(`step ${step.id}`, request.request_id, digest, required.event_id);
  }

  /**
   * `sequencer.step.end` for a failed attempt. The error text is masked when the step's calls are:
   * a tool's error quotes its output, a policy message its arguments.
   */
  private stepFailed(step: StepSpec, attempt: number, error: unknown): void {
    const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    const masker = this.maskerFor(step.middleware.length > 0 ? { middleware: step.middleware } : {});
    const boundary = (['tool.result', 'tool.args'] as const).find((b) => masker?.boundaries.has(b) === true) ?? null;
    const masked = masker === null || boundary === null ? null : masker.masker.mask({ error: text }, '');
    const end = this.record('sequencer.step.end', { status: 'error', attempt, error: masked?.value.error ?? text }, { stepId: step.id });
    const report = masked?.report ?? null;
    if (report !== null && boundary !== null) this.applied(report, boundary, end.event_id, step.id, step.tool);
  }

  private recordOpen(): void {
    const p = this.agent.profile;
    const policy = this.agent.policy;
    const spectrum = spectrumSummary(policy.spectrum, { enforcementRuleCount: policy.autoRuleCount, identity: this.identity, activation: policy.observers.activation });
    const schemaRules = policy.rules.filter((rule) => rule.type === 'schema_check').length;
    const openSpectrum: Record<string, unknown> = { ...spectrum };
    if (policy.escalations.length > 0) {
      openSpectrum['escalations'] = { rule_count: policy.escalations.length, triggers: [...new Set(policy.escalations.map((e) => e.on))].sort(), destructive_requires_spectrum: 'mid|high|full' };
    }
    if (policy.capabilities.length > 0) {
      openSpectrum['capabilities'] = { ...capabilitySummary(policy.capabilities), broker: this.broker === null ? 'none' : this.broker.constructor.name, audit_only: policy.level === 'low' };
    }
    if (policy.schemaRefCount > 0 || schemaRules > 0) {
      openSpectrum['schema'] = { refs: policy.schemaRefCount, active_rules: schemaRules, auto_enforced: policy.rules.some((r) => r.type === 'schema_check' && r.declared['source'] === 'spectrum') };
    }
    this.record(
      'membrane.ingress',
      {
        membrane: 'ingress',
        mode: this.mode,
        snapshot_hash: this.openSnapshotHash,
        context: { aura_id: p.aura_id, agent_ref: p.agent_ref, name: p.name, purpose: p.purpose, policy_version: p.policy_version, ids: p.ids, variables: p.variables, skills: p.skills },
        skills: p.skills,
        observers: this.observers?.attached ?? [],
        agent_ref: p.agent_ref,
        policy_version: p.policy_version,
        spectrum: { level: spectrum['level'], coat: spectrum['coat'], services: spectrum['services'], planes: spectrum['planes'] },
      },
      {},
    );
    this.record(
      'session.open',
      {
        mode: this.mode,
        snapshot_hash: this.openSnapshotHash,
        ...(this.sessionKey === null ? {} : { session_key: this.sessionKey }),
        purpose: p.purpose,
        policy_version: p.policy_version,
        agent_ref: p.agent_ref,
        declared_rules: policy.declaredRules,
        ...(p.sequencer === null ? {} : { sequencer: p.sequencer }),
        ...(this.agent.middleware.pii_mask === null ? {} : { middleware: { pii_mask: this.agent.middleware.pii_mask } }),
        default_tool_policy: policy.defaultToolPolicy,
        spectrum: openSpectrum,
        ...(this.signer === null ? {} : { signing: { key_id: this.signer.keyId, checkpoint_every: this.checkpointEvery } }),
        ...(this.traceParent === null ? {} : { trace_parent: this.traceParent }),
        harness: { name: PACKAGE_NAME, version: VERSION },
      },
      {},
    );
    if (this.operator !== null) {
      const operator = operatorRecord(this.operator);
      this.record('identity.bound', { operator }, {});
      // Later events carry the operator in their identity trailer (reference §5.4).
      const trailer = this.agent.trailer();
      const ids = { ...(trailer['ids'] as Record<string, unknown> | undefined), operator };
      this.agentIdsText = canonicalJson({ ...trailer, ids }, 'agent_ids');
    }
  }

  /**
   * The policy path of one event (reference §6.4): denial or approval before anything is
   * recorded; audit-only denials, then the event, then the rules that passed. A result is
   * recorded first and checked after, because the tool has already run.
   */
  private enforce(kind: string, payload: Readonly<Record<string, unknown>>, options: EmitOptions, masking?: Masking): { event: RecordedEvent; decision: Decision } {
    const tool = toolOf(payload);
    const skillId = typeof payload['skill_id'] === 'string' ? payload['skill_id'] : null;
    const input: PolicyInput = { kind, payload, tool, skillId };
    // With PII masking, policy decides on the payload as given; what is recorded is masked, rule messages too.
    const shown = masking?.payload ?? payload;
    if (this.loopStop !== null && TOOL_KINDS.has(kind)) this.holdAtLoop(this.loopStop, kind, shown, tool ?? skillId ?? '(no tool)');
    const decision = this.agent.policy.decide(input);
    const say = masking?.text ?? ((message: string) => message);
    const afterTheFact = kind === 'tool.result';
    let event: RecordedEvent | null = afterTheFact ? this.record(kind, shown, options) : null;
    if (decision.denied !== null) this.deny(decision.denied, kind, shown, tool ?? skillId ?? '(no tool)', say);
    const passed: RuleResult[] = [...decision.passed];
    let recorded: Record<string, unknown> = shown;
    if (TOOL_KINDS.has(kind)) {
      const release = this.release(decision, kind, payload, tool ?? skillId ?? '(no tool)', shown);
      if (release !== null) {
        passed.push(release.result);
        recorded = { ...shown, principal: release.principal, approval: { request_id: release.request_id, principal: release.principal } };
      }
    }
    for (const audit of decision.audits) this.record('constraint.violated', { message: say(audit.message), rule: audit.rule, event: { kind, payload: shown }, audit_only: true }, {});
    event ??= this.record(kind, recorded, options);
    if (passed.length > 0) {
      this.record('constraint.passed', { results: passed.map((r) => ({ passed: true, message: say(r.message), rule: r.rule, audit_only: false })), for_event: event.event_id }, {});
    }
    return { event, decision };
  }

  private deny(result: RuleResult, kind: string, payload: Readonly<Record<string, unknown>>, tool: string, say: (message: string) => string): never {
    const violation = this.record('constraint.violated', { message: say(result.message), rule: result.rule, event: { kind, payload }, audit_only: false }, {});
    throw new PolicyDeniedError(result.message, { tool, rule: result.rule, rule_type: String(result.rule['type']), event_id: violation.event_id });
  }

  /**
   * Approval of a tool call: a paused session, or a `confirm_before` rule, needs an approved
   * request for exactly this call. Returns the release, or null when no approval is needed.
   * @throws ApprovalRequiredError after recording the request
   */
  private release(decision: Decision, kind: string, payload: Readonly<Record<string, unknown>>, tool: string, shown: Readonly<Record<string, unknown>>): { result: RuleResult; principal: string | null; request_id: string } | null {
    if (this.pauseRequest !== null) {
      const pause = this.approvals.open(`pause:${this.pauseRequest}`);
      if (pause?.state === 'approved') {
        this.approvals.use(pause);
        this.pauseRequest = null;
      } else {
        const rule = { type: 'escalation_pause', request_id: this.pauseRequest, source: 'escalation' };
        const required = this.record('constraint.approval_required', { request_id: this.pauseRequest, message: 'Session paused by an escalation: approve to resume', rule, pending_event: { kind, payload: shown } }, {});
        throw new ApprovalRequiredError(tool, this.pauseRequest, `pause:${this.pauseRequest}`, required.event_id);
      }
    }
    if (decision.approval === null) return null;
    const digest = callDigest(this.id, tool, payload['args'], shown['args'] === payload['args'] ? undefined : this.digestSalt);
    const open = this.approvals.open(digest);
    if (open?.state === 'approved') {
      this.approvals.use(open);
      const by = open.principal ?? 'unknown principal';
      return { result: { rule: decision.approval.rule, outcome: 'pass', message: `approved by ${by}: ${tool}`, audit_only: false }, principal: open.principal, request_id: open.request_id };
    }
    const request = open ?? this.approvals.request(digest, tool);
    const required = this.record(
      'constraint.approval_required',
      { request_id: request.request_id, message: decision.approval.message, rule: decision.approval.rule, digest, pending_event: { kind, payload: shown } },
      {},
    );
    throw new ApprovalRequiredError(tool, request.request_id, digest, required.event_id);
  }

  /**
   * Takes up a shared session where earlier processes left it: the chain head, then the
   * approvals, stops and observers' windows rebuilt from the recorded events, in order.
   */
  private takeUp(history: SessionHistory): void {
    const { last, events } = history;
    this.count = events.length;
    this.headHash = last.content_hash;
    this.lastEventId = last.event_id;
    this.lastMicros = last.micros;
    this.agentIdsText = canonicalJson(last.agent_ids, 'agent_ids');
    // Two first hooks of a new agent can register it with two ids: the trail's first one stands.
    this.auraId = last.aura_id;
    const checkpoint = events.findLastIndex((event) => event.kind === 'chain.checkpoint');
    this.sinceCheckpoint = events.length - 1 - checkpoint;
    // A stop whose request a refused call recorded keeps that request id.
    const stopRequests = new Map<string, string>();
    for (const event of events) {
      const rule = event.kind === 'constraint.violated' ? (event.payload['rule'] as Record<string, unknown> | undefined) : undefined;
      if (rule?.['type'] === 'observer_break' && typeof rule['alert_event_id'] === 'string' && typeof rule['request_id'] === 'string') stopRequests.set(rule['alert_event_id'], rule['request_id']);
    }
    const stop = (request: StopRequest): string => this.stopAtLoop(request, stopRequests.get(request.alert_event_id));
    if (this.observers === null) for (const event of events) this.replayDecision(event);
    else this.observers.replay(events, stop, (event) => this.replayDecision(event));
  }

  /** What one recorded event tells of approvals: requests, approvals, a call that used one. */
  private replayDecision(event: PastEvent): void {
    const p = event.payload;
    const requestId = typeof p['request_id'] === 'string' ? p['request_id'] : null;
    if (event.kind === 'task.complete') this.goalReached = true;
    else if (event.kind === 'constraint.approval_required' && requestId !== null && typeof p['digest'] === 'string' && this.approvals.byId(requestId) === undefined) {
      const pending = (p['pending_event'] as { payload?: { tool?: unknown } } | undefined)?.payload?.tool;
      this.approvals.request(p['digest'], typeof pending === 'string' ? pending : '*', requestId);
    } else if (event.kind === 'constraint.approved' && requestId !== null && this.approvals.byId(requestId)?.state === 'pending') {
      this.approvals.approve(requestId, typeof p['principal'] === 'string' ? p['principal'] : null);
    } else if (TOOL_KINDS.has(event.kind)) {
      const used = (p['approval'] as { request_id?: unknown } | undefined)?.request_id;
      const request = typeof used === 'string' ? this.approvals.byId(used) : undefined;
      if (request !== undefined) this.approvals.use(request);
      const stopped = this.loopStop === null ? undefined : this.approvals.byId(this.loopStop.request_id);
      if (stopped?.state === 'approved') {
        this.approvals.use(stopped);
        this.loopStop = null;
      }
    }
  }

  /** Stops the session at an observer's hard alert (one stop at a time: a second alert keeps the first request). */
  private stopAtLoop(request: StopRequest, knownRequestId?: string): string {
    if (this.loopStop !== null) return this.loopStop.request_id;
    const requestId = knownRequestId ?? `loop_${randomBytes(5).toString('hex')}`;
    this.approvals.request(`loop:${requestId}`, '*', requestId);
    this.loopStop = { ...request, request_id: requestId };
    return requestId;
  }

  /**
   * A tool call while an observer has stopped the session: released once the stop's request is
   * approved, else recorded as `constraint.violated` (rule `observer_break`) and refused.
   * @throws LoopBrokenError
   */
  private holdAtLoop(stop: StopRequest & { readonly request_id: string }, kind: string, payload: Readonly<Record<string, unknown>>, tool: string): void {
    const approval = this.approvals.open(`loop:${stop.request_id}`);
    if (approval?.state === 'approved') {
      this.approvals.use(approval);
      this.loopStop = null;
      return;
    }
    const rule = { type: 'observer_break', pattern: stop.pattern, observer_id: stop.observer_id, alert_event_id: stop.alert_event_id, request_id: stop.request_id };
    const message = `Session stopped by observer ${stop.observer_id} at ${stop.pattern}: approve ${stop.request_id} to resume`;
    const violation = this.record('constraint.violated', { message, rule, event: { kind, payload }, audit_only: false }, {});
    throw new LoopBrokenError({ tool, pattern: stop.pattern, observer_id: stop.observer_id, alert_event_id: stop.alert_event_id, event_id: violation.event_id, request_id: stop.request_id });
  }

  /** Appends one event: canonical text (redacted), hash, one write; then observers and escalations. */
  private record(kind: string, payload: Readonly<Record<string, unknown>>, options: EmitOptions): RecordedEvent {
    if (typeof kind !== 'string' || kind === '') throw new InvalidOptionError('kind', kind, 'a non-empty string such as "tool.call"');
    if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) {
      throw new NonJsonValueError(`payload of ${kind} must be a plain object`, { path: 'payload', reason: 'not_plain' });
    }
    const givenStep = options.stepId ?? null;
    if (givenStep !== null && typeof givenStep !== 'string') throw new InvalidOptionError('stepId', givenStep, 'a string or null');
    // Every string the caller gives is recorded through the redactor, ids included.
    const redactor = this.redactor;
    const stepId = givenStep === null ? null : redactor.scrub(givenStep);
    const recordedKind = redactor.scrub(kind);
    const payloadText = canonicalJson(payload, 'payload', { redact: this.redactor });
    const telemetryText = options.telemetry === undefined ? EMPTY_OBJECT_TEXT : canonicalJson(options.telemetry, 'telemetry', { redact: this.redactor });
    // Timestamps never go backwards within a session, even if the wall clock does.
    const micros = Math.max(this.clock(), this.lastMicros);
    const eventId = this.ids.eventId();
    const timestamp = isoTimestamp(micros);
    const encoded = encodeEvent({
      event_id: eventId,
      parent_id: options.parentId === undefined ? this.lastEventId : redactor.scrub(options.parentId),
      trace_id: this.traceId,
      span_id: null,
      step_id: stepId,
      task_id: this.taskId === null ? null : redactor.scrub(this.taskId),
      session_id: this.id,
      aura_id: this.auraId,
      agent_ids: this.agentIdsText,
      kind: recordedKind,
      timestamp,
      payload: payloadText,
      telemetry: telemetryText,
      prev_hash: this.headHash,
    });
    this.writer.append(encoded.line);
    this.live?.add(encoded.line);
    const prevHash = this.headHash;
    this.lastMicros = micros;
    this.lastEventId = eventId;
    this.headHash = encoded.content_hash;
    this.count++;
    const recorded = { event_id: eventId, kind: recordedKind, timestamp, prev_hash: prevHash, content_hash: encoded.content_hash, sequence: this.count };
    if (this.observers !== null) this.observers.publish(recorded, payloadText, micros, stepId);
    if (this.escalations.listensTo(kind)) this.escalations.onEvent(kind, eventId, parseJsonLossless(payloadText) as Record<string, unknown>);
    if (this.signer !== null && kind !== 'chain.checkpoint' && ++this.sinceCheckpoint >= this.checkpointEvery) this.checkpoint(this.signer);
    return recorded;
  }

  /** A signed checkpoint over every event so far (the evidence issue): `{count, head_hash, key_id, signature}`. */
  private checkpoint(signer: Signer): void {
    const head = this.headHash ?? '';
    this.sinceCheckpoint = 0;
    this.record('chain.checkpoint', { count: this.count, head_hash: head, key_id: signer.keyId, signature: signer.sign(checkpointText(this.id, this.count, head)) }, {});
  }
}

/**
 * The broker of a session: the one given (the session's, else the agent's), else the environment
 * when the profile names secrets, else none.
 * @throws InvalidOptionError, before anything is written, when the broker resolves no scheme of one of `refs`
 */
function openBroker(given: SecretBroker | null | undefined, refs: readonly string[]): SecretBroker | null {
  if (given === undefined || given === null) return refs.length === 0 ? null : new EnvSecretBroker();
  const schemes = brokerSchemes(given);
  const unresolved = refs.find((ref) => !schemes.includes(refScheme(ref) ?? ''));
  if (unresolved !== undefined) throw new InvalidOptionError('secretBroker', `a broker of ${schemes.map((s) => `${s}:`).join(', ')} refs`, `a broker that declares the scheme of every secret ref the profile names, ${unresolved} among them`);
  return given;
}

/** A framework's tool-call id, checked: it names the call in the trail and on its span. */
function callIdOf(value: unknown): string {
  if (typeof value !== 'string' || value === '' || value.length > MAX_CALL_ID) throw new InvalidOptionError('callId', value, `a tool-call id of 1 to ${MAX_CALL_ID} characters`);
  return value;
}

function elapsed(started: number): number {
  return Math.round((performance.now() - started) * 1000) / 1000;
}


function attachTrail(sessionsDir: string, shared: SharedSessionOptions, fsync: FsyncPolicy): { files: SessionFiles; writer: TrailWriter } {
  const files = sessionFiles(sessionsDir, shared.sessionId);
  return { files, writer: TrailWriter.attach(files.trail, files.sessionId, fsync, { ownerPid: shared.ownerPid, waitMs: shared.waitMs ?? SHARED_WAIT_MS }) };
}

function openTrail(sessionsDir: string, firstId: string, ids: IdSource, fsync: FsyncPolicy): { files: SessionFiles; writer: TrailWriter } {
  let id = firstId;
  for (let attempt = 1; ; attempt++) {
    const files = sessionFiles(sessionsDir, id);
    try {
      return { files, writer: TrailWriter.create(files.trail, files.sessionId, fsync) };
    } catch (error) {
      if (!(error instanceof SessionLockedError) || attempt >= OPEN_ATTEMPTS) throw error;
    }
    id = ids.sessionId();
    if (!SESSION_ID_PATTERN.test(id)) throw new InvalidSessionIdError(id, "the id source must give 'aura_sess_' + 12 lowercase hex");
  }
}
