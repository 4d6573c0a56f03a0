/**
 * The findings channel over Streamable HTTP, on loopback only. Every request needs a bearer token
 * from the tokens file, which maps each token to the sessions folders it may read; without a
 * valid one the answer is 401 and nothing else. A Host header that is not this loopback address
 * is refused (a DNS-rebinding page cannot reach it). Stateless: each request gets a server over
 * the caller's folders, so no state leaks from one caller to the next.
 */

import { timingSafeEqual } from 'node:crypto';
import * as http from 'node:http';
import * as path from 'node:path';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import * as fs from 'node:fs';
import { parseYamlSource, type KeyPath } from '../config/yaml-source.js';
import { ConfigError, describeCause } from '../errors.js';
import { redactCredentials } from '../middleware/credential-text.js';
import type { KeyRing } from '../spine/signing.js';
import { FindingsService, type FindingsTools } from './findings-service.js';
import { readJsonBody, sendJson } from './http-body.js';
import { listenOnLoopback, loopbackRefusal, listeningPort, secretDigest } from './loopback.js';
import { buildServer } from './server.js';

/** One token's authority: the sessions folders it may read. */
export interface Grant {
  readonly digest: Buffer;
  readonly folders: readonly string[];
  /** The anchor copy of the seal log of each of its folders that has one, by folder. */
  readonly anchors: ReadonlyMap<string, string>;
}

/**
 * Reads a tokens file: `tokens: [{sha256: <hex of SHA-256 of the token>, folders: [<sessions folder>, …]}]`
 * (`token: <plain text>` is accepted too, for tests and throwaway setups), and `anchors: {<sessions
 * folder>: <its seal log's anchor copy>}`. A granted folder's home is its tenant's, config and all:
 * its anchor is named here, where the tenant cannot move it (as `AURA_ANCHOR_DIR` above a home's
 * config), and a copy the tenant named could be another tenant's.
 * @throws ConfigError naming the file and line (an unknown key too: a typo must not drop a grant's limits)
 */
export function readTokens(file: string): Grant[] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(file, null, `cannot read the tokens file: ${describeCause(error)}`);
  }
  const yaml = parseYamlSource(text, (message, line) => new ConfigError(file, line, message));
  const value = yaml.value as { tokens?: unknown; anchors?: unknown } | null;
  const fail = (keys: KeyPath, why: string): ConfigError => new ConfigError(file, yaml.lineOf(keys), why);
  if (value === null || typeof value !== 'object' || !Array.isArray(value.tokens) || value.tokens.length === 0) throw fail([], 'expected tokens: [{sha256, folders: [...]}, ...]');
  for (const key of Object.keys(value)) if (!FILE_KEYS.includes(key)) throw fail([key], `unknown key ${JSON.stringify(key)}; expected ${FILE_KEYS.join(', ')}`);
  const beside = (named: string): string => realFolder(path.resolve(path.dirname(file), named));
  const grants = value.tokens.map((entry: unknown, i: number) => {
    const grant = (entry ?? {}) as { sha256?: unknown; token?: unknown; folders?: unknown };
    for (const key of Object.keys(grant)) if (!TOKEN_KEYS.includes(key)) throw fail(['tokens', i, key], `unknown key ${JSON.stringify(key)} in tokens[${i}]; expected ${TOKEN_KEYS.join(', ')}`);
    const digest = typeof grant.sha256 === 'string' && /^[0-9a-f]{64}$/.test(grant.sha256) ? Buffer.from(grant.sha256, 'hex') : typeof grant.token === 'string' && grant.token.length >= 16 ? secretDigest(grant.token) : null;
    if (digest === null) throw fail(['tokens', i], `tokens[${i}] needs sha256 (64 hex) or a token of at least 16 characters`);
    if (!Array.isArray(grant.folders) || grant.folders.length === 0 || grant.folders.some((f) => typeof f !== 'string')) throw fail(['tokens', i, 'folders'], `tokens[${i}].folders must list sessions folders`);
    return { digest, folders: (grant.folders as string[]).map(beside) };
  });
  const granted = new Set(grants.flatMap((grant) => grant.folders));
  const named = value.anchors ?? {};
  if (named === null || typeof named !== 'object' || Array.isArray(named)) throw fail(['anchors'], "anchors must map sessions folders to their seal logs' anchor copies");
  const anchors = new Map<string, string>();
  for (const [folder, copy] of Object.entries(named)) {
    if (typeof copy !== 'string') throw fail(['anchors', folder], `anchors[${JSON.stringify(folder)}] must name the anchor copy of the folder's seal log`);
    const real = beside(folder);
    if (!granted.has(real)) throw fail(['anchors', folder], `anchors names ${folder}, which no token grants`);
    anchors.set(real, beside(copy));
  }
  return grants.map((grant) => ({
    ...grant,
    anchors: new Map(
      grant.folders.flatMap((folder) => {
        const copy = anchors.get(folder);
        return copy === undefined ? [] : [[folder, copy] as const];
      }),
    ),
  }));
}

/** A folder (or anchor copy) the tokens file names, where it really is when the server starts (a link the operator made is followed then, once). */
function realFolder(folder: string): string {
  try {
    return fs.realpathSync(folder);
  } catch {
    // Not there yet: a home's sessions folder appears with its first session.
    return folder;
  }
}

