/**
 * OTLP/HTTP push: where spans go (flags, then the standard `OTEL_EXPORTER_OTLP_*` variables, then
 * the `otel` config), and one batch's POST with retries. Retries follow the OTLP/HTTP spec: 429,
 * 502, 503 and 504 (and a connection that failed) are tried again with exponential backoff, or
 * after the server's `Retry-After`; any other answer is final.
 *
 * Header values may be API keys: they go on the request and nowhere else (not in a result, an
 * error or the endpoint shown, which drops any user info and query from the URL).
 */

import { gzipSync } from 'node:zlib';
import { parseOtlpProtocol, milliseconds, type OtelSettings, type OtlpProtocol } from '../config/otel.js';
import { OtlpConfigError } from '../errors.js';
import { otlpJson, type SpanSource } from './otel.js';
import { otlpProto } from './otlp-proto.js';
import type { Span } from './spans.js';

/** Where and how to send spans. */
export interface OtlpTarget {
  /** The traces URL requests go to (may hold credentials: show {@link OtlpTarget.endpoint}). */
  readonly url: string;
  /** The URL without user info or query: safe to print and record. */
  readonly endpoint: string;
  readonly protocol: OtlpProtocol;
  /** Secret: sent, never shown. */
  readonly headers: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  /** `gzip` when `OTEL_EXPORTER_OTLP_(TRACES_)COMPRESSION` asks for it. */
  readonly compression: 'gzip' | 'none';
}

/** What the command line says (it wins over the environment and config). */
export interface OtlpFlags {
  readonly endpoint?: string;
  readonly protocol?: string;
  /** `K=V` each. */
  readonly headers?: readonly string[];
}

/** What happened to one batch. */
export interface SendOutcome {
  readonly delivered: boolean;
  readonly attempts: number;
  /** Why it was not delivered (an HTTP status or a network failure), or null. */
  readonly reason: string | null;
}

const TRACES_PATH = '/v1/traces';
const DEFAULT_TIMEOUT_MS = 10_000;
const RETRYABLE = new Set([429, 502, 503, 504]);
const MAX_ATTEMPTS = 5;
const FIRST_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 5_000;
const MAX_RETRY_AFTER_MS = 30_000;

/**
 * The target spans go to, or null when no endpoint is set anywhere.
 * @throws OtlpConfigError naming the flag, variable or key that is wrong
 */
