/**
 * Typed errors. Every error aura raises on purpose is an {@link AuraError} with a stable `code`
 * that callers (and the CLI's exit-code mapping) can switch on; `data` carries the facts that
 * locate the problem (a path into a payload, an event id, a line number).
 */

/** Codes of errors that are the caller's or the environment's fault, not the trail's. */
export type AuraErrorCode =
  /** A payload (or other recorded value) is not JSON: `data.path` names where, `data.reason` what. */
  | 'NON_JSON_VALUE'
  /** A session id from outside is not `aura_sess_` + 12 hex, or names a file outside the sessions folder. */
  | 'INVALID_SESSION_ID'
  /** An agent ref is not `slug` or `tenant/slug` in lowercase ASCII. */
  | 'INVALID_AGENT_REF'
  /** An option has a value outside its documented set (`data.option`, `data.value`). */
  | 'INVALID_OPTION'
  /** `emit`, `approve` or `close` on a session that is already closed. */
  | 'SESSION_CLOSED'
  /** Another live writer holds the session's trail (`data.pid`). */
  | 'SESSION_LOCKED'
  /** The trail could not be written (full disk, read-only folder): `data.path`, `cause`. */
  | 'TRAIL_WRITE_FAILED'
  /** Summary or spans could not be committed; neither was (`data.path`, `cause`). */
  | 'EXPORT_FAILED'
  /** A config file could not be read or parsed (`data.path`, `data.line`). */
  | 'CONFIG_INVALID'
  /** A session or file that was asked for does not exist (`data.path`). */
  | 'NOT_FOUND'
  /** A file exists but could not be read (`data.path`, `cause`). */
  | 'READ_FAILED'
  /**
   * A file or folder other than a trail or an export could not be written (a full disk, a
   * read-only or forbidden folder, a folder where a file should be): `data.path`, `cause`.
   */
  | 'WRITE_FAILED'
  /** An agent profile is invalid: `data.path`, `data.line`, `data.key` say where. */
  | 'PROFILE_INVALID'
  /**
   * Policy refused a tool call, which did not run, or its answer (`data.kind` `tool.result`), kept
   * back (`data.tool`, `data.rule`, `data.event_id`).
   */
  | 'POLICY_DENIED'
  /** A tool call waits for approval of `data.request_id`; the tool did not run. */
  | 'APPROVAL_REQUIRED'
  /** `approve()` named a request that was never made, or was already used (`data.reason`). */
  | 'APPROVAL_INVALID'
  /** A secret ref could not be resolved by the broker (`data.ref`; never a value). */
  | 'SECRET_NOT_FOUND'
  /** The session needs a verified operator and has none (`data.reason`, `data.source`). */
  | 'IDENTITY_REQUIRED'
  /**
   * An observer stopped the session at a loop (`data.pattern`, `data.alert_event_id`); the tool did
   * not run. Approving `data.request_id` lets the next call through.
   */
  | 'LOOP_BROKEN'
  /** An OTLP export setting is invalid (`data.source` names the flag, variable or config key; never a header value). */
  | 'OTLP_CONFIG_INVALID'
  /**
   * The fleet store could not be used (`data.store`: its URL without credentials; `data.reason`:
   * `unreachable`, `connection_lost`, `schema_missing`, `schema_newer`, `denied` or `failed`).
   */
  | 'STORE_FAILED'
  /**
   * A push could not check a session before storing it (its check threw, or the worker thread
   * checking it died): `data.session_id`. Nothing of that session was stored.
   */
  | 'CHECK_FAILED';

/** Why a trail failed verification (DESIGN §2.3). Integrity and completeness are apart. */
export type ChainFailureReason =
  /** An event's content no longer matches its `content_hash`. */
  | 'edited'
  /** An event's `prev_hash` does not name the previous event's `content_hash`. */
  | 'deleted_or_reordered'
  /** `content_hash` or `prev_hash` missing or not 64 lowercase hex (or `prev_hash` not null on the first). */
  | 'missing_hash'
  /** A record whose keys are missing, extra, duplicated or of the wrong type. */
  | 'malformed_record'
  /** A line that is not JSON. */
  | 'malformed_line'
  /** The last line was cut short by an interrupted write (a crash, not tampering). */
  | 'torn_tail'
  /** Fewer events, or another head, than the seal says. */
  | 'truncated'
  /** No events at all. */
  | 'empty'
  /**
   * A checkpoint or seal whose signature does not verify, is by a key not trusted, covers another
   * count or head than the trail, or is missing where the session's signing cadence says one is.
   */
  | 'signature_invalid';

interface ErrorOptions<D> {
  readonly data?: D;
  readonly cause?: unknown;
}

