/**
 * `aura proxy`: an MCP gateway in front of any MCP server (DESIGN §1 mcp/). One
 * {@link ProxyConnection} serves one client connection: a low-level SDK `Server` toward the client,
 * a `Client` toward the upstream, and one aura session between them.
 *
 * Everything but `tools/call` passes through unchanged, both ways (initialize capabilities are
 * mirrored; requests, notifications, progress and cancellation are forwarded). Every `tools/call`
 * goes through `session.tool()`, the guarded path: policy, approvals, capabilities and secret
 * injection, schema checks and whatever else the session applies. What it returns is what the
 * client gets; what it refuses never reaches the upstream. Upstream annotations such as
 * `readOnlyHint` are hints to the client, never trust: policy does not read them.
 *
 * A secret injected into one call was given to the upstream, which may say it anywhere: once the
 * session has injected one, everything the upstream sends toward the client (answers, errors and
 * their data, notifications, progress, its own requests) has it replaced, as a tool's answer
 * has, and so does its stderr (upstream-log.ts).
 */

import * as path from 'node:path';
import type { Writable } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolRequestSchema,
  CallToolResultSchema,
  ErrorCode,
  LATEST_PROTOCOL_VERSION,
  ListToolsRequestSchema,
  McpError,
  ResultSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
  type CallToolResult,
  type ClientCapabilities,
  type InitializeRequest,
  type JSONRPCRequest,
  type Notification,
  type Request,
  type Result,
  type ServerCapabilities,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { AuraConfig } from '../config/config.js';
import { AuraError, InvalidOptionError } from '../errors.js';
import { redactCredentials } from '../middleware/credential-text.js';
import { SessionRedactor, type RelayScrubber } from '../middleware/redact.js';
import { profileError } from '../policy/profile-source.js';
import { approveCommand, refusalOf } from '../policy/refusal.js';
import { agent } from '../session/agent.js';
import { SESSION_KEY_RULE, sessionKeyOf } from '../session/ids.js';
import { readProfileFile } from '../session/profile-file.js';
import { traceparentOrNull } from '../session/trace-context.js';
import type { Session, SessionResult } from '../session/session.js';
import { objectOf, stringOf } from '../spine/json-shape.js';
import { ApprovalInbox, handoffPathOf } from '../store/approval-handoff.js';
import { VERSION } from '../version.js';
import { ClientGate } from './client-gate.js';
import { FindingsService } from './findings-service.js';
import { buildServer } from './server.js';
import { MALFORMED, TOO_LARGE, toolResultOf } from './refused-answer.js';
import { UpstreamProcess, upstreamEndReason, upstreamTransport, type UpstreamSpec } from './upstream.js';
import { UpstreamLog } from './upstream-log.js';

/** The findings tool's name, unless an upstream tool already has it. */
export const FINDINGS_TOOL = 'get_session_findings';
/** Prefixed to the findings tool's name (as often as needed) when an upstream tool has the name. */
export const CLASH_PREFIX = 'aura__';

/** What every connection of one proxy shares. */
export interface ProxySettings {
  readonly upstream: UpstreamSpec;
  /** `--agent`, else the profile's `agent_ref`, else null: `proxy/<upstream name>`. */
  readonly agentRef: string | null;
  readonly profileFile: string | null;
  /** Offer `get_session_findings` (profile `proxy: {findings_tool}`, default true). */
  readonly findingsTool: boolean;
  readonly config: AuraConfig;
  /** Where log lines go (stderr: stdout may carry the protocol). */
  readonly log: (line: string) => void;
  /** Where a stdio upstream's stderr goes, a line at a time once scrubbed (the proxy's stderr). */
  readonly upstreamStderr: Writable;
  /** The largest message the upstream may send (`--max-message-bytes`): a line over stdio, a JSON answer or an event over HTTP; a larger answer fails its call. */
  readonly maxMessageBytes: number;
}

/** Why a connection's session was closed, as `session.close` records it. */
export type CloseReason = 'client_disconnected' | 'upstream_exited' | 'upstream_crashed' | 'proxy_stopped' | 'connect_failed' | 'idle_timeout';

