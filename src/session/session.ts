/**
 * A session: the lifecycle of one run of an agent (reference §6). Open writes `membrane.ingress`
 * and `session.open` (and `identity.bound` when an operator is bound); each `emit` appends one
 * hash-chained event; `tool()` runs a guarded call; close writes `session.close`, then verifies the
 * trail from disk to build the summary and spans.
 *
 * The session is a composition of stages, each in its own module, that a payload passes in one
 * direction: mask (`mask.ts`) → hold and enforce (`hold.ts`, `enforce.ts`) → record: encode and
 * append (`recorder.ts`) → publish (`publish.ts`) → checkpoint (`checkpoint.ts`). What they share
 * sits below them in `types.ts`. Only observers emit back into the front, as a host would.
 *
 * `emit` is synchronous: when it returns, the line is in the kernel's hands and survives the
 * process being killed. A payload is turned into its canonical text at emit time, which is the
 * check that it is JSON, the redaction of its secrets and the copy, in one walk: changing the
 * object afterwards changes nothing recorded.
 */

import { randomBytes } from 'node:crypto';
import { IdentityRequiredError, InvalidOptionError, InvalidSessionIdError, SessionClosedError, TrailWriteError } from '../errors.js';
import { CLOSE_AHEAD_BYTES, CloseAhead } from '../export/close-ahead.js';
import { LiveExport } from '../export/live-export.js';
import { openPiiMasking } from '../middleware/middleware.js';
import { SessionRedactor, type RelayScrubber } from '../middleware/redact.js';
import { ObserverBus, type StopRequest } from '../observers/bus.js';
import { ApprovalBook } from '../policy/approvals.js';
import { EscalationEngine } from '../policy/escalations.js';
import { identityPolicy, ManualIdentityAdapter, type Operator } from '../policy/identity.js';
import type { SecretBroker } from '../policy/secrets.js';
import { runSequencer, SequencerState, type SequencerResult, type SequencerRunOptions, type SequencerTools } from '../sequencer/runner.js';
import { canonicalJson } from '../spine/canonical.js';
import { KeyRing } from '../spine/signing.js';
import { parseFsyncPolicy, type TrailWriter } from '../spine/writer.js';
import { makeFolder } from '../store/fs-write.js';
import { SESSION_ID_PATTERN, type SessionFiles } from '../store/session-files.js';
import { newSalt, removeSalt, sharedSalt } from './approval-salt.js';
import { Checkpointer } from './checkpoint.js';
import { exportClosed } from './close.js';
import { openBroker } from './egress.js';
import { PolicyGate } from './enforce.js';
import { LoopHold } from './hold.js';
import { randomIds, SESSION_KEY_RULE, sessionKeyOf, systemClock } from './ids.js';
import { MaskStage } from './mask.js';
import { recordOpening } from './opening.js';
import { Publisher } from './publish.js';
import { Recorder } from './recorder.js';
import { readResumePoint, removeResumeState, saveResumeState, type ResumePoint } from './resume-state.js';
import { readHistory, type SessionHistory } from './resume.js';
import { takeUp, takeUpSaved } from './take-up.js';
import { ToolCalls } from './tool-call.js';
import { sessionTraceParent, type TraceParent } from './trace-context.js';
import { attachTrail, openTrail } from './trail-open.js';
import {
  parseSessionMode,
  type EmitOptions,
  type RecordedEvent,
  type SessionAgent,
  type SessionMode,
  type SessionOptions,
  type SessionResult,
  type SharedSessionOptions,
  type ToolHost,
  type ToolOptions,
} from './types.js';

export type { EmitOptions, RecordedEvent, SessionOptions, SessionResult, SharedSessionOptions, ToolHost, ToolOptions } from './types.js';

