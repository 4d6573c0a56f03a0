/**
 * A session: the lifecycle of one run of an agent (reference §6). Open writes `membrane.ingress`
 * and `session.open`; each `emit` appends one hash-chained event; close writes `session.close`,
 * then reads the trail back from disk to build the summary and spans.
 *
 * `emit` is synchronous: when it returns, the line is in the kernel's hands and survives the
 * process being killed. A payload is turned into its canonical text at emit time, which is both
 * the check that it is JSON and the copy: changing the object afterwards changes nothing recorded.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { InvalidOptionError, InvalidSessionIdError, NonJsonValueError, SessionClosedError, SessionLockedError, TrailWriteError } from '../errors.js';
import { exportSession } from '../export/session-export.js';
import type { SessionSummary } from '../export/summary.js';
import type { AuditReport } from '../audit/report.js';
import type { Conformance } from '../audit/conformance.js';
import { canonicalJson } from '../spine/canonical.js';
import { encodeEvent } from '../spine/record.js';
import type { ChainReport } from '../spine/verify.js';
import { parseFsyncPolicy, TrailWriter, type FsyncPolicy } from '../spine/writer.js';
import { SESSION_ID_PATTERN, sessionFiles, type SessionFiles } from '../store/session-files.js';
import { PACKAGE_NAME, VERSION } from '../version.js';
import { parseSessionMode, type Agent, type SessionMode } from './agent.js';
import { isoTimestamp, randomIds, systemClock, type Clock, type IdSource } from './ids.js';

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
  /** Id source, for tests. */
  readonly ids?: IdSource;
  /** Clock in epoch microseconds, for tests. */
  readonly clock?: Clock;
}

/** Options of {@link Session.emit}. */
export interface EmitOptions {
  readonly stepId?: string | null;
  /** The causal parent; default the previous event. */
  readonly parentId?: string;
  /** `latency_ms`, `attempt`, `skill_id`, … */
  readonly telemetry?: Readonly<Record<string, unknown>>;
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
// Written only by open and close: completeness (`ends with session.close`) must mean the session closed.
const LIFECYCLE_KINDS: ReadonlySet<string> = new Set(['membrane.ingress', 'session.open', 'session.close']);
// Three tries at a fresh id: a collision of 48 random bits is already unheard of.
const OPEN_ATTEMPTS = 3;

/** One session of an agent. Create it with `agent.session()`. */
export class Session implements AsyncDisposable {
  readonly id: string;
  readonly traceId: string;
  readonly mode: SessionMode;
  /** The snapshot hash of the declared policy, fixed at open. */
  readonly openSnapshotHash: string;
  readonly files: SessionFiles;

  private readonly writer: TrailWriter;
  private readonly agentIdsText: string;
  private readonly exportOnClose: boolean;
  private readonly taskId: string | null;
  private readonly ids: IdSource;
  private readonly clock: Clock;
  private lastEventId: string | null = null;
  private headHash: string | null = null;
  private lastMicros = 0;
  private count = 0;
  private goalReached = false;
  private closedState = false;

