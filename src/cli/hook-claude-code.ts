/**
 * `aura hook claude-code`: the command Claude Code runs for its hooks. Each hook is a process of
 * its own, reading one JSON object on stdin (Claude Code's hooks reference: `session_id`,
 * `hook_event_name`, and each event's fields) and answering on stdout.
 *
 * One Claude Code session is one aura session, a shared session (`Session.attach`) whose id comes
 * from Claude's `session_id`: each hook process takes it up where the last one left it, records
 * its events and lets go; parallel hooks append one after the other and lose nothing. `SessionEnd`
 * closes it (summary and spans); a Claude session resumed after that gets the next aura session.
 *
 * - `PreToolUse`: `tool.intent` (with the Bash command, the file path, or the MCP server and tool
 *   of `mcp__server__tool`) and `tool.call` through policy. A denial (and a session `break`
 *   stopped) answers `deny` with aura's refusal, which Claude reads; a call held for approval
 *   answers `ask`, so the person at Claude Code's permission prompt decides; a tool an
 *   `allow_tools` rule names answers `allow`; anything else leaves Claude Code's own permissions
 *   to decide.
 * - `PostToolUse`: a call the person approved is recorded as approved for exactly that call and
 *   released; then `tool.result`. `PostToolUseFailure`: `tool.error`.
 * - `UserPromptSubmit`: `turn.start`; `Stop`: `turn.end`; `SessionStart`: `claude_code.session_start`.
 *
 * On an internal error the hook says so on stderr and in the trail (`hook.error`), and a
 * `PreToolUse` is denied when the profile says `claude_code: {on_error: deny}` (else Claude Code's
 * own permissions decide). This path loads only the session's modules: it runs before every tool
 * call a person waits on.
 */

import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { auraHome } from '../config/home.js';
import { ApprovalRequiredError, AuraError, InvalidOptionError, LoopBrokenError, NonJsonValueError, PolicyDeniedError, SessionClosedError } from '../errors.js';
import { approveCommand, refusalOf } from '../policy/refusal.js';
import { agent, type Agent } from '../session/agent.js';
import { readProfileFile } from '../session/profile-file.js';
import { Session } from '../session/session.js';
import { canonicalJson } from '../spine/canonical.js';
import { objectOf, stringOf } from '../spine/json-shape.js';
import { parseJson } from '../spine/native-json.js';
import { ApprovalInbox, handoffPathOf } from '../store/approval-handoff.js';
import { errorText } from './error-text.js';
import { onErrorChoice, type OnError } from './on-error.js';

export { keptProfileValue } from '../session/profile-file.js';

/** The hook's command-line options. */
export interface HookOptions {
  readonly profile?: string;
  readonly agent?: string;
  readonly home?: string;
  readonly project?: string;
  /** Who is recorded as approving a call at Claude Code's permission prompt. */
  readonly principal?: string;
  /** The hook event this command is installed for (`aura hook install` names it): known even when the input cannot be read. */
  readonly event?: string;
  /** `deny` or `allow` a call the hook cannot check; over the profile's `claude_code.on_error`. */
  readonly onError?: string;
}

/** Where the hook reads and writes (injected in tests). */
export interface HookIo {
  /** The whole input. */
  read(): Buffer | Promise<Buffer>;
  write(text: string): void;
  error(text: string): void;
}

// Claude Code passes tool output whole; a Read of a large file is megabytes.
const MAX_INPUT_BYTES = 64 * 1024 * 1024;
const STDIN_CHUNK_BYTES = 64 * 1024;
// Sessions a resumed Claude session may have gone through (each SessionEnd closes one).
const MAX_GENERATIONS = 1000;
const DEFAULT_PRINCIPAL = 'the person at the Claude Code permission prompt';
const OPTION_FLAGS: Readonly<Record<string, keyof HookOptions>> = { '--profile': 'profile', '--agent': 'agent', '--home': 'home', '--project': 'project', '--principal': 'principal', '--event': 'event', '--on-error': 'onError' };

/** What the hook answers Claude Code: the JSON to print (or nothing), and the exit code. */
interface HookAnswer {
  readonly output: Record<string, unknown> | null;
}