/** How a connection ended. */
export interface ConnectionEnd {
  readonly reason: CloseReason;
  /** Null when no session was opened (the client never initialized, or connecting failed). */
  readonly session: SessionResult | null;
}

// The client owns the deadline of its calls and cancels them; the proxy's own timeout only
// catches an upstream that never answers at all. Progress restarts it.
const FORWARD_TIMEOUT_MS = 24 * 60 * 60 * 1000;
const FORWARD: RequestOptions = { timeout: FORWARD_TIMEOUT_MS, resetTimeoutOnProgress: true };

// Knows no secret: the scrubbing before a session is open, and toward the upstream, which was
// given the secrets it could send back.
const NO_SECRETS: RelayScrubber = new SessionRedactor();

/**
 * Reads the proxy's own profile key, `proxy: {findings_tool: boolean}`, and the profile's
 * `agent_ref`. Other keys are read by `agent()`.
 * @throws NotFoundError, ReadError, ProfileError
 */
export function readProxyProfile(file: string): { findingsTool: boolean; agentRef: string | null } {
  const { source, values } = readProfileFile(file);
  const proxy = values.proxy ?? {};
  const settings = objectOf(proxy);
  for (const [key, value] of Object.entries(settings)) {
    if (key !== 'findings_tool') throw profileError(source, ['proxy', key], 'unknown proxy key; expected findings_tool');
    if (typeof value !== 'boolean') throw profileError(source, ['proxy', key], 'expected true or false');
  }
  return { findingsTool: settings['findings_tool'] !== false, agentRef: stringOf(values.agent_ref) };
}

/** One client connection through the proxy, and its session. */
export class ProxyConnection {
  /** Settles once the session is closed and both ends are let go. */
  readonly done: Promise<ConnectionEnd>;
  /** The connection's session, once the client has initialized. */
  session: Session | null = null;

  private readonly gate: ClientGate;
  private readonly upstream: Client;
  private readonly upstreamTransport: Transport;
  private server: Server | null = null;
  private findings: Client | null = null;
  private findingsName: string | null = null;
  private inbox: ApprovalInbox | null = null;
  private building: Promise<void> | null = null;
  private readonly inFlight = new Set<Promise<unknown>>();
  private ending: CloseReason | null = null;
  private resolveDone!: (end: ConnectionEnd) => void;
  private clientInitialized!: () => void;
  private readonly clientReady = new Promise<void>((resolve) => {
    this.clientInitialized = resolve;
  });

  /**
   * @param client the client's transport, not started: the connection starts it
   * @param transport how the client reaches the proxy (recorded in `mcp.session`)
   */
  constructor(
    client: Transport,
    private readonly settings: ProxySettings,
    private readonly transport: 'stdio' | 'http',
  ) {
    this.done = new Promise((resolve) => {
      this.resolveDone = resolve;
    });
    this.gate = new ClientGate(client, transport === 'stdio', (request) => {
      this.building = this.build(request);
    });
    this.gate.onclose = () => void this.end('client_disconnected');
    this.upstream = new Client({ name: 'aura-proxy', version: VERSION });
    this.upstreamTransport = upstreamTransport(settings.upstream, settings.maxMessageBytes, new UpstreamLog(settings.upstreamStderr, () => this.scrubber));
  }

  /** What clears the secrets the session injected from what the upstream sends toward the client. */
  private get scrubber(): RelayScrubber {
    return this.session?.scrubber ?? NO_SECRETS;
  }

  /**
   * An answer of the upstream's as the client may get it.
   * @throws Error, failing the request, for an answer that cannot be cleared of an injected secret
   */
  private cleared<T>(answer: T): T {
    const cleared = this.scrubber.withoutInjectedWhole(answer);
    if (cleared === undefined) throw new Error("aura proxy: the MCP server's answer is not passed on: it cannot be cleared whole of the secrets injected into this session's calls");
    return cleared;
  }

  /** Starts listening to the client. */
  async start(): Promise<void> {
    await this.gate.inner.start();
  }

