/**
 * aura's public API: agents and sessions, the chain verifier, configuration, and the typed errors.
 * Everything else is internal.
 */

// Agents and sessions
export { agent, parseAgentRef, Agent } from './session/agent.js';
export type { AgentOptions } from './session/agent.js';
export { SESSION_MODES } from './session/types.js';
export type { AgentProfile, EmitOptions, RecordedEvent, SessionMode, SessionOptions, SessionResult, SharedSessionOptions, ToolHost, ToolOptions } from './session/types.js';
export { Session } from './session/session.js';

// Policy
export { EnvSecretBroker } from './policy/secrets.js';
export type { SecretBroker } from './policy/secrets.js';
export { ManualIdentityAdapter } from './policy/identity.js';
export type { IdentityContext, Operator, OperatorIdentityAdapter } from './policy/identity.js';
export type { EscalationDelivery, EscalationHandler } from './policy/escalations.js';
export type { DefaultToolPolicy } from './policy/policy.js';
export type { SpectrumLevel } from './policy/spectrum.js';
export type { Clock, IdSource } from './session/ids.js';

// Observers
export type { ObservedEvent, Observer, ObserverContext, StopRequest } from './observers/bus.js';
export type { LoopPattern, RemedialDirective } from './observers/break.js';

// Middleware and the sequencer
export type { PiiBoundary, PiiMaskConfig } from './middleware/middleware.js';
export type { PiiEntity } from './middleware/pii-detectors.js';
export type { PiiStrategy } from './middleware/pii-mask.js';
export type { SequencerResult, SequencerRunOptions, SequencerTools } from './sequencer/runner.js';

// Configuration
export { configure, currentConfig } from './config/configure.js';
export type { AuraConfig, AuraPaths, AuraSettings, ConfigOptions } from './config/config.js';

// The trail
export { canonicalJson } from './spine/canonical.js';
export { PythonNumber } from './spine/python-number.js';
export { verifyTrail } from './spine/verify.js';
export type { ChainReport, ChainSeal } from './spine/verify.js';
export { readTrail } from './spine/trail-reader.js';
export type { TrailRead } from './spine/trail-reader.js';
export type { AuraEvent, JsonObject } from './spine/record.js';
export type { JsonValue } from './spine/json-reader.js';
export type { FsyncPolicy } from './spine/writer.js';

// Evidence
export type { SessionSummary } from './export/summary.js';
export type { AuditReport, Finding, Scorecard, Severity } from './audit/report.js';
export type { Conformance } from './audit/conformance.js';

// Errors
export {
  ApprovalError,
  ApprovalRequiredError,
  AuraError,
  ChainVerificationError,
  ConfigError,
  ExportError,
  IdentityRequiredError,
  InvalidAgentRefError,
  InvalidOptionError,
  InvalidSessionIdError,
  LoopBrokenError,
  NonJsonValueError,
  NotFoundError,
  PolicyDeniedError,
  ProfileError,
  ReadError,
  SecretNotFoundError,
  SessionClosedError,
  SessionLockedError,
  TrailWriteError,
  WriteError,
} from './errors.js';
export type { AuraErrorCode, ChainFailureData, ChainFailureReason, LoopBrokenData, NonJsonValueData, PolicyDeniedData, ProfileErrorData } from './errors.js';