/** Base of every error aura throws on purpose. */
export class AuraError<C extends string = AuraErrorCode | ChainFailureReason, D = Readonly<Record<string, unknown>>> extends Error {
  readonly code: C;
  readonly data: D | undefined;

  constructor(code: C, message: string, options: ErrorOptions<D> = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.data = options.data;
  }
}

/** Where in a recorded value a non-JSON value sits, and what it is. */
export interface NonJsonValueData {
  readonly path: string;
  readonly reason: 'cycle' | 'bigint' | 'non_finite' | 'function' | 'symbol' | 'undefined' | 'lone_surrogate' | 'not_plain' | 'too_deep';
}

/** A value handed to aura cannot be recorded as JSON; nothing was written. */
export class NonJsonValueError extends AuraError<'NON_JSON_VALUE', NonJsonValueData> {
  constructor(message: string, data: NonJsonValueData) {
    super('NON_JSON_VALUE', message, { data });
  }
}

/** A session id (or file name) from outside was refused. */
export class InvalidSessionIdError extends AuraError<'INVALID_SESSION_ID', { readonly value: string }> {
  constructor(value: string, why: string) {
    super('INVALID_SESSION_ID', `invalid session id ${JSON.stringify(value)}: ${why}`, { data: { value } });
  }
}

/** An agent ref does not follow the `slug` / `tenant/slug` rule. */
export class InvalidAgentRefError extends AuraError<'INVALID_AGENT_REF', { readonly value: string }> {
  constructor(value: string) {
    super(
      'INVALID_AGENT_REF',
      `invalid agent ref ${JSON.stringify(value)}: expected 'slug' or 'tenant/slug' of lowercase ASCII letters, digits, '.', '_' or '-', each part starting with a letter or digit`,
      { data: { value } },
    );
  }
}

/** An option value outside its documented set. */
export class InvalidOptionError extends AuraError<'INVALID_OPTION', { readonly option: string; readonly value: unknown }> {
  constructor(option: string, value: unknown, expected: string) {
    super('INVALID_OPTION', value === undefined ? `missing ${option}: expected ${expected}` : `invalid ${option} ${JSON.stringify(value) ?? String(value)}: expected ${expected}`, {
      data: { option, value },
    });
  }
}

/** The session is closed: nothing more can be recorded in it. */
export class SessionClosedError extends AuraError<'SESSION_CLOSED', { readonly session_id: string }> {
  constructor(sessionId: string, action: string) {
    super('SESSION_CLOSED', `session ${sessionId} is closed: cannot ${action}`, { data: { session_id: sessionId } });
  }
}

/** Another process (or session object) is writing this session's trail. */
export class SessionLockedError extends AuraError<'SESSION_LOCKED', { readonly session_id: string; readonly pid: number | null }> {
  constructor(sessionId: string, pid: number | null) {
    super('SESSION_LOCKED', `session ${sessionId} already has a writer${pid === null ? '' : ` (pid ${pid})`}`, {
      data: { session_id: sessionId, pid },
    });
  }
}

/** The trail could not be written; the event was not recorded. */
export class TrailWriteError extends AuraError<'TRAIL_WRITE_FAILED', { readonly path: string }> {
  constructor(path: string, cause: unknown) {
    super('TRAIL_WRITE_FAILED', `cannot write the trail ${path}: ${describeCause(cause)}`, { data: { path }, cause });
  }
}

/** The summary and spans could not be committed; neither file was changed. */
export class ExportError extends AuraError<'EXPORT_FAILED', { readonly session_id: string; readonly path: string }> {
  constructor(sessionId: string, path: string, cause: unknown) {
    super('EXPORT_FAILED', `export of ${sessionId} failed writing ${path}: ${describeCause(cause)}`, {
      data: { session_id: sessionId, path },
      cause,
    });
  }
}

/** A config file is unreadable or not a mapping. */
export class ConfigError extends AuraError<'CONFIG_INVALID', { readonly path: string; readonly line: number | null }> {
  constructor(path: string, line: number | null, why: string) {
    super('CONFIG_INVALID', `${path}${line === null ? '' : `:${line}`}: ${why}`, { data: { path, line } });
  }
}

/** Something asked for is not there. */
export class NotFoundError extends AuraError<'NOT_FOUND', { readonly path: string }> {
  constructor(what: string, path: string) {
    super('NOT_FOUND', `${what} not found: ${path}`, { data: { path } });
  }
}

/** A file is there but cannot be read. */
export class ReadError extends AuraError<'READ_FAILED', { readonly path: string }> {
  constructor(path: string, cause: unknown) {
    super('READ_FAILED', `cannot read ${path}: ${describeCause(cause)}`, { data: { path }, cause });
  }
}

