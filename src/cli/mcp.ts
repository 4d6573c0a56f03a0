/** `aura mcp [--http PORT --tokens FILE]`: the findings channel (SuperAuditor v1.1) over stdio or HTTP. */

import * as fs from 'node:fs';
import type { AuraConfig } from '../config/config.js';
import { InvalidOptionError } from '../errors.js';
import { anchoredKeys, keysFor, portOption, storeUrlFor, type StoreOptions } from './context.js';
import { FindingsService, type FindingsTools } from '../mcp/findings-service.js';
import { foldersOf, readTokens, serveHttp } from '../mcp/http.js';
import { listeningPort } from '../mcp/loopback.js';
import { buildServer } from '../mcp/server.js';
import { replyToMalformed } from '../mcp/json-rpc-lines.js';
import { BatchedStdioServerTransport } from '../mcp/stdio-batch.js';
import { EXIT, type CommandResult } from './output.js';

/** Options of `mcp`. */
export interface McpOptions extends StoreOptions {
  readonly http?: string;
  readonly tokens?: string;
  /** With a store: hours without a push after which a host is reported silent (default 24). */
  readonly silentAfter?: string;
}

/** Serves until the client disconnects (stdio) or the process is stopped (HTTP). Logs go to stderr. */
export async function mcpCommand(options: McpOptions, config: AuraConfig): Promise<CommandResult> {
  const silentHours = Number(options.silentAfter ?? '24');
  if (!(silentHours > 0) || !/^\d+(\.\d+)?$/.test(options.silentAfter ?? '24')) throw new InvalidOptionError('--silent-after', options.silentAfter, 'hours, a positive number');
  const url = await storeUrlFor(options, config);
  let fleet: ((shared: boolean) => FindingsTools) | null = null;
  let closeFleet = (): Promise<void> => Promise.resolve();
  if (url !== null) {
    const { PostgresSource } = await import('../store/postgres/pg-source.js');
    const { StoreFindingsService } = await import('../mcp/store-service.js');
    const source = await PostgresSource.open(url);
    fleet = (shared) => new StoreFindingsService(source, shared, silentHours * 3_600_000);
    closeFleet = () => source.close();
  }
  try {
    return await serve(options, config, fleet);
  } finally {
    await closeFleet();
  }
}

async function serve(options: McpOptions, config: AuraConfig, fleet: ((shared: boolean) => FindingsTools) | null): Promise<CommandResult> {
  if (options.http === undefined && options.tokens !== undefined) throw new InvalidOptionError('--tokens', options.tokens, 'only with --http: over stdio the client is the process that started aura');
  if (options.http === undefined) {
    const server = buildServer(fleet?.(false) ?? new FindingsService([{ sessionsDir: config.paths.sessions, sealLog: config.paths.sealLog, anchorLog: config.paths.anchorLog, keys: keysFor({}, config) }], false));
    const transport = new BatchedStdioServerTransport();
    const closed = new Promise<void>((resolve) => {
      transport.onclose = () => resolve();
    });
    // Set before connect: the server calls it, then its own.
    transport.onerror = (error) => replyToMalformed(transport, error);
    await server.connect(transport);
    process.stdin.on('end', () => void server.close());
    await closed;
    // A paused stdin still waits for data: the channel is closed, so nothing more is read.
    process.stdin.destroy();
    return { exitCode: EXIT.ok, json: null, human: '', quiet: true };
  }
  const port = portOption('--http', options.http);
  if (options.tokens === undefined) throw new InvalidOptionError('--tokens', undefined, 'a tokens file: the HTTP server never answers without authentication');
  // With a store, a token reads the whole store: its folders apply to folders only.
  const grants = readTokens(options.tokens);
  // Not refused (a home's sessions folder appears with its first session), but said: a typo would
  // otherwise answer its token "no findings" for ever.
  for (const folder of new Set(grants.flatMap((grant) => grant.folders))) {
    if (!fs.existsSync(folder)) process.stderr.write(`aura mcp: ${options.tokens} names ${folder}, which does not exist (yet): its tokens see no sessions there until it does\n`);
  }
  const server = await serveHttp(port, grants, fleet === null ? foldersOf(anchoredKeys()) : () => fleet(true));
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
