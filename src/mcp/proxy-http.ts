/**
 * `aura proxy --http PORT`: the proxy over Streamable HTTP, on loopback, behind the findings
 * channel's gate (a loopback Host, a bearer token from the tokens file: `authorize` in http.ts).
 * Stateful: each MCP session (`Mcp-Session-Id`) is one client connection, with its own upstream
 * and its own aura session, and it answers only the token that opened it. Sessions are bounded:
 * so many at once in all and for one token (each holds an upstream, a process for a stdio
 * upstream), and a session that no request has used for the idle time is closed, its upstream
 * with it: a client that goes away without ending its session leaves nothing running. A request's
 * body is read by http-body.ts, as the stdio client's messages are read by json-rpc-lines.ts.
 */

import { randomUUID } from 'node:crypto';
import * as http from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { authorize, refuse, type Grant } from './http.js';
import { readJsonBody } from './http-body.js';
import { listenOnLoopback } from './loopback.js';
import { ProxyConnection, type ConnectionEnd, type ProxySettings } from './proxy.js';

/** How many sessions the proxy keeps, and how long an unused one lives. */
export interface HttpProxyLimits {
  /** Sessions at once, for every token together (`--max-sessions`). */
  readonly maxSessions: number;
  /** Sessions at once for one token (`--max-sessions-per-token`). */
  readonly maxSessionsPerToken: number;
  /** A session with no request for this long is closed, as `idle_timeout` (`--idle-timeout`, in seconds). */
  readonly idleTimeoutMs: number;
}

/** The limits unless the command line sets them. */
export const DEFAULT_HTTP_PROXY_LIMITS: HttpProxyLimits = { maxSessions: 32, maxSessionsPerToken: 8, idleTimeoutMs: 15 * 60 * 1000 };

interface Live {
  readonly grant: Grant;
  readonly transport: StreamableHTTPServerTransport;
  readonly connection: ProxyConnection;
  /** Requests being answered: a session is idle only when there are none. */
  busy: number;
  idle: NodeJS.Timeout | null;
}

/** A listening proxy and how to stop it. */
export interface HttpProxy {
  readonly server: http.Server;
  /** Ends every connection (`proxy_stopped`), then stops listening. */
  stop(): Promise<ConnectionEnd[]>;
}

/** Starts the proxy on 127.0.0.1:`port` (0 picks a free port). */
export async function serveProxyHttp(port: number, grants: readonly Grant[], settings: ProxySettings, limits: HttpProxyLimits = DEFAULT_HTTP_PROXY_LIMITS): Promise<HttpProxy> {
  // Every connection from its first request on, so one being set up counts against the limits too.
  const connections = new Set<Live>();
  const live = new Map<string, Live>();
  const server = http.createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      settings.log(`request failed: ${error instanceof Error ? error.message : String(error)}`);
      if (!res.headersSent) refuse(res, 500, 'internal error');
    });
  });

  /** Restarts the idle clock of a session that has no request in flight. */
  function rest(entry: Live): void {
    if (entry.idle !== null) clearTimeout(entry.idle);
    entry.idle = null;
    if (entry.busy > 0 || !connections.has(entry)) return;
    entry.idle = setTimeout(() => {
      settings.log(`closing a session unused for ${limits.idleTimeoutMs / 1000} s`);
      void entry.connection.end('idle_timeout');
    }, limits.idleTimeoutMs);
    entry.idle.unref();
  }

  /** Answers one request of a session, counting it as use while it lasts. */
  async function serve(entry: Live, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    // A GET is the session's standing stream of notifications, open while the client is: not use.
    if (req.method !== 'POST') return entry.transport.handleRequest(req, res);
    entry.busy++;
    rest(entry);
    res.once('close', () => {
      entry.busy--;
      rest(entry);
    });
    const body = await readJsonBody(req, res);
    if (body !== null) await entry.transport.handleRequest(req, res, body.value);
  }

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const grant = authorize(req, res, server, grants);
    if (grant === null) return;
    if ((req.url ?? '').split('?')[0] !== '/mcp') return refuse(res, 404, 'the MCP endpoint is /mcp');
    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const known = live.get(sessionId);
      // Another token's session is answered as unknown: its existence is not the caller's to learn.
      if (known === undefined || known.grant !== grant) return refuse(res, 404, 'unknown MCP session: initialize a new one');
      return serve(known, req, res);
    }
    if (req.method !== 'POST') return refuse(res, 400, 'no Mcp-Session-Id: POST an initialize request first');
    if (connections.size >= limits.maxSessions) {
      settings.log(`refused a session: ${connections.size} are open, the most (--max-sessions)`);
      return refuse(res, 503, `the proxy has ${connections.size} sessions open, its most: try again when one has ended`);
    }
    const mine = [...connections].filter((c) => c.grant === grant).length;
    if (mine >= limits.maxSessionsPerToken) {
      settings.log(`refused a session: its token has ${mine} open, the most (--max-sessions-per-token)`);
      return refuse(res, 429, `this token has ${mine} sessions open, its most: end one (DELETE /mcp with its Mcp-Session-Id) or let one go unused until it is closed`);
    }
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        live.set(id, entry);
      },
    });
    const connection = new ProxyConnection(transport, settings, 'http');
    const entry: Live = { grant, transport, connection, busy: 0, idle: null };
    connections.add(entry);
    void connection.done.then(() => {
      connections.delete(entry);
      if (entry.idle !== null) clearTimeout(entry.idle);
      if (transport.sessionId !== undefined) live.delete(transport.sessionId);
    });
    // A client gone before its initialize was answered holds no session it can use: its slot is
    // freed now, not at the idle timeout (a token that kept doing so would lock itself out). Heard
    // from before the upstream starts, as the client may go while it does; ended once it has.
    const started = connection.start();
    res.once('close', () => {
      if (!res.writableFinished) void started.then(() => connection.end('client_disconnected'), () => undefined);
    });
    await started;
    await serve(entry, req, res);
    // Not an initialize request: the transport refused it and no session began.
    if (transport.sessionId === undefined) await connection.end('client_disconnected');
  }

  await listenOnLoopback(server, port);
  return {
    server,
    async stop() {
      const ends = await Promise.all([...connections].map((c) => c.connection.end('proxy_stopped')));
      await new Promise<void>((resolve) => server.close(() => resolve()));
      return ends;
    },
  };
}