// Written only by the session itself: completeness and identity must mean what they say.
const RESERVED_KINDS: ReadonlySet<string> = new Set(['membrane.ingress', 'session.open', 'session.close', 'identity.bound']);

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
  private readonly exportOnClose: boolean;
  private readonly sessionKey: string | null;
  private readonly identity: { readonly required: boolean; readonly source: string };
  private readonly approvals = new ApprovalBook(() => `req_${randomBytes(5).toString('hex')}`);
  private readonly sequencerState = new SequencerState();
  private readonly broker: SecretBroker | null;
  private readonly redactor = new SessionRedactor();
  private readonly recorder: Recorder;
  private readonly publisher: Publisher;
  private readonly checkpointer: Checkpointer;
  private readonly loop: LoopHold;
  private readonly gate: PolicyGate;
  private readonly mask: MaskStage;
  private readonly calls: ToolCalls;
  /** A shared session's trail as earlier processes left it, until this process has taken it up. */
  private history: SessionHistory | null = null;
  /** Or what the last process saved beside it, where that matches the trail. */
  private resumed: ResumePoint | null = null;
  private goalReached = false;
  private closedState = false;
  /** The trail size at which the close-ahead thread starts (never, for a shared trail), and that thread. */
  private aheadAt = CLOSE_AHEAD_BYTES;
  private ahead: CloseAhead | null = null;

  private constructor(
    readonly agent: SessionAgent,
    options: SessionOptions,
    shared: SharedSessionOptions | null = null,
  ) {
    const { settings, paths, values } = agent.config;
    this.mode = parseSessionMode(options.mode ?? agent.profile.default_mode);
    const fsync = parseFsyncPolicy(options.fsync ?? settings.fsync);
    if (options.export !== undefined && typeof options.export !== 'boolean') throw new InvalidOptionError('export', options.export, 'true or false');
    this.exportOnClose = options.export ?? settings.export_on_close;
    const taskId = options.taskId ?? null;
    this.sessionKey = options.sessionKey === undefined ? null : sessionKeyOf(options.sessionKey);
    if (options.sessionKey !== undefined && this.sessionKey === null) throw new InvalidOptionError('sessionKey', options.sessionKey, SESSION_KEY_RULE);
    const ids = options.ids ?? randomIds;
    const clock = options.clock ?? systemClock;
    const policy = agent.policy;
    const piiConfig = agent.middleware.pii_mask;
    const redactor = this.redactor;
    this.broker = openBroker(options.secretBroker ?? agent.secretBroker, [...policy.capabilities.flatMap((c) => c.inject.map((t) => t.ref)), ...(piiConfig?.key == null ? [] : [piiConfig.key])]);
    this.openSnapshotHash = agent.snapshotHash();
    // Before the trail exists: a missing pseudonymization key leaves no file.
    const pii = piiConfig === null ? null : openPiiMasking(piiConfig, this.broker, (key) => redactor.addSecret(key));

    // Identity is settled before the trail exists: a session refused here leaves no file.
    const sessionId = shared?.sessionId ?? ids.sessionId();
    if (!SESSION_ID_PATTERN.test(sessionId)) throw new InvalidSessionIdError(sessionId, "the id source must give 'aura_sess_' + 12 lowercase hex");
    const adapter = options.identityAdapter ?? new ManualIdentityAdapter(options.operator);
    this.operator = adapter.resolve({ session_id: sessionId, aura_id: agent.auraId, agent_ref: agent.ref, profile_ids: agent.profile.ids });
    this.identity = identityPolicy(options.requireVerifiedOperator, policy.spectrum, values['identity_required'] === true);
    if (this.identity.required && this.operator === null) throw new IdentityRequiredError('no_verified_operator', this.identity.source);
    if (this.identity.required && this.operator?.verified !== true) throw new IdentityRequiredError('operator_not_verified', this.identity.source);

    // Before the trail exists, like identity: a refused observer leaves no file.
    const hostObservers = options.observers ?? [];
    const observerBus = (): ObserverBus | null => {
      const observers = [...policy.observers.specs.map((spec) => spec.create()), ...hostObservers];
      return observers.length === 0 ? null : new ObserverBus(observers, { emit: (kind, payload) => this.emit(kind, payload), stop: (request) => this.loop.stopAt(request), now: () => this.recorder.now() });
    };
    let bus = observerBus();
    const signer = options.sign === false ? null : KeyRing.load(paths.keys).signer();
    try {
      makeFolder(paths.sessions);
    } catch (error) {
      throw new TrailWriteError(paths.sessions, error);
    }
    const opened = shared === null ? openTrail(paths.sessions, sessionId, ids, fsync) : attachTrail(paths.sessions, shared, fsync);
    this.id = opened.files.sessionId;
    this.files = opened.files;
    this.writer = opened.writer;
    if (opened.writer.shared?.existed === true) {
      try {
        // A host's own observers cannot be made again should theirs not be taken up: they are handed the events.
        this.resumed = hostObservers.length === 0 ? readResumePoint(this.writer, this.id) : null;
        if (this.resumed !== null && !(bus === null ? this.resumed.saved.observers.length === 0 : bus.restoreStates(this.resumed.saved.observers))) {
          this.resumed = null;
          bus = observerBus();
        }
        if (this.resumed === null) this.history = readHistory(this.files.trail, this.id);
      } catch (error) {
        // An ended session keeps no lease; one whose trail cannot be read stays as it was.
        if (error instanceof SessionClosedError) this.writer.close();
        else this.writer.abandon();
        throw error;
      }
    }
    const takenUp = this.resumed ?? this.history;
    this.traceParent = this.resumed !== null ? this.resumed.saved.traceParent : this.history !== null ? this.history.traceParent : sessionTraceParent(options.traceParent);
    this.traceId = takenUp?.last.trace_id ?? this.traceParent?.trace_id ?? ids.traceId();

    // The stages, last first: each is handed the one after it.
    const record = (kind: string, payload: Readonly<Record<string, unknown>>, emitOptions: EmitOptions = {}): RecordedEvent => this.recorder.record(kind, payload, emitOptions);
    this.checkpointer = new Checkpointer(this.id, signer, settings.checkpoint_every, record, () => this.recorder.head);
    const escalations = new EscalationEngine(policy.escalations, policy.level, options.escalationHandler, {
      record: (kind, payload) => record(kind, payload).event_id,
      pause: (requestId) => this.gate.pause(requestId),
      newRequestId: (prefix) => `${prefix}${randomBytes(5).toString('hex')}`,
    });
    // A shared session's spans are built at close, from the whole trail: no process sees all of it live.
    this.publisher = new Publisher(shared === null ? LiveExport.fromSettings(settings.otel) : null, bus, () => escalations);
    // For the same reason, its evidence is not read ahead of close.
    if (shared !== null) this.aheadAt = Infinity;
    this.recorder = new Recorder({ sessionId: this.id, traceId: this.traceId, taskId }, this.writer, redactor, ids, clock, { agentIdsText: trailerText(agent.trailer(), redactor), auraId: agent.profile.aura_id }, (appended) => {
      // A due checkpoint goes right after the event that made it due, before anything its
      // publication records (an observer's alert): the verifier expects it there.
      this.checkpointer.after(appended.givenKind);
      this.publisher.publish(appended);
      if (this.writer.length >= this.aheadAt) this.startAhead();
    });
    this.loop = new LoopHold(this.approvals, record);
    this.gate = new PolicyGate(this.id, policy, this.approvals, this.loop, record, { salt: this.writer.shared === null ? newSalt : () => sharedSalt(this.files.trail), scrub: (text) => redactor.scrub(text) });
    this.mask = new MaskStage(pii, record);
    this.calls = new ToolCalls(record, this.gate, this.mask, policy, this.broker, redactor);
  }

  /** Opens a session of `agent`: creates its trail and records `membrane.ingress` and `session.open`. */
  static open(agent: SessionAgent, options: SessionOptions = {}): Session {
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
  static attach(agent: SessionAgent, options: SharedSessionOptions): Session {
    const session = new Session(agent, options, options);
    try {
      const { recorder, checkpointer, approvals, loop, publisher } = session;
      const stages = { recorder, checkpointer, approvals, loop, observers: publisher.observers };
      if (session.resumed !== null) session.goalReached = takeUpSaved(session.resumed, stages).goalReached;
      else if (session.history !== null) session.goalReached = takeUp(session.history, stages).goalReached;
      else session.recordOpen();
    } catch (error) {
      session.closedState = true;
      session.writer.abandon();
      throw error;
    } finally {
      session.history = null;
      session.resumed = null;
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
    if (this.writer.shared !== null) this.saveResume();
    this.writer.detach();
  }

  /** True once `close()` was called. */
  get closed(): boolean {
    return this.closedState;
  }

  /** Events recorded so far. */
  get eventCount(): number {
    return this.recorder.eventCount;
  }

  /** The observer stop in force, or null: until its request is approved, guarded calls throw {@link LoopBrokenError}. */
  get stoppedBy(): (StopRequest & { readonly request_id: string }) | null {
    return this.loop.current;
  }

  /**
   * The session's redactor, for a host that passes on more of a tool server's traffic than the
   * answers {@link Session.tool} returns (an MCP proxy: the server's errors, notifications and
   * requests, and its stderr): the secrets the session injects are kept from those too.
   */
  get scrubber(): RelayScrubber {
    return this.redactor;
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
    this.assertOpen('emit', kind);
    if (RESERVED_KINDS.has(kind)) throw new InvalidOptionError('kind', kind, `a kind other than ${[...RESERVED_KINDS].join(', ')}, which the session writes itself`);
    return this.recordEmitted(kind, payload, options);
  }

  /**
   * A guarded tool call: `tool.intent` → policy → `tool.call` → `fn(liveArgs)` → `tool.result`
   * (or `tool.error`). A denied call, or one waiting for approval, never runs `fn`. Secrets of the
   * claimed capability are injected into the live arguments only, and scrubbed from the record.
   * @returns what `fn` returned.
   * @throws PolicyDeniedError, ApprovalRequiredError, LoopBrokenError, SecretNotFoundError, or what `fn` threw (recorded as `tool.error`; cleaned of injected secrets and masked personal data)
   */
  async tool<R>(name: string, args: Readonly<Record<string, unknown>>, fn: (liveArgs: Record<string, unknown>) => R | Promise<R>, options: ToolOptions = {}): Promise<R> {
    this.assertOpen('call', name);
    return this.calls.call(name, args, fn, options);
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
      record: (kind, payload, stepId) => this.recorder.record(kind, payload, { stepId }),
      tool: (name, args, fn, toolOptions) => this.tool(name, args, fn, toolOptions),
      gate: (step, gate) => this.gate.gate(step, gate),
      stepFailed: (step, attempt, error) => this.mask.stepFailed(step, attempt, error),
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
    this.assertOpen('approve a call of', tool);
    // Most calls were never held (the hook asks after every call): no digest, nor a shared session's salt, is needed to know.
    if (!this.approvals.hasPending()) return null;
    const request = this.approvals.open(this.gate.digestOf(tool, args));
    return request?.state === 'pending' ? this.approve(request.request_id, options) : null;
  }

  /**
   * Approves a pending request (`constraint.approved`). The next call with exactly the arguments
   * of the request goes through, once.
   * @throws ApprovalError for a request never made, already approved or already used
   */
  approve(requestId: string, options: { readonly principal?: string } = {}): RecordedEvent {
    this.assertOpen('approve', requestId);
    if (typeof requestId !== 'string' || requestId === '') throw new InvalidOptionError('request_id', requestId, 'a non-empty string');
    const principal = options.principal ?? this.operator?.subject ?? null;
    const request = this.approvals.approve(requestId, principal);
    return this.recorder.record('constraint.approved', { request_id: requestId, principal, tool: request.tool, digest: request.digest }, {});
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
    this.publisher.observers?.close();
    this.closedState = true;
    const reason = options.reason ?? 'normal';
    try {
      // One write for both: a crash between them would leave a signed session closed but not signed to its end.
      this.writer.together(() => {
        this.recorder.record('session.close', { reason, goal_reached: this.goalReached }, {});
        this.checkpointer.final();
      });
      if (this.writer.shared !== null) {
        removeResumeState(this.files.trail);
        removeSalt(this.files.trail);
      }
    } catch (error) {
      this.ahead?.abandon();
      throw error;
    } finally {
      this.writer.close();
    }
    return exportClosed({
      agent: this.agent,
      files: this.files,
      traceId: this.traceId,
      snapshotHash: this.openSnapshotHash,
      exportOnClose: this.exportOnClose,
      signer: this.checkpointer.signer,
      live: this.publisher.live,
      ahead: this.ahead,
    });
  }

  /** Starts reading the trail's evidence ahead of close (export/close-ahead.ts), once. */
  private startAhead(): void {
    this.aheadAt = Infinity;
    const { settings } = this.agent.config;
    this.ahead = CloseAhead.start({
      sessionId: this.id,
      trail: this.files.trail,
      otel: this.exportOnClose ? this.files.otel : null,
      buildSpans: this.publisher.live !== null,
      spans: { captureToolContent: settings.otel.capture_tool_content },
    });
  }

  /** `await using run = agent.session()` closes the session at the end of the block (once). */
  async [Symbol.asyncDispose](): Promise<void> {
    if (!this.closedState) await this.close();
  }

  /** `what` is quoted into the message only when it is thrown: an open session's emit builds no text for it. */
  private assertOpen(action: string, what?: unknown): void {
    if (this.closedState) throw new SessionClosedError(this.id, what === undefined ? action : `${action} ${JSON.stringify(what)}`);
  }

  /** A payload from the host: masked first when the profile puts `pii_mask` on the `emit` boundary, then policy, then the trail. */
  private recordEmitted(kind: string, payload: Readonly<Record<string, unknown>>, options: EmitOptions): RecordedEvent {
    const guarded = this.gate.guards(kind);
    const masked = this.mask.emitted(payload);
    if (masked === null) return guarded ? this.gate.enforce(kind, payload, options).event : this.recorder.record(kind, payload, options);
    return this.mask.recordMasked(masked.masked.report, 'emit', options.stepId ?? null, null, () =>
      guarded ? this.gate.enforce(kind, payload, options, masked.masking).event : this.recorder.record(kind, masked.masked.value, options),
    );
  }

  /** Saves what the next process of a shared session takes up, when this one recorded something (else the saved state still stands). */
  private saveResume(): void {
    const lastLine = this.recorder.lastLine;
    const observers = this.publisher.observers === null ? [] : this.publisher.observers.saveStates();
    if (lastLine === null || observers === null) return;
    saveResumeState(this.writer, lastLine, {
      count: this.recorder.eventCount,
      checkpointSince: this.checkpointer.sinceLast,
      goalReached: this.goalReached,
      traceParent: this.traceParent,
      approvals: [...this.approvals.all()],
      stop: this.loop.current,
      observers,
    });
  }

  private recordOpen(): void {
    const { signer, every } = this.checkpointer;
    const trailer = recordOpening(
      {
        agent: this.agent,
        mode: this.mode,
        snapshotHash: this.openSnapshotHash,
        sessionKey: this.sessionKey,
        observers: this.publisher.observers?.attached ?? [],
        broker: this.broker,
        identity: this.identity,
        signing: signer === null ? null : { signer, every },
        traceParent: this.traceParent,
        operator: this.operator,
      },
      (kind, payload, options = {}) => this.recorder.record(kind, payload, options),
    );
    if (trailer !== null) this.recorder.agentIdsText = trailerText(trailer, this.redactor);
  }
}

/**
 * The identity trailer's text, copied onto every event: redacted as a payload is (an id or a name
 * may hold a credential, and it would be on every line).
 */
function trailerText(trailer: Readonly<Record<string, unknown>>, redactor: SessionRedactor): string {
  return canonicalJson(trailer, 'agent_ids', { redact: redactor });
}