/** A file or folder could not be written; nothing was left half-written. */
export class WriteError extends AuraError<'WRITE_FAILED', { readonly path: string }> {
  constructor(path: string, cause: unknown) {
    super('WRITE_FAILED', `cannot write ${path}: ${describeCause(cause)}`, { data: { path }, cause });
  }
}

/** An OTLP export setting is wrong. The message never repeats a header value or an endpoint's credentials. */
export class OtlpConfigError extends AuraError<'OTLP_CONFIG_INVALID', { readonly source: string }> {
  constructor(source: string, why: string) {
    super('OTLP_CONFIG_INVALID', `invalid OTLP export setting ${source}: ${why}`, { data: { source } });
  }
}

/** Why the fleet store could not be used. */
export type StoreFailure = 'unreachable' | 'connection_lost' | 'schema_missing' | 'schema_newer' | 'denied' | 'failed';

/** The fleet store could not be used. The message names the store without its credentials. */
export class StoreError extends AuraError<'STORE_FAILED', { readonly store: string; readonly reason: StoreFailure }> {
  constructor(store: string, reason: StoreFailure, why: string, cause?: unknown) {
    super('STORE_FAILED', `the store ${store}: ${why}`, { data: { store, reason }, ...(cause === undefined ? {} : { cause }) });
  }
}

/** A push could not check a session before storing it; what was committed before stays. */
export class CheckFailedError extends AuraError<'CHECK_FAILED', { readonly session_id: string }> {
  constructor(sessionId: string, why: string, cause?: unknown) {
    super('CHECK_FAILED', `checking ${sessionId} before storing it failed: ${why}; nothing of it was stored`, { data: { session_id: sessionId }, ...(cause === undefined ? {} : { cause }) });
  }
}

/** Where a profile is wrong. */
export interface ProfileErrorData {
  /** The file, or `<code>` for a profile given in code. */
  readonly path: string;
  readonly line: number | null;
  /** The key path, e.g. `rules[2].tools[0]`. */
  readonly key: string;
}

/** An agent profile (file or options) is invalid; nothing was opened. */
export class ProfileError extends AuraError<'PROFILE_INVALID', ProfileErrorData> {
  constructor(message: string, data: ProfileErrorData) {
    super('PROFILE_INVALID', `${data.path}${data.line === null ? '' : `:${data.line}`}: ${data.key}: ${message}`, { data });
  }
}

/** What a denial names. */
export interface PolicyDeniedData {
  readonly tool: string;
  /** The kind of the refused event: a `tool.result` is an answer refused after the tool ran. */
  readonly kind: string;
  readonly rule: unknown;
  readonly rule_type: string;
  /** The `constraint.violated` event that records the denial. */
  readonly event_id: string;
}

/**
 * Policy refused a tool call, which did not run, or the answer of one that ran (`data.kind` is
 * `tool.result`: a schema check of results), which is kept back. The host may recover (pick another
 * tool, ask a human).
 */
export class PolicyDeniedError extends AuraError<'POLICY_DENIED', PolicyDeniedData> {
  constructor(message: string, data: PolicyDeniedData) {
    super('POLICY_DENIED', message, { data });
  }
}

/** A tool call needs approval first; approve `request_id`, then retry the same call. */
export class ApprovalRequiredError extends AuraError<'APPROVAL_REQUIRED', { readonly tool: string; readonly request_id: string; readonly digest: string; readonly event_id: string }> {
  constructor(tool: string, requestId: string, digest: string, eventId: string) {
    super('APPROVAL_REQUIRED', `approval required before ${tool}: approve request ${requestId}, then retry the same call`, {
      data: { tool, request_id: requestId, digest, event_id: eventId },
    });
  }
}

/** An approval that cannot be granted. */
export class ApprovalError extends AuraError<'APPROVAL_INVALID', { readonly request_id: string; readonly reason: 'unknown_request' | 'already_used' | 'already_approved' }> {
  constructor(requestId: string, reason: 'unknown_request' | 'already_used' | 'already_approved') {
    const why = { unknown_request: 'no such request was made in this session', already_used: 'it was already used by the call it released', already_approved: 'it is already approved' }[reason];
    super('APPROVAL_INVALID', `cannot approve ${requestId}: ${why}`, { data: { request_id: requestId, reason } });
  }
}

/** A secret ref did not resolve. The message names the ref, never a value. */
export class SecretNotFoundError extends AuraError<'SECRET_NOT_FOUND', { readonly ref: string; readonly capability_id: string | null; readonly used_for?: string }> {
  /** @param usedFor what needed the secret when it is not a capability (`middleware.pii_mask.key`). */
  constructor(ref: string, capabilityId: string | null, usedFor?: string) {
    const what = capabilityId !== null ? ` (capability ${capabilityId})` : usedFor === undefined ? '' : ` (${usedFor})`;
    super('SECRET_NOT_FOUND', `secret ref ${ref} did not resolve${what}`, {
      data: { ref, capability_id: capabilityId, ...(usedFor === undefined ? {} : { used_for: usedFor }) },
    });
  }
}