/**
 * Which file of a granted folder keeps it from being read now (`what` names it for its tenant), or null: its tenant can write its home, so a symlink put
 * since the server started in place of the folder, of its seal log or of a folder above them (the
 * home itself) would have the server read another tenant's sessions for them. The folder was
 * taken where it really was at the start: it must still be reached at that path, and its log and
 * their anchor copy too.
 */
function swappedFor(sessionsDir: string, anchorLog: string | null): { readonly file: string; readonly what: string } | null {
  const files = [
    { file: sessionsDir, what: 'the folder' },
    { file: sealLogOf(sessionsDir), what: 'its seal log' },
    ...(anchorLog === null ? [] : [{ file: anchorLog, what: 'the anchor copy of its seal log' }]),
  ];
  for (const { file, what } of files) {
    let real: string;
    try {
      real = fs.realpathSync(file);
    } catch {
      // Not there (yet): nothing to read.
      continue;
    }
    if (real !== file) return { file, what };
  }
  return null;
}

function sealLogOf(sessionsDir: string): string {
  return path.join(path.dirname(sessionsDir), 'seals.jsonl');
}

const FILE_KEYS = ['tokens', 'anchors'];
const TOKEN_KEYS = ['sha256', 'token', 'folders'];

function grantOf(grants: readonly Grant[], header: string | undefined): Grant | null {
  const match = /^Bearer ([^\s]+)$/.exec(header ?? '');
  if (match === null) return null;
  const digest = secretDigest(match[1] as string);
  // Compare digests in constant time, every grant, so timing says nothing about which matched.
  let found: Grant | null = null;
  for (const grant of grants) if (timingSafeEqual(grant.digest, digest)) found = grant;
  return found;
}

/** The tools a caller with `grant` is served: by default, its sessions folders. */
export type ServiceOf = (grant: Grant) => FindingsTools;

/**
 * A grant's sessions folders, judged with `keys` (a tenant's home is not ours: its `keys/` folder is
 * not trusted for it; with no keys, signatures read as unchecked), each against the anchor copy
 * the tokens file names for it. A tenant learns nothing of the server's paths: each folder is named
 * to it by its place in the token's `folders` (`folders[0]`), and its files by their names in it.
 */
export function foldersOf(keys: KeyRing | null): ServiceOf {
  return (grant) =>
    new FindingsService(
      grant.folders.flatMap((sessionsDir, i) => {
        const anchorLog = grant.anchors.get(sessionsDir) ?? null;
        const label = `folders[${i}]`;
        const folder = { sessionsDir, sealLog: sealLogOf(sessionsDir), anchorLog, keys, label };
        const swapped = swappedFor(sessionsDir, anchorLog);
        if (swapped === null) return [folder];
        process.stderr.write(`aura mcp: ${swapped.file} is now reached through a symlink: not followed; the folder is left out of this call\n`);
        return [{ ...folder, leftOut: `${label} is left out: ${swapped.what} is now reached through a symlink, which is not followed` }];
      }),
      true,
    );
}

/** Starts the HTTP server on 127.0.0.1; resolves with it listening (port 0 picks a free port). */
export async function serveHttp(port: number, grants: readonly Grant[], serviceOf: ServiceOf = foldersOf(null)): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    void handle(req, res, server, grants, serviceOf);
  });
  await listenOnLoopback(server, port);
  return server;
}

/**
 * The gate every request passes first: a loopback Host header, then a valid bearer token. Answers
 * 403 or 401 itself and returns null; else the caller's grant.
 */
export function authorize(req: http.IncomingMessage, res: http.ServerResponse, server: http.Server, grants: readonly Grant[]): Grant | null {
  const refusal = loopbackRefusal(req, listeningPort(server));
  if (refusal !== null) return refuseAndClose(res, 403, refusal);
  const grant = grantOf(grants, req.headers.authorization);
  if (grant === null) {
    res.setHeader('WWW-Authenticate', 'Bearer');
    return refuseAndClose(res, 401, 'a valid bearer token is required');
  }
  return grant;
}

/**
 * Refuses a caller, ending its connection with the answer: the rest of its body is not read, and
 * an unauthenticated client holds no socket open.
 */
function refuseAndClose(res: http.ServerResponse, status: number, message: string): null {
  res.setHeader('Connection', 'close');
  refuse(res, status, message);
  return null;
}

async function handle(req: http.IncomingMessage, res: http.ServerResponse, server: http.Server, grants: readonly Grant[], serviceOf: ServiceOf): Promise<void> {
  const grant = authorize(req, res, server, grants);
  if (grant === null) return;
  if (req.method !== 'POST' || (req.url ?? '').split('?')[0] !== '/mcp') return refuse(res, 405, 'POST /mcp only');
  // A body that failed to arrive (the client went away) is answered by nothing.
  const body = await readJsonBody(req, res).catch(() => null);
  if (body === null) return;
  const mcp = buildServer(serviceOf(grant));
  // No session id generator: stateless, one request a transport.
  const transport = new StreamableHTTPServerTransport({});
  res.on('close', () => {
    void transport.close();
    void mcp.close();
  });
  try {
    await mcp.connect(transport);
    await transport.handleRequest(req, res, body.value);
  } catch (error) {
    process.stderr.write(`aura mcp: ${redactCredentials(error instanceof Error ? error.message : String(error))}\n`);
    if (!res.headersSent) refuse(res, 500, 'internal error');
  }
}

/** Answers with a status and a JSON error body. */
export function refuse(res: http.ServerResponse, status: number, message: string): void {
  sendJson(res, status, { error: message });
}
