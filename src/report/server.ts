/**
 * `aura ui`: the sessions folder as web pages, read-only, on 127.0.0.1 only.
 *
 * Every page lives under a secret path prefix drawn at random when the server starts (`/<16
 * random bytes, base64url>/`), and access needs the random token in the URL the command prints.
 * The first request carries the token as `?token=`; the answer sets it as an HttpOnly,
 * SameSite=Strict cookie whose Path is the prefix and redirects to the same path without it, so
 * the token does not linger in the address bar or history. Browsers do not tell ports apart for
 * cookies: with Path=/ the cookie would go to every other server on 127.0.0.1 the browser visits,
 * which could replay it here. Scoped to the prefix, it goes only to a path that server cannot
 * know. Every other request needs the cookie (or the query); without it the answer is 401. A path
 * outside the prefix is 404 whatever it carries, and the prefix is compared as a digest in constant
 * time, so neither an answer nor its timing tells a guess how close it came. A Host header that is
 * not this loopback address is refused (a DNS-rebinding page cannot reach it); anything but GET and
 * HEAD is 405. A session id from the URL goes through the same gate as the CLI's
 * (store/session-files.ts): nothing outside the sessions folder resolves, and a refused id is 404,
 * like a missing one.
 */

import { randomBytes, timingSafeEqual } from 'node:crypto';
import * as http from 'node:http';
import { AuraError } from '../errors.js';
import { redactCredentials } from '../middleware/credential-text.js';
import { listeningPort, listenOnLoopback, loopbackRefusal, secretDigest } from '../mcp/loopback.js';
import type { KeyRing } from '../spine/signing.js';
import { materialWithKeys, type SessionSource } from '../store/source.js';
import { FolderSource } from '../store/folder-source.js';
import { reportHtml, sessionsListHtml, type RenderedPage } from './html.js';
import { reportPageModel } from './page-model.js';

/** What the server serves. */
export interface UiOptions {
  /** The sessions: the local folder, or the fleet store. */
  readonly source: SessionSource;
  readonly keys: KeyRing | null;
  readonly exportPii: boolean;
  /** Names this aura in the pages. */
  readonly generator: string;
  /** The access token; random (32 bytes, base64url) when not given. */
  readonly token?: string;
}

/** A running `aura ui`. */
export interface UiServer {
  readonly server: http.Server;
  readonly port: number;
  readonly token: string;
  /** The URL to open: it carries the secret path prefix and the token. */
  readonly url: string;
  close(): Promise<void>;
}

/** Starts the server on 127.0.0.1:`port` (0 picks a free port). */
export async function serveUi(port: number, options: UiOptions): Promise<UiServer> {
  const token = options.token ?? randomBytes(32).toString('base64url');
  const prefix = randomBytes(16).toString('base64url');
  const secrets: Secrets = { token: secretDigest(token), prefix: secretDigest(prefix) };
  const server = http.createServer((req, res) => {
    handle(req, res, listening, secrets, options).catch((error: unknown) => {
      process.stderr.write(`aura ui: ${redactCredentials(error instanceof Error ? error.message : String(error))}\n`);
      // What a file of the folder lacks (unreadable, a folder in its place) is said as it is.
      if (!res.headersSent) answer(res, 500, error instanceof AuraError ? error.message : 'internal error');
    });
  });
  await listenOnLoopback(server, port);
  const listening = listeningPort(server);
  return {
    server,
    port: listening,
    token,
    url: `http://127.0.0.1:${listening}/${prefix}/?token=${token}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** The digests the server compares what a request carries against. */
interface Secrets {
  readonly token: Buffer;
  readonly prefix: Buffer;
}

async function handle(req: http.IncomingMessage, res: http.ServerResponse, port: number, secrets: Secrets, options: UiOptions): Promise<void> {
  const refusal = loopbackRefusal(req, port);
  if (refusal !== null) return answer(res, 403, refusal);
  const url = new URL(req.url ?? '/', `http://127.0.0.1:${port}`);
  const prefixEnd = url.pathname.indexOf('/', 1);
  if (prefixEnd === -1 || !timingSafeEqual(secretDigest(url.pathname.slice(1, prefixEnd)), secrets.prefix)) return answer(res, 404, 'not found');
  const prefix = url.pathname.slice(0, prefixEnd + 1);
  const cookie = `aura_ui_${port}`;
  const fromQuery = url.searchParams.get('token');
  const given = fromQuery ?? cookieValue(req.headers.cookie, cookie);
  if (given === null || !timingSafeEqual(secretDigest(given), secrets.token)) {
    res.setHeader('WWW-Authenticate', 'Cookie');
    return answer(res, 401, 'open the URL that aura ui printed: it carries the access token');
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('Allow', 'GET, HEAD');
    return answer(res, 405, 'read-only: GET and HEAD only');
  }
  if (fromQuery !== null) {
    res.setHeader('Set-Cookie', `${cookie}=${given}; HttpOnly; SameSite=Strict; Path=${prefix}`);
    url.searchParams.delete('token');
    // The path starts with the prefix, so it cannot read as '//host' (another site).
    res.setHeader('Location', url.pathname + url.search);
    return answer(res, 303, 'signed in');
  }
  const page = await route(url.pathname.slice(prefix.length), options);
  if (page === null) return answer(res, 404, 'not found');
  res.statusCode = 200;
  res.setHeader('Content-Type', 'text/html; charset=utf-8');
  // The same policy as the page's meta tag, plus what only a header can say (no framing).
  res.setHeader('Content-Security-Policy', `${page.csp}; frame-ancestors 'none'`);
  securityHeaders(res);
  res.end(req.method === 'HEAD' ? undefined : page.html);
}

/**
 * The page at a path below the prefix, or null for 404. The pages link to each other by relative
 * URLs, so they never need to know the prefix.
 */
async function route(subpath: string, options: UiOptions): Promise<RenderedPage | null> {
  if (subpath === '') return sessionsListHtml(options.source.label, await options.source.overview(options.keys), options.generator);
  const match = /^s\/([^/]+)$/.exec(subpath);
  if (match === null) return null;
  let key: string;
  try {
    key = decodeURIComponent(match[1] as string);
  } catch {
    return null;
  }
  try {
    if (options.source instanceof FolderSource && !options.source.holds(key)) return null;
    const { files, keys } = await materialWithKeys(options.source, key, options.keys);
    return reportHtml(reportPageModel(files, { exportPii: options.exportPii, keys, generator: options.generator }), '../');
  } catch (error) {
    // A refused id (INVALID_SESSION_ID) or a file gone in the meantime (NOT_FOUND) is not there.
    if (error instanceof AuraError && (error.code === 'INVALID_SESSION_ID' || error.code === 'NOT_FOUND')) return null;
    throw error;
  }
}

function cookieValue(header: string | undefined, name: string): string | null {
  for (const part of (header ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return null;
}

function securityHeaders(res: http.ServerResponse): void {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('Cache-Control', 'no-store');
}

function answer(res: http.ServerResponse, status: number, message: string): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  securityHeaders(res);
  res.end(`${status}: ${message}\n`);
}