/** Runs the hook: reads the input, records it, answers. Returns the exit code. */
export async function claudeCodeHook(argv: readonly string[], io: HookIo = processIo()): Promise<number> {
  let options: HookOptions;
  try {
    options = parseHookArgs(argv);
  } catch (error) {
    io.error(`aura hook claude-code: ${errorText(error)}\n`);
    // A non-blocking error: Claude Code shows it and goes on.
    return 1;
  }
  let input: Record<string, unknown>;
  try {
    input = parseInput(await io.read());
  } catch (error) {
    const message = errorText(error);
    io.error(`aura hook claude-code: ${message}\n`);
    // An input that cannot be read is a call that cannot be checked: the PreToolUse hook refuses it when told to fail closed.
    if (options.event === 'PreToolUse' && failsClosed(options).closed) {
      io.write(`${JSON.stringify(preToolUse('deny', `aura could not read this call (${message}), and is told to refuse calls it cannot check.`))}\n`);
      return 0;
    }
    return 1;
  }
  const event = stringOf(input['hook_event_name']) ?? '';
  const { closed: failClosed, unread } = failsClosed(options);
  let session: Session | null = null;
  let ag: Agent | null = null;
  try {
    if (unread !== null) throw unread;
    ag = hookAgent(options, input);
    session = attach(ag, claudeSessionId(input));
    takeHandedApprovals(session);
    const answer = await handle(session, event, input, options, failClosed);
    if (!session.closed) session.detach();
    if (answer.output !== null) io.write(`${JSON.stringify(answer.output)}\n`);
    return 0;
  } catch (error) {
    // Said on stderr and to the model: a credential the error quotes is not repeated (the trail redacts its own copy).
    const message = errorText(error);
    // A call the profile denies by its own rules is refused whatever went wrong around it (the trail
    // held past the wait by a hook writing a huge result, a write that failed): its refusal needs no trail.
    const denied = event === 'PreToolUse' && ag !== null ? profileDenial(ag, input) : null;
    const decision = event === 'PreToolUse' ? (denied !== null || failClosed ? 'deny' : 'none') : 'none';
    if (session !== null && !session.closed) {
      try {
        session.emit('hook.error', { hook_event_name: event, error: { name: error instanceof Error ? error.name : 'Error', message }, fail: failClosed ? 'closed' : 'open', decision });
        session.detach();
      } catch {
        // The trail itself failed: stderr is all that is left.
      }
    }
    io.error(`aura hook claude-code: ${error instanceof AuraError ? '' : 'internal error: '}${message}\n`);
    if (decision === 'deny') {
      io.write(`${JSON.stringify(preToolUse('deny', denied ?? `aura could not check this call (${message}), and its profile says to refuse calls it cannot check.`))}\n`);
      return 0;
    }
    return 1;
  }
}

/** The refusal the profile's rules give the call on their own, or null (they pass it, or cannot be asked). */
function profileDenial(ag: Agent, input: Record<string, unknown>): string | null {
  try {
    const call = callOf(input);
    const denied = ag.policy.decide({ kind: 'tool.call', payload: call.recorded, tool: call.tool, skillId: null }).denied;
    return denied === null || denied.audit_only ? null : `aura refused this call: ${denied.message}. It was not recorded (the trail could not be written just now).`;
  } catch {
    return null;
  }
}

function processIo(): HookIo {
  return { read: readStdin, write: writeStdout, error: (text) => process.stderr.write(text) };
}

/**
 * Writes the answer straight to file descriptor 1 (the pipe Claude Code reads): making
 * `process.stdout` builds a socket stream, a millisecond of a process that must start fast. What a
 * non-blocking descriptor does not take at once goes through the stream.
 */
function writeStdout(text: string): void {
  const bytes = Buffer.from(text, 'utf8');
  let written = 0;
  try {
    while (written < bytes.length) written += fs.writeSync(1, bytes, written);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
    process.stdout.write(bytes.subarray(written));
  }
}