/** The session requires a verified operator. */
export class IdentityRequiredError extends AuraError<'IDENTITY_REQUIRED', { readonly reason: 'no_verified_operator' | 'operator_not_verified'; readonly source: string }> {
  constructor(reason: 'no_verified_operator' | 'operator_not_verified', source: string) {
    const why = reason === 'no_verified_operator' ? 'no operator identity was bound' : 'the bound operator is not verified';
    super('IDENTITY_REQUIRED', `a verified operator is required: ${why} (policy source: ${source})`, { data: { reason, source } });
  }
}

/** What a loop stop names. */
export interface LoopBrokenData {
  readonly tool: string;
  /** The loop pattern of the hard alert, e.g. `ACTION_FIXATION`. */
  readonly pattern: string;
  readonly observer_id: string;
  /** The `observer.alert` that stopped the session. */
  readonly alert_event_id: string;
  /** The `constraint.violated` that records this refusal. */
  readonly event_id: string;
  /** Approve it (`session.approve`) to let the session call tools again. */
  readonly request_id: string;
}

/** An observer (the `break` preset) stopped the session at a loop; the tool did not run. */
export class LoopBrokenError extends AuraError<'LOOP_BROKEN', LoopBrokenData> {
  constructor(data: LoopBrokenData) {
    super('LOOP_BROKEN', `${data.tool} refused: observer ${data.observer_id} stopped the session at ${data.pattern} (alert ${data.alert_event_id}); approve ${data.request_id} to resume`, { data });
  }
}

/** Where a chain check failed: the first affected event (when it has an id) and its 1-based line. */
export interface ChainFailureData {
  readonly event_id: string | null;
  readonly line: number;
}

/** A trail failed one of the checks of DESIGN §2.3. */
export class ChainVerificationError extends AuraError<ChainFailureReason, ChainFailureData> {
  constructor(reason: ChainFailureReason, message: string, data: ChainFailureData) {
    super(reason, message, { data });
  }
}

// What the file system errors a user can meet mean, in words: the code stays for searching.
const SYSTEM_REASONS: Readonly<Record<string, string>> = {
  ENOSPC: 'no space left on the device',
  EDQUOT: 'the disk quota is used up',
  EROFS: 'the file system is read-only',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EISDIR: 'it is a folder, not a file',
  ENOTDIR: 'a part of the path is a file, not a folder',
  ENOENT: 'no such file or folder',
  EEXIST: 'it already exists',
  ENAMETOOLONG: 'the name is too long',
  EMFILE: 'too many open files',
  EIO: 'an input/output error of the device',
};

/** Why a system call failed, for people: `no space left on the device (ENOSPC)`. */
export function describeCause(cause: unknown): string {
  if (cause instanceof Error) {
    const { code, syscall } = cause as NodeJS.ErrnoException;
    if (code === undefined) return cause.message;
    const reason = SYSTEM_REASONS[code];
    if (reason !== undefined) return `${reason} (${code})`;
    // Node's words for a failed file call end with the call and the paths it was given (`ELOOP: too
    // many symbolic links encountered, stat '/srv/…'`): the message around them names the file, and
    // some of its readers (aura mcp's tenants) may not learn where the server keeps it.
    const prefix = `${code}: `;
    const call = syscall === undefined ? -1 : cause.message.lastIndexOf(`, ${syscall}`);
    if (!cause.message.startsWith(prefix) || call < prefix.length) return `${code} (${cause.message})`;
    return `${cause.message.slice(prefix.length, call)} (${code})`;
  }
  return String(cause);
}

/**
 * What went wrong, with the file it went wrong on (an AuraError's `data.path`, a system error's
 * `path`) named by `name`: a reader who may not learn the server's paths (aura mcp's tenants) is
 * told which file, never where it is. Only the first mention is renamed: aura's messages name the
 * file first, and what follows may quote what the file holds, which is said as it is (a path the
 * reader wrote there and sees renamed would tell it where the file is).
 */
export function describeNaming(error: unknown, name: (file: string) => string): string {
  if (!(error instanceof Error)) return String(error);
  const data: unknown = error instanceof AuraError ? error.data : undefined;
  const file = typeof data === 'object' && data !== null && 'path' in data ? data.path : (error as NodeJS.ErrnoException).path;
  return typeof file === 'string' ? error.message.replace(file, () => name(file)) : error.message;
}
