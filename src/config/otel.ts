/**
 * The `otel` config key: where spans go besides `{id}.otel.jsonl`, and what they may carry.
 *
 * ```yaml
 * otel:
 *   endpoint: http://127.0.0.1:4318     # streams spans live while sessions run
 *   protocol: http/protobuf             # or http/json
 *   headers: { x-api-key: env:OTLP_KEY } # a value is literal, or env:NAME read when sending
 *   timeout_ms: 10000                   # one request
 *   close_timeout_ms: 1000              # the most close() waits for the collector
 *   capture_tool_content: false         # tool arguments and results on spans (opt-in)
 * ```
 */

import { OtlpConfigError } from '../errors.js';

/** OTLP over HTTP, as `OTEL_EXPORTER_OTLP_PROTOCOL` names it. */
export type OtlpProtocol = 'http/json' | 'http/protobuf';

/** The checked `otel` settings. */
export interface OtelSettings {
  readonly endpoint: string | null;
  readonly protocol: OtlpProtocol | null;
  /** Header names and values (a value may be `env:NAME`). Secret: never printed or recorded. */
  readonly headers: Readonly<Record<string, string>>;
  readonly timeout_ms: number | null;
  readonly close_timeout_ms: number;
  readonly capture_tool_content: boolean;
}

const KEYS = new Set(['endpoint', 'protocol', 'headers', 'timeout_ms', 'close_timeout_ms', 'capture_tool_content']);
/** A collector that is slow or gone costs a closing session at most this long by default. */
export const DEFAULT_CLOSE_TIMEOUT_MS = 1000;

/** Reads the protocol name, from a flag, a variable or the config. */
export function parseOtlpProtocol(value: unknown, source: string): OtlpProtocol {
  if (value === 'http/json' || value === 'http/protobuf') return value;
  throw new OtlpConfigError(source, `${JSON.stringify(value)} is not http/json or http/protobuf (grpc is not supported)`);
}

/**
 * Checks the `otel` config value.
 * @throws OtlpConfigError naming the key (never a header's value)
 */
export function parseOtelSettings(value: unknown): OtelSettings {
  const settings = value === undefined || value === null ? {} : value;
  if (typeof settings !== 'object' || Array.isArray(settings)) throw new OtlpConfigError('otel', `expected a mapping with the keys ${[...KEYS].join(', ')}`);
  const map = settings as Record<string, unknown>;
  for (const key of Object.keys(map)) if (!KEYS.has(key)) throw new OtlpConfigError(`otel.${key}`, `unknown key; known: ${[...KEYS].join(', ')}`);
  const endpoint = map['endpoint'] ?? null;
  if (endpoint !== null && typeof endpoint !== 'string') throw new OtlpConfigError('otel.endpoint', 'expected a URL');
  const headers = map['headers'] ?? {};
  if (headers === null || typeof headers !== 'object' || Array.isArray(headers)) throw new OtlpConfigError('otel.headers', 'expected a mapping of header names to values');
  for (const [name, header] of Object.entries(headers)) if (typeof header !== 'string') throw new OtlpConfigError(`otel.headers.${name}`, 'expected a string value');
  const capture = map['capture_tool_content'] ?? false;
  if (typeof capture !== 'boolean') throw new OtlpConfigError('otel.capture_tool_content', 'expected true or false');
  return {
    endpoint,
    protocol: map['protocol'] == null ? null : parseOtlpProtocol(map['protocol'], 'otel.protocol'),
    headers: headers as Record<string, string>,
    timeout_ms: map['timeout_ms'] == null ? null : milliseconds(map['timeout_ms'], 'otel.timeout_ms'),
    close_timeout_ms: map['close_timeout_ms'] == null ? DEFAULT_CLOSE_TIMEOUT_MS : milliseconds(map['close_timeout_ms'], 'otel.close_timeout_ms'),
    capture_tool_content: capture,
  };
}

/** A non-negative whole number of milliseconds. */
export function milliseconds(value: unknown, source: string): number {
  const number = typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value) : value;
  if (typeof number !== 'number' || !Number.isInteger(number) || number < 0) throw new OtlpConfigError(source, `${JSON.stringify(value)} is not a whole number of milliseconds`);
  return number;
}
