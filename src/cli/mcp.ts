/** `aura mcp [--http PORT --tokens FILE]`: the findings channel (SuperAuditor v1.1) over stdio or HTTP. */

import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { AuraConfig } from '../config/config.js';
import { InvalidOptionError } from '../errors.js';
import { portOption } from './context.js';
import { FindingsService } from '../mcp/findings-service.js';
import { readTokens, serveHttp } from '../mcp/http.js';
import { listeningPort } from '../mcp/loopback.js';
import { buildServer } from '../mcp/server.js';
import { EXIT, type CommandResult } from './output.js';

/** Options of `mcp`. */
export interface McpOptions {
  readonly http?: string;
  readonly tokens?: string;
}

/** Serves until the client disconnects (stdio) or the process is stopped (HTTP). Logs go to stderr. */
export async function mcpCommand(options: McpOptions, config: AuraConfig): Promise<CommandResult> {
  if (options.http === undefined) {
    const server = buildServer(new FindingsService([{ sessionsDir: config.paths.sessions, sealLog: config.paths.sealLog }], false));
    const transport = new StdioServerTransport();
    const closed = new Promise<void>((resolve) => {
      transport.onclose = () => resolve();
    });
    await server.connect(transport);
    process.stdin.on('end', () => void server.close());
    await closed;
    return { exitCode: EXIT.ok, json: null, human: '', quiet: true };
  }
  const port = portOption('--http', options.http);
  if (options.tokens === undefined) throw new InvalidOptionError('--tokens', undefined, 'a tokens file: the HTTP server never answers without authentication');
  const server = await serveHttp(port, readTokens(options.tokens));
  process.stderr.write(`aura mcp: listening on http://127.0.0.1:${listeningPort(server)}/mcp\n`);
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      server.close(() => resolve());
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
  return { exitCode: EXIT.ok, json: null, human: '', quiet: true };
}
