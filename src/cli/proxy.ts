/**
 * `aura proxy [--profile F] [--agent REF] (-- <upstream command …> | --upstream-url URL)
 * [--http PORT --tokens FILE]`: an MCP gateway in front of any MCP server. Serves until the client
 * disconnects or the upstream exits (stdio), or until stopped (HTTP). Logs go to stderr: stdout
 * carries the protocol.
 */

import type { AuraConfig } from '../config/config.js';
import { InvalidOptionError } from '../errors.js';
import { redactCredentials } from '../middleware/credential-text.js';
import { portOption, positiveOption } from './context.js';
import { readTokens } from '../mcp/http.js';
import { listeningPort } from '../mcp/loopback.js';
import { ProxyConnection, readProxyProfile, type ProxySettings } from '../mcp/proxy.js';
import { DEFAULT_HTTP_PROXY_LIMITS, serveProxyHttp, type HttpProxyLimits } from '../mcp/proxy-http.js';
import { BatchedStdioServerTransport } from '../mcp/stdio-batch.js';
import { DEFAULT_MAX_MESSAGE_BYTES, type UpstreamSpec } from '../mcp/upstream.js';
import { parseAgentRef } from '../session/agent.js';
import { EXIT, type CommandResult } from './output.js';

/** Options of `proxy`. */
export interface ProxyOptions {
  readonly profile?: string;
  readonly agent?: string;
  readonly upstreamUrl?: string;
  readonly http?: string;
  readonly tokens?: string;
  readonly maxMessageBytes?: string;
  readonly maxSessions?: string;
  readonly maxSessionsPerToken?: string;
  readonly idleTimeout?: string;
}

const log = (line: string): void => {
  process.stderr.write(`aura proxy: ${redactCredentials(line)}\n`);
};

/** Runs the proxy; exit 0 when it ended normally, 2 when it could not serve the client. */
export async function proxyCommand(command: readonly string[], options: ProxyOptions, config: AuraConfig): Promise<CommandResult> {
  const settings = proxySettings(command, options, config);
  const limits = httpLimits(options);
  if (options.http === undefined && options.tokens !== undefined) throw new InvalidOptionError('--tokens', options.tokens, 'only with --http: over stdio the client is the process that started aura');
  if (options.http === undefined) {
    const connection = new ProxyConnection(new BatchedStdioServerTransport(), settings, 'stdio');
    process.stdin.once('end', () => void connection.end('client_disconnected'));
    const stop = (): void => void connection.end('proxy_stopped');
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
    await connection.start();
    const end = await connection.done;
    process.off('SIGTERM', stop);
    process.off('SIGINT', stop);
    // A paused stdin still waits for data while it holds none: a client that keeps the pipe open
    // after the connection ended (a message over the limit) would keep the proxy running.
    process.stdin.destroy();
    return { exitCode: end.reason === 'connect_failed' ? EXIT.usage : EXIT.ok, json: null, human: '', quiet: true };
  }
  const port = portOption('--http', options.http);
  if (options.tokens === undefined) throw new InvalidOptionError('--tokens', undefined, 'a tokens file: the HTTP server never answers without authentication');
  const proxy = await serveProxyHttp(port, readTokens(options.tokens), settings, limits);
  log(`listening on http://127.0.0.1:${listeningPort(proxy.server)}/mcp`);
  await new Promise<void>((resolve) => {
    const stop = (): void => void proxy.stop().then(() => resolve());
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
  return { exitCode: EXIT.ok, json: null, human: '', quiet: true };
}

/** The session limits of `--http`; refused without it, where the one client is the one session. */
function httpLimits(options: ProxyOptions): HttpProxyLimits {
  const given = (['maxSessions', 'maxSessionsPerToken', 'idleTimeout'] as const).find((key) => options[key] !== undefined);
  if (given !== undefined && options.http === undefined) throw new InvalidOptionError(`--${given.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`, options[given], 'to be given with --http only');
  const count = (flag: string, value: string | undefined, fallback: number): number => (value === undefined ? fallback : positiveOption(flag, value, 'a whole number of at least 1'));
  return {
    maxSessions: count('--max-sessions', options.maxSessions, DEFAULT_HTTP_PROXY_LIMITS.maxSessions),
    maxSessionsPerToken: count('--max-sessions-per-token', options.maxSessionsPerToken, DEFAULT_HTTP_PROXY_LIMITS.maxSessionsPerToken),
    idleTimeoutMs: options.idleTimeout === undefined ? DEFAULT_HTTP_PROXY_LIMITS.idleTimeoutMs : positiveOption('--idle-timeout', options.idleTimeout, 'a whole number of seconds, at least 1') * 1000,
  };
}

/** Checks the command line before anything starts: one upstream, a valid agent ref and profile. */
function proxySettings(command: readonly string[], options: ProxyOptions, config: AuraConfig): ProxySettings {
  let upstream: UpstreamSpec;
  if (options.upstreamUrl !== undefined) {
    if (command.length > 0) throw new InvalidOptionError('--upstream-url', options.upstreamUrl, 'either --upstream-url or a command after --, not both');
    let url: URL;
    try {
      url = new URL(options.upstreamUrl);
    } catch {
      throw new InvalidOptionError('--upstream-url', options.upstreamUrl, 'an http(s) URL of a Streamable HTTP MCP endpoint');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new InvalidOptionError('--upstream-url', options.upstreamUrl, 'an http(s) URL of a Streamable HTTP MCP endpoint');
    upstream = { transport: 'http', url };
  } else {
    const [program, ...args] = command;
    if (program === undefined || program === '') throw new InvalidOptionError('upstream', '', 'the upstream server: -- <command> [args…] or --upstream-url URL');
    upstream = { transport: 'stdio', command: program, args };
  }
  const profile = options.profile === undefined ? { findingsTool: true, agentRef: null } : readProxyProfile(options.profile);
  if (options.agent !== undefined && profile.agentRef !== null && parseAgentRef(options.agent) !== parseAgentRef(profile.agentRef)) {
    throw new InvalidOptionError('--agent', options.agent, `the profile's agent_ref ${profile.agentRef}, or no --agent`);
  }
  const agentRef = options.agent ?? profile.agentRef;
  return {
    upstream,
    agentRef: agentRef === null ? null : parseAgentRef(agentRef),
    profileFile: options.profile ?? null,
    findingsTool: profile.findingsTool,
    config,
    log,
    upstreamStderr: process.stderr,
    maxMessageBytes: options.maxMessageBytes === undefined ? DEFAULT_MAX_MESSAGE_BYTES : positiveOption('--max-message-bytes', options.maxMessageBytes, 'a number of bytes, at least 1'),
  };
}
