/**
 * Reaching the fleet store: the URL (`--store` or the config key `store`, itself a URL or a secret
 * ref such as `env:AURA_STORE_URL`) with libpq's connection parameters in its query too (`host`,
 * a socket folder or names, `port`, `user`, `password`, `dbname`), libpq's `PG*` variables for
 * whatever the URL leaves out, and libpq's TLS settings (`sslmode`, `sslrootcert`, `sslcert`,
 * `sslkey`, in the URL or as `PGSSLMODE`, `PGSSLROOTCERT`, …, and `sslpassword`, the passphrase of
 * an encrypted `sslkey`, in the URL only as libpq has it) passed through to the TLS socket.
 *
 * Credentials are never printed nor recorded: every message names the store by {@link redactUrl}.
 * The client is postgres.js (`postgres`): no dependencies of its own, its own types, COPY streams
 * built in, and libpq's environment variables read as libpq does.
 */

import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import postgres from 'postgres';
import { EnvSecretBroker } from '../../policy/secrets.js';
import { AuraError, InvalidOptionError, StoreError, type StoreFailure } from '../../errors.js';
import { parseJson } from '../../spine/native-json.js';

/** A client of the store. */
export type Sql = postgres.Sql;

/** A client inside a transaction: a connection of its own. */
export type Tx = postgres.ReservedSql;

/** An open store: its client and its name for people. */
export interface StoreConnection {
  readonly sql: Sql;
  /** The URL without credentials. */
  readonly label: string;
}

const SCHEMES = ['postgres:', 'postgresql:'];
// PostgreSQL's type ids of json and jsonb.
const JSON_OID = 114;
const JSONB_OID = 3802;
const TLS_PARAMS = ['sslmode', 'sslrootcert', 'sslcert', 'sslkey', 'sslpassword'];
// libpq's connection parameters that postgres.js does not read from a URL's query. Left in the
// query, each went to the server as a setting it refuses (`unrecognized configuration parameter
// "password"`), the password with it.
const CONNECTION_PARAMS = ['host', 'port', 'user', 'password', 'dbname'] as const;

/**
 * The store URL a setting names: a `postgres://` URL, or a secret ref (`env:NAME`) that resolves to one.
 * @throws InvalidOptionError naming `source`, never echoing a value that could hold a password
 */
export function resolveStoreUrl(value: string, source: string, env: Readonly<Record<string, string | undefined>> = process.env): string {
  if (value.startsWith('env:')) {
    const resolved = new EnvSecretBroker(env).resolve(value);
    if (resolved === undefined || resolved === '') throw new InvalidOptionError(source, value, `a secret ref that resolves: ${value.slice(4)} is not set`);
    return checkedUrl(resolved, `${source} (${value})`);
  }
  return checkedUrl(value, source);
}

function checkedUrl(value: string, source: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidOptionError(source, '(not shown)', 'a PostgreSQL URL such as postgres://host/db, or a secret ref such as env:AURA_STORE_URL');
  }
  if (!SCHEMES.includes(url.protocol)) throw new InvalidOptionError(source, redactUrl(value), 'a postgres:// or postgresql:// URL');
  // The client decodes them: a stray `%` (a password not percent-encoded) is said here, not as an internal error.
  for (const part of [url.username, url.password, url.pathname]) {
    try {
      decodeURIComponent(part);
    } catch {
      throw new InvalidOptionError(source, redactUrl(value), "a URL whose user, password and database are percent-encoded (write a '%' in them as %25)");
    }
  }
  return value;
}

/** The URL with its password (and any password-like parameter) masked, for messages and output. */
export function redactUrl(value: string): string {
  try {
    const url = new URL(value);
    if (url.password !== '') url.password = '***';
    for (const key of [...url.searchParams.keys()]) if (/pass/i.test(key)) url.searchParams.set(key, '***');
    return url.toString();
  } catch {
    return '(an unreadable URL)';
  }
}

