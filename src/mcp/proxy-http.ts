/**
 * `aura proxy --http PORT`: the proxy over Streamable HTTP, on loopback, behind the findings
 * channel's gate (a loopback Host, a bearer token from the tokens file: `authorize` in http.ts).
 * Stateful: each MCP session (`Mcp-Session-Id`) is one client connection, with its own upstream
 * and its own aura session, and it answers only the token that opened it.
 */

import { randomUUID } from 'node:crypto';
import * as http from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { authorize, refuse, type Grant } from './http.js';
import { listenOnLoopback } from './loopback.js';
import { ProxyConnection, type ConnectionEnd, type ProxySettings } from './proxy.js';

interface Live {
  readonly grant: Grant;
  readonly transport: StreamableHTTPServerTransport;
  readonly connection: ProxyConnection;
}

/** A listening proxy and how to stop it. */
export interface HttpProxy {
  readonly server: http.Server;
  /** Ends every connection (`proxy_stopped`), then stops listening. */
  stop(): Promise<ConnectionEnd[]>;
}

/** Starts the proxy on 127.0.0.1:`port` (0 picks a free port). */
export async function serveProxyHttp(port: number, grants: readonly Grant[], settings: ProxySettings): Promise<HttpProxy> {
  const live = new Map<string, Live>();
  const server = http.createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      settings.log(`request failed: ${error instanceof Error ? error.message : String(error)}`);
      if (!res.headersSent) refuse(res, 500, 'internal error');
    });
  });

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const grant = authorize(req, res, server, grants);
    if (grant === null) return;
    if ((req.url ?? '').split('?')[0] !== '/mcp') return refuse(res, 404, 'the MCP endpoint is /mcp');
    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const known = live.get(sessionId);
      // Another token's session is answered as unknown: its existence is not the caller's to learn.
      if (known === undefined || known.grant !== grant) return refuse(res, 404, 'unknown MCP session: initialize a new one');
      return known.transport.handleRequest(req, res);
    }
    if (req.method !== 'POST') return refuse(res, 400, 'no Mcp-Session-Id: POST an initialize request first');
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        live.set(id, { grant, transport, connection });
      },
    });
    const connection = new ProxyConnection(transport, settings, 'http');
    void connection.done.then(() => {
      if (transport.sessionId !== undefined) live.delete(transport.sessionId);
    });
    await connection.start();
    await transport.handleRequest(req, res);
    // Not an initialize request: the transport refused it and no session began.
    if (transport.sessionId === undefined) await connection.end('client_disconnected');
  }

  await listenOnLoopback(server, port);
  return {
    server,
    async stop() {
      const ends = await Promise.all([...live.values()].map((l) => l.connection.end('proxy_stopped')));
      await new Promise<void>((resolve) => server.close(() => resolve()));
      return ends;
    },
  };
}