/** `--flag value` pairs (this path skips the full CLI's parser: it must start fast). */
export function parseHookArgs(argv: readonly string[]): HookOptions {
  const options: Record<string, string> = {};
  for (let at = 0; at < argv.length; at += 2) {
    const flag = argv[at] as string;
    const key = OPTION_FLAGS[flag];
    const value = argv[at + 1];
    if (key === undefined) throw new InvalidOptionError('option', flag, Object.keys(OPTION_FLAGS).join(', '));
    if (value === undefined || value.startsWith('--')) throw new InvalidOptionError(flag, value ?? null, 'a value after the flag');
    options[key] = value;
  }
  if (options['onError'] !== undefined) onErrorChoice('--on-error', options['onError']);
  return options;
}

/**
 * Reads stdin to its end. Straight from file descriptor 0 while it blocks (the pipe Claude Code
 * gives): no stream, and no wait on the event loop, in a process that must start fast. A
 * non-blocking descriptor is read as a stream.
 */
async function readStdin(): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  const add = (bytes: Buffer): void => {
    size += bytes.length;
    if (size > MAX_INPUT_BYTES) throw new InvalidOptionError('stdin', `${size} bytes`, `a hook input of at most ${MAX_INPUT_BYTES} bytes`);
    chunks.push(bytes);
  };
  const buffer = Buffer.allocUnsafe(STDIN_CHUNK_BYTES);
  for (;;) {
    let read: number;
    try {
      read = fs.readSync(0, buffer, 0, buffer.length, null);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // Windows reports a pipe's end as an error.
      if (code === 'EOF') break;
      if (code !== 'EAGAIN') throw error;
      for await (const chunk of process.stdin) add(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
      break;
    }
    if (read === 0) break;
    add(Buffer.from(buffer.subarray(0, read)));
  }
  return Buffer.concat(chunks);
}

function parseInput(bytes: Buffer): Record<string, unknown> {
  let value: unknown;
  try {
    value = parseJson(bytes.toString('utf8'));
  } catch {
    throw new InvalidOptionError('stdin', 'text that is not JSON', "Claude Code's hook input, one JSON object");
  }
  const input = objectOf(value);
  if (stringOf(input['session_id']) === null || stringOf(input['hook_event_name']) === null) throw new InvalidOptionError('stdin', value === null ? null : typeof value, 'an object with session_id and hook_event_name strings');
  return input;
}

/**
 * Whether a call the hook cannot check is refused: `--on-error`, else the profile's `on_error`. A
 * profile that cannot be read is a policy that cannot be applied: refused (unless `--on-error
 * allow`), and why it cannot be read is `unread`.
 */
function failsClosed(options: HookOptions): { readonly closed: boolean; readonly unread: unknown } {
  try {
    const fromProfile = onError(options.profile, options.home);
    return { closed: (options.onError ?? fromProfile) === 'deny', unread: null };
  } catch (error) {
    return { closed: options.onError !== 'allow', unread: error };
  }
}

/** The profile's `claude_code.on_error` (default `allow`: Claude Code's own permissions decide). */
function onError(profile: string | undefined, home: string | undefined): OnError {
  if (profile === undefined) return 'allow';
  // Read first here, from the parsed profile kept in the aura home's cache; the agent reads it again from this process's memory.
  const settings = objectOf(readProfileFile(profile, { cacheDir: path.join(auraHome(home), 'cache') }).values.claude_code);
  return onErrorChoice('claude_code.on_error', settings['on_error'] ?? 'allow');
}

function hookAgent(options: HookOptions, input: Record<string, unknown>): Agent {
  const fromProfile = options.profile === undefined ? null : stringOf(readProfileFile(options.profile).values.agent_ref);
  const project = path.basename(stringOf(input['cwd']) ?? 'session');
  const ref = options.agent ?? fromProfile ?? `claude-code/${slug(project)}`;
  return agent(ref, {
    ...(options.home === undefined ? {} : { home: options.home }),
    ...(options.project === undefined ? {} : { projectDir: options.project }),
    ...(options.profile === undefined ? {} : { profileFile: options.profile }),
  });
}

/** Claude's `session_id`, untrusted: only its hash names the aura session. */
function claudeSessionId(input: Record<string, unknown>): string {
  return stringOf(input['session_id']) as string;
}