  /**
   * Ends the connection: lets calls in flight settle (a client gone, a proxy stopping or an idle
   * session first closes the upstream, which fails them), closes the session with `reason`, then
   * both ends.
   * The first reason wins; later calls wait for the same end.
   */
  async end(reason: CloseReason): Promise<ConnectionEnd> {
    if (this.ending !== null) return this.done;
    this.ending = reason;
    await this.building?.catch(() => undefined);
    if (reason === 'client_disconnected' || reason === 'proxy_stopped' || reason === 'idle_timeout') await this.upstream.close().catch(() => undefined);
    await Promise.allSettled([...this.inFlight]);
    // The replies of those calls are sent on the next turns of the event loop: let them go out.
    await new Promise((resolve) => setImmediate(resolve));
    let result: SessionResult | null = null;
    const session = this.session;
    if (session !== null && !session.closed) {
      const exit = this.upstreamTransport instanceof UpstreamProcess ? this.upstreamTransport.exit : null;
      try {
        if ((reason === 'upstream_exited' || reason === 'upstream_crashed') && exit !== null) session.emit('mcp.upstream_exit', { code: exit.code, signal: exit.signal });
        result = await session.close({ reason });
        this.settings.log(`session ${session.id} closed (${reason}); trail ${result.log_path}`);
      } catch (error) {
        this.settings.log(`closing session ${session.id} failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    await this.upstream.close().catch(() => undefined);
    await this.findings?.close().catch(() => undefined);
    await (this.server ?? this.gate).close().catch(() => undefined);
    const end: ConnectionEnd = { reason, session: result };
    this.resolveDone(end);
    return end;
  }

  /** On the client's `initialize`: connect the upstream, open the session, build the server, replay. */
  private async build(message: JSONRPCRequest & InitializeRequest): Promise<void> {
    const { settings } = this;
    try {
      this.upstream.registerCapabilities(mirrorClientCapabilities(message.params.capabilities));
      this.upstream.onclose = () => void this.end(upstreamEndReason(this.upstreamTransport));
      await this.upstream.connect(this.upstreamTransport);
      const upstreamInfo = this.upstream.getServerVersion() ?? { name: 'upstream', version: '0' };
      const home = settings.config.paths;
      const ag = agent(settings.agentRef ?? `proxy/${slug(upstreamInfo.name)}`, {
        home: home.home,
        ...(home.projectDir === null ? {} : { projectDir: home.projectDir }),
        ...(settings.profileFile === null ? {} : { profileFile: settings.profileFile }),
      });
      const sessionKey = clientSessionKey(message, this.gate.sessionId);
      // A client that traces says so in `_meta.traceparent` (as on every request): the session joins its trace.
      const traceParent = clientTraceparent(message.params._meta);
      const session = ag.session(sessionKey === undefined ? { traceParent } : { sessionKey, traceParent });
      this.session = session;
      const requested = message.params.protocolVersion;
      session.emit('mcp.session', {
        mcp_session_id: this.gate.sessionId ?? null,
        transport: this.transport,
        network_transport: this.transport === 'stdio' ? 'pipe' : 'tcp',
        protocol_version: SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST_PROTOCOL_VERSION,
        client: { name: message.params.clientInfo.name, version: message.params.clientInfo.version },
        upstream: { name: upstreamInfo.name, version: upstreamInfo.version, transport: settings.upstream.transport },
      });
      this.inbox = new ApprovalInbox(handoffPathOf(session.files));
      if (settings.findingsTool) await this.connectFindings(session);
      const capabilities = mirrorServerCapabilities(this.upstream.getServerCapabilities() ?? {});
      const instructions = this.upstream.getInstructions();
      const server = new Server({ ...upstreamInfo }, { capabilities, ...(instructions === undefined ? {} : { instructions }) });
      this.server = server;
      this.wire(server);
      await server.connect(this.gate);
      settings.log(`session ${session.id} opened for ${message.params.clientInfo.name} in front of ${upstreamInfo.name}`);
      this.gate.open();
      if (capabilities.tools !== undefined && this.findings !== null) this.findingsName = findingsToolName(await this.upstreamToolNames(null));
    } catch (error) {
      // The upstream's URL or command line may hold a credential; the client gets neither.
      const why = redactCredentials(error instanceof Error ? error.message : String(error));
      settings.log(`cannot serve this client: ${why}`);
      await this.gate.send({ jsonrpc: '2.0', id: message.id, error: { code: ErrorCode.InternalError, message: `aura proxy: ${why}` } }).catch(() => undefined);
      void this.end('connect_failed');
    }
  }

  /** Everything but tools: forwarded both ways, unchanged. */
  private wire(server: Server): void {
    const upstream = this.upstream;
    server.oninitialized = () => this.clientInitialized();
    // The SDK answers logging/setLevel itself when logging is declared; the upstream must hear it.
    server.removeRequestHandler('logging/setLevel');
    server.fallbackRequestHandler = async (request, extra) => this.cleared(await forward(upstream, request, extra.signal, extra.sendNotification, this.scrubber));
    server.fallbackNotificationHandler = (notification) => upstream.notification(notification);
    // Requests and notifications from the upstream wait until the client has initialized.
    upstream.fallbackRequestHandler = async (request, extra) => {
      await this.clientReady;
      return forward(server, this.cleared(request), extra.signal, extra.sendNotification, NO_SECRETS);
    };
    upstream.fallbackNotificationHandler = async (notification: Notification) => {
      if (notification.method === 'notifications/tools/list_changed') this.findingsName = null;
      await this.clientReady;
      const cleared = this.scrubber.withoutInjectedWhole(notification);
      // Dropped, as one over the size limit is; the line leaves out its method, which the upstream chose.
      if (cleared === undefined) this.settings.log("dropped a notification of the MCP server's: it cannot be cleared whole of the secrets injected into this session's calls");
      else await server.notification(cleared);
    };
    server.setRequestHandler(ListToolsRequestSchema, async (request, extra) => {
      const page = this.cleared(await upstream.request({ method: 'tools/list', params: request.params }, ResultSchema, { ...FORWARD, signal: extra.signal })) as Result & { tools?: Tool[]; nextCursor?: string };
      if (this.findings === null || request.params?.cursor !== undefined) return page;
      this.findingsName = findingsToolName(await this.upstreamToolNames(page));
      return { ...page, tools: [...(page.tools ?? []), { ...(await this.findingsTool()), name: this.findingsName }] };
    });
    server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
      const call = this.callTool(request.params, extra.signal, extra.sendNotification);
      this.inFlight.add(call);
      return call.finally(() => this.inFlight.delete(call));
    });
  }

  /** One `tools/call`, through the guarded path. */
  private async callTool(params: { name: string; arguments?: Record<string, unknown> | undefined; _meta?: Record<string, unknown> | undefined }, signal: AbortSignal, notify: (n: Notification) => Promise<void>): Promise<CallToolResult> {
    const session = this.session as Session;
    const { name } = params;
    this.takeApprovals(session);
    this.findingsName ??= this.findings === null ? null : findingsToolName(await this.upstreamToolNames(null));
    const findings = name === this.findingsName ? this.findings : null;
    const traceParent = clientTraceparent(params._meta);
    try {
      return await session.tool(name, params.arguments ?? {}, (live) => {
        if (findings !== null) return findings.request({ method: 'tools/call', params: { name: FINDINGS_TOOL, arguments: live } }, CallToolResultSchema, { signal });
        const request = { method: 'tools/call', params: { name, arguments: live, ...(params._meta === undefined ? {} : { _meta: params._meta }) } };
        // The guarded path clears the answer, as any tool's; `forward` clears progress and errors.
        return forward(this.upstream, request, signal, notify, this.scrubber).then(toolResultOf);
      }, traceParent === null ? {} : { traceParent });
    } catch (error) {
      if (error instanceof AuraError) return refusal(error, session.id);
      const refused = objectOf(objectOf(error)['data']);
      if (refused[TOO_LARGE] !== undefined) {
        return {
          isError: true,
          content: [{ type: 'text', text: `The tool ran, but its answer was not passed on: ${(error as Error).message}. Ask for less at a time (a smaller page, a narrower query). It is recorded in aura session ${session.id}.` }],
        };
      }
      if (refused[MALFORMED] !== undefined) {
        return {
          isError: true,
          content: [{ type: 'text', text: `The MCP server answered, but its answer was not passed on: ${(error as Error).message}. Whether the call took effect is unknown. It is recorded in aura session ${session.id}.` }],
        };
      }
      if (this.ending === 'upstream_exited' || this.ending === 'upstream_crashed' || connectionClosed(error)) {
        return {
          isError: true,
          content: [{ type: 'text', text: `The MCP server behind aura ended during this call (${this.ending ?? 'connection closed'}): whether the call took effect is unknown. It is recorded in aura session ${session.id}.` }],
        };
      }
      throw error;
    }
  }

  /** Records approvals handed over by `aura approve` since the last call (the trail's one writer records them). */
  private takeApprovals(session: Session): void {
    for (const handed of this.inbox?.take() ?? []) {
      try {
        session.approve(handed.request_id, { principal: handed.principal });
      } catch (error) {
        this.settings.log(`approval of ${handed.request_id} not applied: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }

  /** The findings channel's own server, in process, confined to this connection's session. */
  private async connectFindings(session: Session): Promise<void> {
    const { paths } = this.settings.config;
    // A caller over HTTP may not learn where the proxy keeps its files: its answers name them by what they are.
    const label = this.transport === 'http' ? { label: path.basename(paths.sessions) } : {};
    const service = new FindingsService([{ sessionsDir: paths.sessions, sealLog: paths.sealLog, anchorLog: paths.anchorLog, ...label }], false, session.id);
    const [ours, theirs] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: 'aura-proxy', version: VERSION });
    await buildServer(service).connect(theirs);
    await client.connect(ours);
    this.findings = client;
  }

  private findingsToolCache: Tool | null = null;

  /** The findings channel's definition of `get_session_findings` (schemas, annotations), listed once. */
  private async findingsTool(): Promise<Tool> {
    if (this.findingsToolCache === null) {
      const { tools } = await (this.findings as Client).listTools();
      this.findingsToolCache = tools.find((t) => t.name === FINDINGS_TOOL) ?? null;
    }
    return this.findingsToolCache as Tool;
  }

  /** Every upstream tool name, walking the pages after `first` (or from the start). */
  private async upstreamToolNames(first: (Result & { tools?: Tool[]; nextCursor?: string }) | null): Promise<Set<string>> {
    const names = new Set<string>();
    if (this.upstream.getServerCapabilities()?.tools === undefined) return names;
    let page = first ?? (await this.upstream.listTools(undefined, FORWARD));
    for (;;) {
      for (const tool of page.tools ?? []) names.add(tool.name);
      if (page.nextCursor === undefined) return names;
      page = await this.upstream.listTools({ cursor: page.nextCursor }, FORWARD);
    }
  }
}

/**
 * The name-clash rule: ours is `get_session_findings`, or, when an upstream tool has that name,
 * `aura__get_session_findings` (prefixed again as long as the name is taken). Both stay listed.
 */
export function findingsToolName(upstreamNames: ReadonlySet<string>): string {
  let name = FINDINGS_TOOL;
  while (upstreamNames.has(name)) name = `${CLASH_PREFIX}${name}`;
  return name;
}

/** A refusal by the guarded path, as a tool result the model can act on (`isError`, the refusal's text and code). */
export function refusal(error: AuraError, sessionId: string): CallToolResult {
  const { text, code, request_id: requestId } = refusalOf(error, approveCommand(sessionId));
  return {
    isError: true,
    content: [{ type: 'text', text }],
    _meta: { 'aura/refusal': { code, session_id: sessionId, ...(requestId === null ? {} : { request_id: requestId }) } },
  };
}

/**
 * Forwards a request to the other side and answers with its result, unchanged. Progress the
 * caller asked for is relayed under the caller's own token; cancellation follows `signal`. An
 * error from the other side keeps its code, message (the SDK prefixes its messages) and data.
 * Progress and errors go to the caller as `toCaller` clears them; the result is the caller's to clear.
 */
async function forward(target: Client | Server, request: Request, signal: AbortSignal, notify: (n: Notification) => Promise<void>, toCaller: RelayScrubber): Promise<Result> {
  const token = objectOf(request.params?._meta)['progressToken'];
  const relay =
    token === undefined
      ? {}
      : {
          onprogress: (progress: object) => {
            const params = toCaller.withoutInjectedWhole({ ...progress, progressToken: token });
            if (params !== undefined) void notify({ method: 'notifications/progress', params }).catch(() => undefined);
          },
        };
  try {
    // Either side's request() takes any method at run time; their types name only their own.
    return await (target as Client).request({ method: request.method, params: request.params } as never, ResultSchema, { ...FORWARD, signal, ...relay });
  } catch (error) {
    if (!(error instanceof McpError)) throw error;
    // Data that cannot be cleared whole (nested deeper than a record may be, not plain JSON) is
    // dropped: the code and the message still say what failed, and no secret rides in it.
    const data = toCaller.withoutInjectedWhole(error.data);
    const message = toCaller.withoutInjected(error.message.replace(`MCP error ${error.code}: `, ''));
    // The SDK's own word stays an McpError, as `callTool` reads it.
    if (connectionClosed(error) || timedOut(error)) throw new McpError(error.code, message, data);
    throw Object.assign(new Error(message), { code: error.code, data });
  }
}

/**
 * The SDK's word that the connection closed under a request. Its code, -32000, is also JSON-RPC's
 * first server error, which a server answers with for its own reasons (a rate limit): that one is
 * the server's answer, passed on as it is.
 */
function connectionClosed(error: unknown): boolean {
  return error instanceof McpError && error.code === ErrorCode.ConnectionClosed && /Connection closed$/.test(error.message);
}

/**
 * The SDK's word that a request got no answer in time. Its code, -32001, is also one a server
 * answers with for its own reasons (a rejected credential): that one is the server's answer,
 * passed on as it is.
 */
function timedOut(error: McpError): boolean {
  return error.code === ErrorCode.RequestTimeout && /^MCP error -32001: (?:Request timed out|Maximum total timeout exceeded)$/.test(error.message);
}

/** Where a client declares its session key in `initialize`: `params._meta["aura/session_key"]`. */
export const SESSION_KEY_META = 'aura/session_key';

/**
 * The session key of a client connection (SuperAuditor §7: opaque and client-declared): the label
 * its `initialize` declares under `_meta["aura/session_key"]`, which it can reuse across
 * connections; else its `Mcp-Session-Id`, the MCP session it names on every Streamable HTTP
 * request; else none (over stdio the pipe is the session).
 * @throws InvalidOptionError for a declared key that is not a label
 */
function clientSessionKey(message: InitializeRequest, mcpSessionId: string | undefined): string | undefined {
  const declared = objectOf(message.params._meta)[SESSION_KEY_META];
  if (declared === undefined) return mcpSessionId;
  const key = sessionKeyOf(declared);
  if (key === null) throw new InvalidOptionError(`_meta["${SESSION_KEY_META}"]`, declared, SESSION_KEY_RULE);
  return key;
}

/** The client's `_meta.traceparent` when it is a valid one (untrusted: anything else is ignored), else null. */
function clientTraceparent(meta: unknown): string | null {
  const value = objectOf(meta)['traceparent'];
  return traceparentOrNull(value) === null ? null : (value as string);
}

/** What the client may do, declared to the upstream as the proxy's own (tasks are not relayed). */
function mirrorClientCapabilities(client: ClientCapabilities): ClientCapabilities {
  const mirrored = { ...client };
  delete mirrored.tasks;
  return mirrored;
}

/**
 * What the upstream offers, declared to the client as the proxy's own, plus tools (the findings
 * tool). Tasks are not relayed: a task's result would reach the client outside the guarded path.
 */
function mirrorServerCapabilities(upstream: ServerCapabilities): ServerCapabilities {
  const mirrored = { ...upstream, tools: { ...upstream.tools } };
  delete mirrored.tasks;
  return mirrored;
}

/** An agent-ref slug from an upstream's name (`mcp-servers/everything` → `mcp-servers-everything`). */
function slug(name: string): string {
  const cleaned = name
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[^a-z0-9]+/, '')
    .slice(0, 64);
  return cleaned === '' ? 'upstream' : cleaned;
}
