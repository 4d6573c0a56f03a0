/**
 * HTTP on loopback, the one way aura serves anything (`aura mcp --http`, `aura proxy --http`,
 * `aura ui`): listening on 127.0.0.1 only, a Host check so that a DNS-rebinding page cannot reach
 * the server, an Origin check so that no page from elsewhere can either, and secrets compared as
 * SHA-256 digests in constant time.
 */

import { createHash } from 'node:crypto';
import type * as http from 'node:http';

const REQUEST_TIMEOUT_MS = 30_000;
const HEADERS_TIMEOUT_MS = 10_000;

/** Listens on 127.0.0.1 only; resolves once listening (port 0 picks a free port). */
export async function listenOnLoopback(server: http.Server, port: number): Promise<void> {
  // A request over loopback arrives in milliseconds: one that trickles in holds a socket and a file
  // descriptor for nothing (Node waits five minutes by default). Responses, streams too, are not bounded.
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  server.headersTimeout = HEADERS_TIMEOUT_MS;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
}

/** The port a listening server took. */
export function listeningPort(server: http.Server): number {
  const address = server.address();
  return typeof address === 'object' && address !== null ? address.port : 0;
}

const LOOPBACK_NAMES: ReadonlySet<string> = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * Why a request is not one this loopback server answers, or null when it is: its Host must name the
 * server (anything else is a DNS-rebinding attempt), and a browser page that sends it (its
 * `Origin`) must be on loopback too, as MCP's Streamable HTTP asks of a server (403 otherwise).
 * Clients that are not browsers send no `Origin`. `Origin: null` (a sandboxed or `file:` page)
 * names no place, and is refused.
 */
export function loopbackRefusal(req: http.IncomingMessage, port: number): string | null {
  if (req.headers.host !== `127.0.0.1:${port}` && req.headers.host !== `localhost:${port}`) return 'this server answers on loopback only';
  const origin = req.headers.origin;
  return origin === undefined || isLoopbackOrigin(origin) ? null : 'this server answers no page from outside loopback (Origin)';
}

function isLoopbackOrigin(origin: string): boolean {
  try {
    const url = new URL(origin);
    return (url.protocol === 'http:' || url.protocol === 'https:') && LOOPBACK_NAMES.has(url.hostname);
  } catch {
    return false;
  }
}

/** The SHA-256 digest of a secret, the form tokens are kept and compared in. */
export function secretDigest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}
