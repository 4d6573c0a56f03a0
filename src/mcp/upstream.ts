/**
 * The upstream side of `aura proxy`: the MCP server it stands in front of, reached as a child
 * process over stdio or over Streamable HTTP. The stdio transport is ours rather than the SDK's
 * `StdioClientTransport` because the proxy must tell an upstream that exited from one that crashed
 * (the reason recorded in `session.close`), and the SDK's transport drops the exit status. It also
 * frames the upstream's output itself: the SDK's `ReadBuffer` throws, uncaught, on a message over
 * its limit, which ended the proxy and every session with it; here a message over the limit is
 * skipped as it streams in (never held whole), and an answer that was too large, or that is not a
 * valid answer, fails that one request (refused-answer.ts). Messages are read as json-rpc-lines.ts
 * reads them and written by the SDK's `serializeMessage`, in batches (stdio-batch.ts). An upstream
 * over HTTP is http-upstream.ts's.
 */

import { spawn, type ChildProcess } from 'node:child_process';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { parseJson } from '../spine/native-json.js';
import { HttpUpstream } from './http-upstream.js';
import { LineReader, type Line } from './json-rpc-lines.js';
import { overLimitMessage, upstreamMessageOf } from './refused-answer.js';
import { writeMessage } from './stdio-batch.js';
import type { UpstreamLog } from './upstream-log.js';

/**
 * The largest message an upstream may send (a line over stdio, a JSON answer or an event over
 * HTTP), in bytes, unless `--max-message-bytes` says otherwise: what the MCP SDK's stdio
 * transports accept, so a client behind the proxy could not take a larger one either.
 */
export const DEFAULT_MAX_MESSAGE_BYTES = 10 * 1024 * 1024;

/** Where the upstream server is. */
export type UpstreamSpec =
  | { readonly transport: 'stdio'; readonly command: string; readonly args: readonly string[] }
  | { readonly transport: 'http'; readonly url: URL };

/** How a stdio upstream ended: its exit code, or the signal that ended it. */
export interface UpstreamExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

// How long a stdio upstream gets to exit after its stdin closes, then after SIGTERM (MCP
// lifecycle: close stdin, wait, SIGTERM, wait, SIGKILL).
const EXIT_GRACE_MS = 1000;

/**
 * A stdio upstream: a child process speaking newline-delimited JSON-RPC. It inherits the proxy's
 * environment (a client's config gives the proxy the upstream's variables), never its stdout (the
 * protocol); its stderr goes to the proxy's through {@link UpstreamLog}, which keeps the secrets
 * injected into its calls out of it.
 */
export class UpstreamProcess implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** Set once the process has ended. */
  exit: UpstreamExit | null = null;

  private child: ChildProcess | null = null;
  private readonly lines = new LineReader();

  constructor(
    private readonly command: string,
    private readonly args: readonly string[],
    private readonly log: UpstreamLog,
    private readonly maxMessageBytes: number = DEFAULT_MAX_MESSAGE_BYTES,
  ) {}

  /** Spawns the process; rejects when it cannot be started (command not found). */
  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.command, [...this.args], { stdio: ['pipe', 'pipe', 'pipe'], env: process.env, windowsHide: true });
      this.child = child;
      if (child.stderr !== null) this.log.follow(child.stderr);
      child.once('error', (error) => {
        if (this.exit === null && child.pid === undefined) reject(error);
        else this.onerror?.(error);
      });
      child.once('spawn', () => resolve());
      child.once('close', (code, signal) => {
        this.exit = { code, signal };
        this.onclose?.();
      });
      child.stdin?.on('error', (error) => this.onerror?.(error));
      child.stdout?.on('data', (chunk: Buffer) => {
        for (const line of this.lines.take(chunk, this.maxMessageBytes)) this.receive(line);
      });
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (stdin === null || stdin === undefined || this.exit !== null) return Promise.reject(new Error('the upstream process is not running'));
    return writeMessage(stdin, message);
  }

  /** Closes stdin, then signals the process if it lingers; resolves when it has exited. */
  async close(): Promise<void> {
    const child = this.child;
    if (child === null || this.exit !== null) return;
    const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
    child.stdin?.end();
    const escalate = (signal: NodeJS.Signals): NodeJS.Timeout => setTimeout(() => this.exit === null && child.kill(signal), EXIT_GRACE_MS);
    const term = escalate('SIGTERM');
    const kill = setTimeout(() => this.exit === null && child.kill('SIGKILL'), 2 * EXIT_GRACE_MS);
    await exited;
    clearTimeout(term);
    clearTimeout(kill);
  }

  private receive(line: Line): void {
    if (line.text === null) {
      this.refuseTooLarge(line);
      return;
    }
    if (line.text.trim() === '') return;
    let message: JSONRPCMessage;
    try {
      message = upstreamMessageOf(parseJson(line.text));
    } catch (error) {
      // A line that is not JSON-RPC (an upstream printing to stdout): reported, then skipped.
      this.onerror?.(error as Error);
      return;
    }
    this.onmessage?.(message);
  }

  /**
   * An answer over the limit fails its request, as an error response; a request over it is
   * answered with one; anything else over it is reported and dropped.
   */
  private refuseTooLarge(line: Line): void {
    const { standIn, reply, report } = overLimitMessage(line, line.bytes, this.maxMessageBytes);
    if (report !== null) this.onerror?.(report);
    if (reply !== null) this.send(reply).catch((error: Error) => this.onerror?.(error));
    if (standIn !== null) this.onmessage?.(standIn);
  }
}

/** The transport toward the upstream, not yet started; `log` takes a stdio upstream's stderr. */
export function upstreamTransport(spec: UpstreamSpec, maxMessageBytes: number, log: UpstreamLog): UpstreamProcess | HttpUpstream {
  return spec.transport === 'stdio' ? new UpstreamProcess(spec.command, spec.args, log, maxMessageBytes) : new HttpUpstream(spec.url, maxMessageBytes);
}

/** How an upstream that ended by itself ended, as `session.close` records it. */
export function upstreamEndReason(transport: Transport): 'upstream_exited' | 'upstream_crashed' {
  if (!(transport instanceof UpstreamProcess)) return 'upstream_exited';
  const exit = transport.exit;
  return exit !== null && exit.code === 0 ? 'upstream_exited' : 'upstream_crashed';
}