/** How a connection is opened. */
export interface OpenOptions {
  /** Connections in the pool (default 4). */
  readonly max?: number;
  /** Names the connection in `pg_stat_activity` (default `aura`). */
  readonly applicationName?: string;
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** Opens a client of the store at `urlText` (connections are made on first use). */
export function openStore(urlText: string, options: OpenOptions = {}): StoreConnection {
  const env = options.env ?? process.env;
  const url = new URL(urlText);
  const tls = tlsOptions(url, env);
  for (const param of TLS_PARAMS) url.searchParams.delete(param);
  const given = connectionParams(url);
  const sql = postgres(url.toString(), {
    ...given,
    max: options.max ?? 4,
    ssl: tls,
    onnotice: () => undefined,
    connection: { application_name: options.applicationName ?? 'aura' },
    // Idle connections close, so a command that is done never waits on the pool.
    idle_timeout: 10,
    connect_timeout: 10,
    // json and jsonb values (checks' details, findings) read by parseJson: postgres.js's JSON.parse
    // can misread an escaped key on Node 24 (src/spine/native-json.ts).
    types: { json: { to: JSON_OID, from: [JSON_OID, JSONB_OID], serialize: (value: unknown) => JSON.stringify(value), parse: parseJson } },
  });
  return { sql, label: redactUrl(urlText) };
}

/**
 * Takes libpq's connection parameters out of the URL's query, as postgres.js options: as libpq
 * reads a URI, one in the query is taken over the same part before it (`postgres:///db?host=/run/postgresql`).
 * @throws InvalidOptionError for a port that is not one
 */
function connectionParams(url: URL): { host?: string; port?: number; user?: string; pass?: string; database?: string } {
  const value = (name: (typeof CONNECTION_PARAMS)[number]): string | undefined => nonEmpty(url.searchParams.get(name) ?? undefined);
  const [host, port, user, pass, database] = CONNECTION_PARAMS.map(value);
  for (const name of CONNECTION_PARAMS) url.searchParams.delete(name);
  const portNumber = port === undefined ? undefined : Number(port);
  if (portNumber !== undefined && !(Number.isInteger(portNumber) && portNumber > 0 && portNumber < 65_536)) throw new InvalidOptionError('port', port, 'a port number from 1 to 65535');
  return {
    ...(host === undefined ? {} : { host }),
    ...(portNumber === undefined ? {} : { port: portNumber }),
    ...(user === undefined ? {} : { user }),
    ...(pass === undefined ? {} : { pass }),
    ...(database === undefined ? {} : { database }),
  };
}

/**
 * libpq's `sslmode` over Node's TLS socket: `disable`; `allow` and `prefer` (libpq's default: TLS
 * when the server offers it); `require` (encrypted; verified as `verify-ca` when a root
 * certificate is given, as libpq does); `verify-ca` (the chain, not the name); `verify-full`.
 */
function tlsOptions(url: URL, env: Readonly<Record<string, string | undefined>>): false | 'prefer' | ConnectionOptions {
  const param = (name: string, variable: string): string | undefined => url.searchParams.get(name) ?? nonEmpty(env[variable]);
  const mode = param('sslmode', 'PGSSLMODE') ?? 'prefer';
  const rootcert = param('sslrootcert', 'PGSSLROOTCERT');
  const cert = param('sslcert', 'PGSSLCERT');
  const key = param('sslkey', 'PGSSLKEY');
  const passphrase = nonEmpty(url.searchParams.get('sslpassword') ?? undefined);
  if (mode === 'disable') return false;
  if (mode === 'allow' || mode === 'prefer') return 'prefer';
  if (mode !== 'require' && mode !== 'verify-ca' && mode !== 'verify-full') throw new InvalidOptionError('sslmode', mode, 'disable, allow, prefer, require, verify-ca or verify-full');
  const files: ConnectionOptions = {
    ...(rootcert === undefined || rootcert === 'system' ? {} : { ca: readTlsFile(rootcert, 'sslrootcert') }),
    ...(cert === undefined ? {} : { cert: readTlsFile(cert, 'sslcert') }),
    ...(key === undefined ? {} : clientKey(readTlsFile(key, 'sslkey'), key, passphrase)),
  };
  const verifyChain = mode !== 'require' || rootcert !== undefined;
  return {
    ...files,
    rejectUnauthorized: verifyChain,
    ...(mode === 'verify-full' ? {} : { checkServerIdentity: () => undefined }),
  };
}

function readTlsFile(file: string, what: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (error) {
    throw new InvalidOptionError(what, file, `a readable file (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})`);
  }
}

/**
 * The client key, opened here with its passphrase: a key that will not open is said before any
 * connection (Node would only fail inside the handshake), and never with the passphrase.
 */
function clientKey(pem: Buffer, file: string, passphrase: string | undefined): Pick<ConnectionOptions, 'key' | 'passphrase'> {
  // PKCS#8 (`ENCRYPTED PRIVATE KEY`) and the older PEM header (`Proc-Type: 4,ENCRYPTED`) both say so.
  if (passphrase === undefined && pem.includes('ENCRYPTED')) throw new InvalidOptionError('sslkey', file, 'a key that opens: it is encrypted, give its passphrase as sslpassword in the store URL');
  try {
    crypto.createPrivateKey(passphrase === undefined ? pem : { key: pem, passphrase });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_OSSL_BAD_DECRYPT') throw new InvalidOptionError('sslpassword', '(not shown)', `the passphrase of ${file}, which does not open it`);
    throw new InvalidOptionError('sslkey', file, 'a private key in PEM');
  }
  return passphrase === undefined ? { key: pem } : { key: pem, passphrase };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

/**
 * Runs `work` in one transaction on a connection of its own, committed when it returns. When the
 * server cut the connection, no ROLLBACK is sent (the server rolled back already): postgres.js
 * 3.4's own `begin` sends one there, to a closed socket, and that write crashes the process.
 */
export async function transaction<T>(sql: Sql, work: (tx: Tx) => Promise<T>): Promise<T> {
  const tx = await sql.reserve();
  try {
    await tx`BEGIN`;
    const result = await work(tx);
    await tx`COMMIT`;
    return result;
  } catch (error) {
    if (!connectionLost(error)) await tx`ROLLBACK`.catch(() => undefined);
    throw error;
  } finally {
    tx.release();
  }
}

const LOST = ['CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED', 'ECONNRESET', 'EPIPE', '57P01', '57P02', '57P03'];

function connectionLost(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (LOST.includes(code) || code.startsWith('08'));
}

/**
 * Runs `work` against the store and turns what the client throws into a {@link StoreError} that
 * says what happened in words, naming the store without its credentials.
 */
export async function storeCall<T>(label: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw storeError(label, error);
  }
}

/** The {@link StoreError} for whatever the client threw (a StoreError passes through). */
export function storeError(label: string, error: unknown): Error {
  // aura's own errors (a session not found, a refused id) say what they are already.
  if (error instanceof AuraError || !(error instanceof Error)) return error as Error;
  const code = (error as { code?: unknown }).code;
  const [reason, why] = describe(typeof code === 'string' ? code : '', error.message);
  return new StoreError(label, reason, why, error);
}

function describe(code: string, message: string): [StoreFailure, string] {
  if (/\bTLS\b|\bSSL\b|certificate/i.test(message)) return ['unreachable', `cannot connect over TLS (${message}): check sslmode and the certificates`];
  if (['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ETIMEDOUT', 'CONNECT_TIMEOUT', '28P01', '28000', '3D000'].includes(code)) {
    return ['unreachable', `cannot connect (${message})`];
  }
  if (connectionLost({ code })) {
    return ['connection_lost', `the connection was lost (${message}); whatever was not committed was rolled back: run the command again`];
  }
  if (code === '42501') return ['denied', `permission denied (${message}): this role may not do that (see docs/fleet.md, "Roles")`];
  if (code === '42P01' || code === '3F000') return ['schema_missing', `the store has no aura schema (${message}): run aura store init --store URL`];
  return ['failed', message];
}