/** The open aura session of this Claude session: the first generation that has not ended. */
function attach(ag: Agent, claudeSession: string): Session {
  for (let generation = 0; generation < MAX_GENERATIONS; generation++) {
    const sessionId = `aura_sess_${createHash('sha256').update(`claude-code\u0000${claudeSession}\u0000${generation}`).digest('hex').slice(0, 12)}`;
    try {
      return Session.attach(ag, { sessionId, ownerPid: ownerPid(), traceParent: null });
    } catch (error) {
      if (!(error instanceof SessionClosedError)) throw error;
    }
  }
  throw new SessionClosedError(claudeSession, `record it: ${MAX_GENERATIONS} sessions of it have ended`);
}

/** Approvals handed over by `aura approve` (a person letting a stopped session go on). */
function takeHandedApprovals(session: Session): void {
  for (const handed of new ApprovalInbox(handoffPathOf(session.files)).take()) {
    try {
      session.approve(handed.request_id, { principal: handed.principal });
    } catch {
      // Already approved or used by an earlier hook: each process reads the whole file.
    }
  }
}

async function handle(session: Session, event: string, input: Record<string, unknown>, options: HookOptions, failClosed: boolean): Promise<HookAnswer> {
  switch (event) {
    case 'PreToolUse':
      return preToolUseAnswer(session, input, failClosed);
    case 'PostToolUse':
      return postToolUse(session, input, options);
    case 'PostToolUseFailure': {
      const call = callOf(input);
      session.emit('tool.error', { ...call.recorded, error: { name: input['is_interrupt'] === true ? 'Interrupted' : 'ToolError', message: stringOf(input['error']) ?? 'tool failed' } });
      return { output: null };
    }
    case 'UserPromptSubmit':
      session.emit('turn.start', { input: stringOf(input['prompt']) ?? '', source: 'claude_code' });
      return { output: null };
    case 'Stop':
      quietly(() => session.emit('turn.end', { stop_hook_active: input['stop_hook_active'] === true, source: 'claude_code' }));
      return { output: null };
    case 'SessionStart':
      session.emit('claude_code.session_start', { source: stringOf(input['source']), model: stringOf(input['model']), cwd: stringOf(input['cwd']), permission_mode: stringOf(input['permission_mode']) });
      return { output: null };
    case 'SessionEnd':
      await session.close({ reason: `claude_code_${slug(stringOf(input['reason']) ?? 'other')}` });
      return { output: null };
    default:
      session.emit('claude_code.event', { hook_event_name: event });
      return { output: null };
  }
}

/**
 * A Claude tool call as aura records it. Arguments the trail cannot hold (nested too deep) are
 * recorded as why: the call is still recorded, and decided on what policy can see of it.
 */
function callOf(input: Record<string, unknown>): { tool: string; args: Record<string, unknown>; recorded: Record<string, unknown>; unrecorded: boolean } {
  const tool = stringOf(input['tool_name']) ?? '(no tool)';
  let args = objectOf(input['tool_input']);
  let unrecorded = false;
  try {
    canonicalJson(args, 'args');
  } catch (error) {
    if (!(error instanceof NonJsonValueError)) throw error;
    args = notRecorded(error);
    unrecorded = true;
  }
  const callId = stringOf(input['tool_use_id']);
  return { tool, args, recorded: { tool, args, ...(callId === null ? {} : { tool_call_id: callId }) }, unrecorded };
}

/** What the call acts on: the Bash command, the file, or the MCP server and tool. */
function targetOf(tool: string, args: Record<string, unknown>): Record<string, unknown> | null {
  const mcp = /^mcp__(.+?)__(.+)$/.exec(tool);
  if (mcp !== null) return { kind: 'mcp', server: mcp[1], tool: mcp[2] };
  if (tool === 'Bash' && typeof args['command'] === 'string') return { kind: 'bash', command: args['command'] };
  const file = stringOf(args['file_path']) ?? stringOf(args['notebook_path']) ?? stringOf(args['path']);
  return file === null ? null : { kind: 'file', path: file };
}

