/**
 * What the stages of a session share: its options, what it records and returns, and the agent as
 * a session reads it. Every module of the session imports from here and nothing here imports a
 * stage, so data flows one way (DESIGN §1).
 */

import type { AuraConfig } from '../config/config.js';
import { InvalidOptionError } from '../errors.js';
import type { AuditReport } from '../audit/report.js';
import type { Conformance } from '../audit/conformance.js';
import type { SessionSummary } from '../export/summary.js';
import type { MIDDLEWARE_OPS, MiddlewareConfig } from '../middleware/middleware.js';
import type { Observer } from '../observers/bus.js';
import type { EscalationHandler } from '../policy/escalations.js';
import type { Operator, OperatorIdentityAdapter } from '../policy/identity.js';
import type { DefaultToolPolicy, Policy } from '../policy/policy.js';
import type { SecretBroker } from '../policy/secrets.js';
import type { SequencerSpec } from '../sequencer/spec.js';
import type { ChainReport } from '../spine/verify.js';
import type { RecordedEvent } from '../spine/record.js';
import type { FsyncPolicy } from '../spine/writer.js';
import type { Clock, IdSource } from './ids.js';

export type { RecordedEvent };

/** How a session runs. Modes are recorded; `task` and `continuous` are labels Aura also keeps. */
export type SessionMode = 'script' | 'task' | 'continuous';

/** The modes a session may have. */
export const SESSION_MODES: readonly SessionMode[] = ['script', 'task', 'continuous'];

/** Checks a mode from outside: an unknown mode is an error, never a silent fallback. */
export function parseSessionMode(value: unknown): SessionMode {
  if (typeof value === 'string' && (SESSION_MODES as readonly string[]).includes(value)) return value as SessionMode;
  throw new InvalidOptionError('mode', value, SESSION_MODES.map((m) => `'${m}'`).join(', '));
}

/** An agent's profile, as stored under `agents/` (Aura's key order). */
export interface AgentProfile {
  readonly aura_id: string;
  readonly agent_ref: string | null;
  readonly name: string | null;
  readonly ids: Readonly<Record<string, unknown>>;
  readonly purpose: string | null;
  readonly policy_version: string;
  readonly variables: Readonly<Record<string, unknown>>;
  readonly rules: readonly unknown[];
  readonly skills: readonly string[];
  readonly sequencer: unknown;
  readonly observers: readonly unknown[];
  readonly escalations: readonly unknown[];
  readonly spectrum: unknown;
  readonly capabilities: readonly unknown[];
  readonly types: readonly unknown[];
  readonly default_mode: SessionMode;
  readonly default_tool_policy: DefaultToolPolicy;
  readonly middleware: unknown;
}

/** The agent as its sessions read it (`Agent` is the one there is). */
export interface SessionAgent {
  readonly profile: AgentProfile;
  readonly config: AuraConfig;
  readonly policy: Policy;
  readonly middleware: MiddlewareConfig;
  readonly sequencer: SequencerSpec | null;
  readonly secretBroker: SecretBroker | null;
  readonly auraId: string;
  readonly ref: string | null;
  /** The identity trailer copied onto every event (reference §5.4). */
  trailer(): Record<string, unknown>;
  /** Aura's snapshot hash of the declared policy (reference §3.6). */
  snapshotHash(): string;
}

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

/** The masking of one recorded payload: what to record instead, and how to mask rule messages about it. */
export interface Masking {
  readonly payload: Readonly<Record<string, unknown>>;
  readonly text: (message: string) => string;
}

/** Records one event of the session (the record stage). */
export type RecordFn = (kind: string, payload: Readonly<Record<string, unknown>>, options?: EmitOptions) => RecordedEvent;