export function resolveOtlpTarget(settings: OtelSettings, env: Readonly<Record<string, string | undefined>>, flags: OtlpFlags = {}): OtlpTarget | null {
  const tracesEndpoint = nonEmpty(env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT']);
  const baseEndpoint = nonEmpty(env['OTEL_EXPORTER_OTLP_ENDPOINT']);
  const chosen: [string, string, boolean] | null =
    flags.endpoint !== undefined
      ? [flags.endpoint, '--endpoint', false]
      : tracesEndpoint !== undefined
        ? [tracesEndpoint, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', true]
        : baseEndpoint !== undefined
          ? [baseEndpoint, 'OTEL_EXPORTER_OTLP_ENDPOINT', false]
          : settings.endpoint === null
            ? null
            : [settings.endpoint, 'otel.endpoint', false];
  if (chosen === null) return null;
  const [raw, source, exact] = chosen;
  const url = tracesUrl(raw, source, exact);

  const protocolSource: [unknown, string] | null =
    flags.protocol !== undefined
      ? [flags.protocol, '--protocol']
      : nonEmpty(env['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL']) !== undefined
        ? [env['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'], 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL']
        : nonEmpty(env['OTEL_EXPORTER_OTLP_PROTOCOL']) !== undefined
          ? [env['OTEL_EXPORTER_OTLP_PROTOCOL'], 'OTEL_EXPORTER_OTLP_PROTOCOL']
          : null;
  // The OTLP exporter spec's default is http/protobuf.
  const protocol = protocolSource === null ? (settings.protocol ?? 'http/protobuf') : parseOtlpProtocol(protocolSource[0], protocolSource[1]);

  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(settings.headers)) headers[name.toLowerCase()] = resolveHeaderValue(value, `otel.headers.${name}`, env);
  for (const variable of ['OTEL_EXPORTER_OTLP_HEADERS', 'OTEL_EXPORTER_OTLP_TRACES_HEADERS']) {
    const list = nonEmpty(env[variable]);
    if (list !== undefined) Object.assign(headers, parseHeaderList(list.split(','), variable, true));
  }
  Object.assign(headers, parseHeaderList(flags.headers ?? [], '--header', false));

  const timeoutText = nonEmpty(env['OTEL_EXPORTER_OTLP_TRACES_TIMEOUT']) ?? nonEmpty(env['OTEL_EXPORTER_OTLP_TIMEOUT']);
  const timeoutMs = timeoutText !== undefined ? milliseconds(timeoutText, 'OTEL_EXPORTER_OTLP_TIMEOUT') : (settings.timeout_ms ?? DEFAULT_TIMEOUT_MS);
  const compressionSource = nonEmpty(env['OTEL_EXPORTER_OTLP_TRACES_COMPRESSION']) === undefined ? 'OTEL_EXPORTER_OTLP_COMPRESSION' : 'OTEL_EXPORTER_OTLP_TRACES_COMPRESSION';
  const compression = nonEmpty(env[compressionSource]) ?? 'none';
  if (compression !== 'gzip' && compression !== 'none') throw new OtlpConfigError(compressionSource, `${JSON.stringify(compression)} is not gzip or none`);
  const shown = new URL(url);
  return { url, endpoint: `${shown.origin}${shown.pathname}`, protocol, headers, timeoutMs: timeoutMs === 0 ? DEFAULT_TIMEOUT_MS : timeoutMs, compression };
}

/**
 * POSTs one batch, retrying what the spec says to retry, until delivered, refused, out of
 * attempts or `signal` aborts (a closing session's deadline).
 */
export async function sendSpans(target: OtlpTarget, source: SpanSource, spans: readonly Span[], signal?: AbortSignal): Promise<SendOutcome> {
  const json = target.protocol === 'http/json';
  const encoded = json ? otlpJson(source, spans) : otlpProto(source, spans);
  const gzip = target.compression === 'gzip';
  const body = gzip ? gzipSync(encoded) : encoded;
  const headers = { ...target.headers, 'content-type': json ? 'application/json' : 'application/x-protobuf', ...(gzip ? { 'content-encoding': 'gzip' } : {}) };
  let reason = 'not sent';
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    if (isAborted(signal)) return { delivered: false, attempts: attempt - 1, reason: 'deadline reached' };
    let wait = backoff(attempt);
    try {
      const timeout = AbortSignal.timeout(target.timeoutMs);
      const response = await fetch(target.url, { method: 'POST', headers, body, signal: signal === undefined ? timeout : AbortSignal.any([signal, timeout]) });
      // Read the answer to the end so the connection can be reused.
      await response.arrayBuffer();
      if (response.ok) return { delivered: true, attempts: attempt, reason: null };
      reason = `HTTP ${response.status}`;
      if (!RETRYABLE.has(response.status)) return { delivered: false, attempts: attempt, reason };
      wait = retryAfter(response.headers.get('retry-after')) ?? wait;
    } catch (error) {
      if (isAborted(signal)) return { delivered: false, attempts: attempt, reason: 'deadline reached' };
      reason = networkReason(error);
    }
    if (attempt < MAX_ATTEMPTS && !(await sleep(wait, signal))) return { delivered: false, attempts: attempt, reason: 'deadline reached' };
  }
  return { delivered: false, attempts: MAX_ATTEMPTS, reason };
}

/** The traces URL: a base endpoint gets `/v1/traces`; a signal-specific one is used as given. */
function tracesUrl(raw: string, source: string, exact: boolean): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OtlpConfigError(source, 'not a URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new OtlpConfigError(source, `scheme ${url.protocol} is not http: or https:`);
  if (exact || url.pathname.endsWith(TRACES_PATH)) return url.href;
  url.pathname = `${url.pathname.replace(/\/+$/, '')}${TRACES_PATH}`;
  return url.href;
}

/** `K=V` entries (the variables' form percent-encodes values). Errors name the entry, never its value. */
function parseHeaderList(entries: readonly string[], source: string, percentEncoded: boolean): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [index, entry] of entries.entries()) {
    const at = entry.indexOf('=');
    const name = (at === -1 ? '' : entry.slice(0, at)).trim();
    if (name === '' || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) throw new OtlpConfigError(`${source} (entry ${index + 1})`, 'expected NAME=VALUE with a valid header name');
    const value = entry.slice(at + 1).trim();
    try {
      headers[name.toLowerCase()] = percentEncoded ? decodeURIComponent(value) : value;
    } catch {
      throw new OtlpConfigError(`${source} (${name})`, 'the value is not validly percent-encoded');
    }
  }
  return headers;
}

function resolveHeaderValue(value: string, source: string, env: Readonly<Record<string, string | undefined>>): string {
  if (!value.startsWith('env:')) return value;
  const resolved = nonEmpty(env[value.slice(4)]);
  if (resolved === undefined) throw new OtlpConfigError(source, `the variable ${value.slice(4)} is not set`);
  return resolved;
}

function backoff(attempt: number): number {
  const ceiling = Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** (attempt - 1));
  // Jitter keeps many hosts retrying one collector from retrying in step.
  return Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
}

/** `Retry-After` in seconds or as an HTTP date, in milliseconds from now; null when absent or unreadable. */
function retryAfter(header: string | null): number | null {
  if (header === null) return null;
  const seconds = /^\s*\d+\s*$/.test(header) ? Number(header) * 1000 : Date.parse(header) - Date.now();
  return Number.isFinite(seconds) ? Math.min(MAX_RETRY_AFTER_MS, Math.max(0, seconds)) : null;
}

function networkReason(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown } }).cause;
  if (typeof cause?.code === 'string') return cause.code;
  return error instanceof Error && error.name === 'TimeoutError' ? 'timeout' : 'network error';
}

/** Waits, or stops early when `signal` aborts; true when the wait ran its course. */
function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted === true) return resolve(false);
    const done = (ran: boolean): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      resolve(ran);
    };
    const onAbort = (): void => done(false);
    const timer = setTimeout(() => done(true), ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

// A function, so that the compiler does not take the flag for constant across an await.
function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}