function preToolUseAnswer(session: Session, input: Record<string, unknown>, failClosed: boolean): HookAnswer {
  const call = callOf(input);
  const target = targetOf(call.tool, call.args);
  session.emit('tool.intent', { ...call.recorded, membrane: 'egress', ...(target === null ? {} : { target }), permission_mode: stringOf(input['permission_mode']) });
  try {
    session.emit('tool.call', call.recorded);
  } catch (error) {
    if (error instanceof ApprovalRequiredError) return { output: preToolUse('ask', `aura: ${call.tool} needs a person's approval (aura request ${error.data?.request_id ?? ''}); approving here runs exactly this call, once.`) };
    if (error instanceof PolicyDeniedError || error instanceof LoopBrokenError) return { output: preToolUse('deny', refusalOf(error, approveCommand(session.id)).text) };
    throw error;
  }
  // Arguments aura could not hold were not checked: never allowed on its word, refused when failing closed.
  if (call.unrecorded) return { output: failClosed ? preToolUse('deny', "aura could not check this call's arguments (nested too deep to record), and is told to refuse calls it cannot check.") : null };
  const decision = session.agent.policy.decide({ kind: 'tool.call', payload: call.recorded, tool: call.tool, skillId: null });
  return { output: decision.passed.some((result) => result.rule['type'] === 'allow_tools') ? preToolUse('allow', `aura: ${call.tool} is allowed by the profile`) : null };
}

function postToolUse(session: Session, input: Record<string, unknown>, options: HookOptions): HookAnswer {
  const call = callOf(input);
  // The tool ran: a call aura held was approved at Claude Code's permission prompt.
  if (session.approveCall(call.tool, call.args, { principal: options.principal ?? DEFAULT_PRINCIPAL }) !== null) session.emit('tool.call', call.recorded);
  const result = (response: unknown): void => void session.emit('tool.result', { ...call.recorded, result: response });
  try {
    try {
      // What a call whose arguments were not recorded printed cannot be told apart from a secret it printed.
      result(call.unrecorded ? { not_recorded: "its call's arguments could not be recorded, so neither is its answer" } : (input['tool_response'] ?? null));
    } catch (error) {
      // The tool ran: an answer the trail cannot hold is recorded as why, with the call it answers.
      if (!(error instanceof NonJsonValueError)) throw error;
      result(notRecorded(error));
    }
  } catch (error) {
    if (error instanceof PolicyDeniedError) return { output: { decision: 'block', reason: refusalOf(error, approveCommand(session.id)).text } };
    throw error;
  }
  return { output: null };
}

/** What stands in the trail for a value it cannot hold. */
function notRecorded(error: NonJsonValueError): { not_recorded: string } {
  return { not_recorded: error.message };
}

function preToolUse(decision: 'allow' | 'deny' | 'ask', reason: string): Record<string, unknown> {
  return { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: decision, permissionDecisionReason: reason } };
}

/** Records what may be refused without stopping the hook (the refusal is recorded by the session). */
function quietly(record: () => void): void {
  try {
    record();
  } catch (error) {
    if (!(error instanceof PolicyDeniedError)) throw error;
  }
}

function slug(text: string): string {
  const cleaned = text.toLowerCase().replace(/[^a-z0-9._-]+/g, '-').replace(/^[^a-z0-9]+/, '').slice(0, 64);
  return cleaned === '' ? 'session' : cleaned;
}

// Launchers between Claude Code and this process: a shell, npx.
const LAUNCHERS = /^(?:sh|bash|dash|zsh|fish|ksh|env|npm|npx|npm exec.*)$/;

/**
 * The process whose life the session shares: Claude Code, the first ancestor that is not a shell
 * or a launcher (read from /proc where there is one; elsewhere the parent).
 */
function ownerPid(): number {
  let pid = process.ppid;
  for (let depth = 0; depth < 8; depth++) {
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      return pid;
    }
    // pid (comm) state ppid …; comm may hold spaces and parentheses.
    const open = stat.indexOf('(');
    const close = stat.lastIndexOf(')');
    const comm = stat.slice(open + 1, close);
    const parent = Number(stat.slice(close + 2).split(' ')[1]);
    if (!LAUNCHERS.test(comm) || !Number.isInteger(parent) || parent <= 1) return pid;
    pid = parent;
  }
  return pid;
}
