/**
 * HTTP on loopback, the one way aura serves anything (`aura mcp --http`, `aura proxy --http`,
 * `aura ui`): listening on 127.0.0.1 only, a Host check so that a DNS-rebinding page cannot reach
 * the server, and secrets compared as SHA-256 digests in constant time.
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

/** True when the request names this loopback server as its Host (anything else is a rebinding attempt). */
export function isLoopbackHost(req: http.IncomingMessage, port: number): boolean {
  return req.headers.host === `127.0.0.1:${port}` || req.headers.host === `localhost:${port}`;
}

/** The SHA-256 digest of a secret, the form tokens are kept and compared in. */
export function secretDigest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}
