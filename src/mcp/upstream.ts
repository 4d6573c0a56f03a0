/**
 * The upstream side of `aura proxy`: the MCP server it stands in front of, reached as a child
 * process over stdio or over Streamable HTTP. The stdio transport is ours rather than the SDK's
 * `StdioClientTransport` because the proxy must tell an upstream that exited from one that crashed
 * (the reason recorded in `session.close`), and the SDK's transport drops the exit status. Framing
 * is the SDK's (`ReadBuffer`, `serializeMessage`).
 */

import { spawn, type ChildProcess } from 'node:child_process';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

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
 * environment (a client's config gives the proxy the upstream's variables) and its stderr (the
 * proxy's log), never its stdout (the protocol).
 */
export class UpstreamProcess implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** Set once the process has ended. */
  exit: UpstreamExit | null = null;

  private child: ChildProcess | null = null;
  private readonly buffer = new ReadBuffer();

  constructor(
    private readonly command: string,
    private readonly args: readonly string[],
  ) {}

  /** Spawns the process; rejects when it cannot be started (command not found). */
  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.command, [...this.args], { stdio: ['pipe', 'pipe', 'inherit'], env: process.env, windowsHide: true });
      this.child = child;
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
        this.buffer.append(chunk);
        this.drain();
      });
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (stdin === null || stdin === undefined || this.exit !== null) return Promise.reject(new Error('the upstream process is not running'));
    return new Promise((resolve) => {
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once('drain', resolve);
    });
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

  private drain(): void {
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        message = this.buffer.readMessage();
      } catch (error) {
        // A line that is not JSON-RPC (an upstream printing to stdout): reported, then skipped.
        this.onerror?.(error as Error);
        continue;
      }
      if (message === null) return;
      this.onmessage?.(message);
    }
  }
}

/** The transport toward the upstream, not yet started. */
export function upstreamTransport(spec: UpstreamSpec): UpstreamProcess | StreamableHTTPClientTransport {
  return spec.transport === 'stdio' ? new UpstreamProcess(spec.command, spec.args) : new StreamableHTTPClientTransport(spec.url);
}

/** How an upstream that ended by itself ended, as `session.close` records it. */
export function upstreamEndReason(transport: Transport): 'upstream_exited' | 'upstream_crashed' {
  if (!(transport instanceof UpstreamProcess)) return 'upstream_exited';
  const exit = transport.exit;
  return exit !== null && exit.code === 0 ? 'upstream_exited' : 'upstream_crashed';
}