  private constructor(
    readonly agent: Agent,
    options: SessionOptions,
  ) {
    const { settings, paths } = agent.config;
    this.mode = parseSessionMode(options.mode ?? agent.profile.default_mode);
    const fsync = parseFsyncPolicy(options.fsync ?? settings.fsync);
    if (options.export !== undefined && typeof options.export !== 'boolean') throw new InvalidOptionError('export', options.export, 'true or false');
    this.exportOnClose = options.export ?? settings.export_on_close;
    this.taskId = options.taskId ?? null;
    this.ids = options.ids ?? randomIds;
    this.clock = options.clock ?? systemClock;
    this.agentIdsText = canonicalJson(agent.trailer(), 'agent_ids');
    this.openSnapshotHash = agent.snapshotHash();
    makeFolder(paths.sessions);
    const opened = openTrail(paths.sessions, this.ids, fsync);
    this.id = opened.files.sessionId;
    this.files = opened.files;
    this.writer = opened.writer;
    this.traceId = this.ids.traceId();
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

  /** True once `close()` was called. */
  get closed(): boolean {
    return this.closedState;
  }

  /** Events recorded so far. */
  get eventCount(): number {
    return this.count;
  }

  /**
   * Records one event.
   * @param kind a dotted name such as `tool.call`.
   * @param payload a plain JSON object; copied now.
   * @throws SessionClosedError, NonJsonValueError (nothing written), TrailWriteError (nothing recorded)
   */
  emit(kind: string, payload: Readonly<Record<string, unknown>> = {}, options: EmitOptions = {}): RecordedEvent {
    if (this.closedState) throw new SessionClosedError(this.id, `emit ${JSON.stringify(kind)}`);
    if (LIFECYCLE_KINDS.has(kind)) throw new InvalidOptionError('kind', kind, 'a kind other than membrane.ingress, session.open and session.close, which the session writes itself');
    return this.append(kind, payload, options);
  }

  /** Records that the session's goal was reached (`task.complete`). */
  completeGoal(result: Readonly<Record<string, unknown>> = {}): RecordedEvent {
    if (this.closedState) throw new SessionClosedError(this.id, 'complete the goal');
    const event = this.append('task.complete', result, {});
    this.goalReached = true;
    return event;
  }

  /**
   * Records an approval of a pending request (`constraint.approved`).
   * @param principal who approved; recorded with the approval.
   */
  approve(requestId: string, principal?: string): RecordedEvent {
    if (this.closedState) throw new SessionClosedError(this.id, `approve ${JSON.stringify(requestId)}`);
    if (typeof requestId !== 'string' || requestId === '') throw new InvalidOptionError('request_id', requestId, 'a non-empty string');
    return this.append('constraint.approved', principal === undefined ? { request_id: requestId } : { request_id: requestId, principal }, {});
  }

  /**
   * Closes the session: records `session.close`, flushes and releases the trail, verifies it from
   * disk and builds (and, unless `export: false`, writes) the summary and spans.
   * @throws SessionClosedError on a second close; TrailWriteError; ExportError (the trail is kept whole)
   */
  // async so that every failure, even one before the first await, is a rejection.
  async close(options: { readonly reason?: string } = {}): Promise<SessionResult> {
    if (this.closedState) throw new SessionClosedError(this.id, 'close it again');
    this.closedState = true;
    const reason = options.reason ?? 'normal';
    try {
      this.append('session.close', { reason, goal_reached: this.goalReached }, {});
    } finally {
      this.writer.close();
    }
    const exported = exportSession(this.files, this.exportOnClose);
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

  private recordOpen(): void {
    const p = this.agent.profile;
    this.append(
      'membrane.ingress',
      {
        membrane: 'ingress',
        mode: this.mode,
        snapshot_hash: this.openSnapshotHash,
        context: {
          aura_id: p.aura_id,
          agent_ref: p.agent_ref,
          name: p.name,
          purpose: p.purpose,
          policy_version: p.policy_version,
          ids: p.ids,
          variables: p.variables,
          skills: p.skills,
        },
        skills: p.skills,
        observers: [],
        agent_ref: p.agent_ref,
        policy_version: p.policy_version,
      },
      {},
    );
    this.append(
      'session.open',
      {
        mode: this.mode,
        snapshot_hash: this.openSnapshotHash,
        purpose: p.purpose,
        policy_version: p.policy_version,
        agent_ref: p.agent_ref,
        declared_rules: p.rules,
        harness: { name: PACKAGE_NAME, version: VERSION },
      },
      {},
    );
  }

  private append(kind: string, payload: Readonly<Record<string, unknown>>, options: EmitOptions): RecordedEvent {
    if (typeof kind !== 'string' || kind === '') throw new InvalidOptionError('kind', kind, 'a non-empty string such as "tool.call"');
    if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) {
      throw new NonJsonValueError(`payload of ${kind} must be a plain object`, { path: 'payload', reason: 'not_plain' });
    }
    const stepId = options.stepId ?? null;
    if (stepId !== null && typeof stepId !== 'string') throw new InvalidOptionError('stepId', stepId, 'a string or null');
    const payloadText = canonicalJson(payload, 'payload');
    const telemetryText = options.telemetry === undefined ? EMPTY_OBJECT_TEXT : canonicalJson(options.telemetry, 'telemetry');
    // Timestamps never go backwards within a session, even if the wall clock does.
    const micros = Math.max(this.clock(), this.lastMicros);
    const eventId = this.ids.eventId();
    const timestamp = isoTimestamp(micros);
    const encoded = encodeEvent({
      event_id: eventId,
      parent_id: options.parentId ?? this.lastEventId,
      trace_id: this.traceId,
      span_id: null,
      step_id: stepId,
      task_id: this.taskId,
      session_id: this.id,
      aura_id: this.agent.profile.aura_id,
      agent_ids: this.agentIdsText,
      kind,
      timestamp,
      payload: payloadText,
      telemetry: telemetryText,
      prev_hash: this.headHash,
    });
    this.writer.append(encoded.line);
    const prevHash = this.headHash;
    this.lastMicros = micros;
    this.lastEventId = eventId;
    this.headHash = encoded.content_hash;
    this.count++;
    return { event_id: eventId, kind, timestamp, prev_hash: prevHash, content_hash: encoded.content_hash, sequence: this.count };
  }
}

/**
 * Creates the sessions folder. A recursive mkdir reports a read-only or full file system as
 * ENOENT (nodejs/node#47098); a plain mkdir where the parent exists gives the real cause.
 */
function makeFolder(dir: string): void {
  try {
    fs.mkdirSync(dir, { recursive: true });
  } catch (error) {
    let cause = error;
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' && fs.existsSync(path.dirname(dir))) {
      try {
        fs.mkdirSync(dir);
        return;
      } catch (direct) {
        cause = direct;
      }
    }
    throw new TrailWriteError(dir, cause);
  }
}

function openTrail(sessionsDir: string, ids: IdSource, fsync: FsyncPolicy): { files: SessionFiles; writer: TrailWriter } {
  for (let attempt = 1; ; attempt++) {
    const id = ids.sessionId();
    if (!SESSION_ID_PATTERN.test(id)) throw new InvalidSessionIdError(id, "the id source must give 'aura_sess_' + 12 lowercase hex");
    const files = sessionFiles(sessionsDir, id);
    try {
      return { files, writer: TrailWriter.create(files.trail, files.sessionId, fsync) };
    } catch (error) {
      if (!(error instanceof SessionLockedError) || attempt >= OPEN_ATTEMPTS) throw error;
    }
  }
}
