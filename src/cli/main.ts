/**
 * The `aura` command line (./bin.ts runs it). Each command lives in its own file and returns a
 * result object; this file wires them to commander, prints results (`--json` or for people) and
 * maps errors to the documented exit codes, in one place (`reportError`). Nothing reaches the
 * user as a stack trace.
 *
 * A command's module is imported only when that command runs: a process pays for what it uses
 * (`verify chain` does not load the MCP SDK, the PostgreSQL client or the report pages).
 */

import { Command, CommanderError, Option } from 'commander';
import type { AuraConfig } from '../config/config.js';
import { AuraError, describeCause } from '../errors.js';
import { redactCredentials } from '../middleware/redact.js';
import { VERSION } from '../version.js';
import { configFor, keysFor, type GlobalOptions, type KeyOptions, type StoreOptions } from './context.js';
import type { LogsOptions } from './logs.js';
import type { McpOptions } from './mcp.js';
import type { ProxyOptions } from './proxy.js';
import type { HookInstallOptions } from './hook-install.js';
import { GLOBAL_OPTIONS } from './global-options.js';
import { EXIT, printResult, type CommandResult } from './output.js';
import type { PushFlags } from './push.js';

interface JsonFlag {
  readonly json?: boolean;
}

/** What the parsed command line asked for: the command's result, and how to print it. */
interface Invocation {
  outcome?: Promise<CommandResult>;
  asJson: boolean;
}

function buildProgram(invocation: Invocation): Command {
  const program = new Command('aura')
    .description('Runtime harness for AI agent sessions: hash-chained audit trails, policy at the tool boundary, evidence exports.')
    .version(`aura-harness ${VERSION}`, '-V, --version')
    .showHelpAfterError('(run aura --help for usage)')
    .exitOverride()
    // With --json a usage error is printed as JSON, by reportError.
    .configureOutput({ writeErr: (text) => !invocation.asJson && process.stderr.write(text) });

  for (const { flags, description } of GLOBAL_OPTIONS) program.option(flags, description);
  const global = (): GlobalOptions => program.opts<GlobalOptions>();
  const json = new Option('--json', 'print one JSON object (stable, for machines)');
  /** `--store URL` and `--no-store`: the fleet store, or the local folder whatever the config says. */
  const withStore = (command: Command): Command =>
    command
      .option('--store <url>', 'read the fleet store at this postgres:// URL (or env:NAME holding one) instead of the sessions folder (default: config store)')
      .option('--no-store', 'read the local sessions folder even when the config names a store');
  const run = (flags: JsonFlag, command: () => CommandResult | Promise<CommandResult>): void => {
    invocation.asJson = flags.json === true;
    invocation.outcome = Promise.resolve().then(command);
  };
  /** A command that takes no arguments, only the configuration; `load` imports it when it runs. */
  const configCommand = (parent: Command, name: string, description: string, load: () => Promise<(config: AuraConfig) => CommandResult | Promise<CommandResult>>): void => {
    parent
      .command(name)
      .description(description)
      .addOption(json)
      .action((flags: JsonFlag) => run(flags, async () => (await load())(configFor(global()))));
  };

  configCommand(program, 'demo', 'run a scripted session of a small agent (no network), write it to the sessions folder, verify it', async () => (await import('./demo.js')).demoCommand);

  const verify = program.command('verify').description('check trails');
  verify
    .command('chain')
    .description('verify the hash chain of a trail: integrity, and completeness against its seal')
    .argument('<path>', 'a trail (.jsonl) path, or a session id in the sessions folder')
    .option('--summary <file>', "a summary whose seal the trail must match (aura's chain and seal, or Aura's event_count)")
    .option('--keys <dir>', 'trust the public keys in DIR (default: AURA_HOME/keys when it has any)')
    .option('--public-key <file>', 'trust this one public key')
    .addOption(json)
    .action((path: string, flags: JsonFlag & KeyOptions & { summary?: string }) =>
      run(flags, async () => {
        const config = configFor(global());
        const { verifyChainCommand } = await import('./verify-chain.js');
        return verifyChainCommand(path, { ...(flags.summary === undefined ? {} : { summary: flags.summary }), keys: keysFor(flags, config) }, config);
      }),
    );
  withStore(
    verify
      .command('store')
      .description('verify every session of the sessions folder against the seal log (and its anchor copy), or of the fleet store from its stored bytes')
      .option('--keys <dir>', 'trust the public keys in DIR (default: AURA_HOME/keys when it has any; with --store, the keys hosts pushed)')
      .option('--public-key <file>', 'trust this one public key'),
  )
    .addOption(json)
    .action((flags: JsonFlag & KeyOptions & StoreOptions) =>
      run(flags, async () => {
        const config = configFor(global());
        const { verifyStoreCommand } = await import('./verify-store.js');
        return verifyStoreCommand(config, { keys: keysFor(flags, config), anchorLog: config.paths.anchorLog, ...storeFlag(flags) });
      }),
    );

  const keys = program.command('keys').description('the Ed25519 keys that sign checkpoints and seals');
  configCommand(keys, 'init', 'make the first signing key under AURA_HOME/keys', async () => (await import('./keys.js')).keysInitCommand);
  configCommand(keys, 'rotate', 'make a new signing key; older public keys stay trusted for older records', async () => (await import('./keys.js')).keysRotateCommand);
  configCommand(keys, 'list', 'list the keys and which one signs', async () => (await import('./keys.js')).keysListCommand);

  program
    .command('export')
    .description("print a session's summary; build summary and spans from the trail when it has none")
    .argument('<session_id>', 'aura_sess_ + 12 hex')
    .option('--rebuild', 'build summary and spans again from the trail')
    .addOption(json)
    .action((id: string, flags: JsonFlag & { rebuild?: boolean }) =>
      run(flags, async () => (await import('./export.js')).exportCommand(id, flags.rebuild === true ? { rebuild: true } : {}, configFor(global()))),
    );

  program
    .command('export-otel')
    .description("write a session's spans (OTLP/JSON) to {id}.otel.jsonl and push them to a collector when an endpoint is set")
    .argument('<session_id>', 'aura_sess_ + 12 hex')
    .option('--endpoint <url>', 'OTLP/HTTP endpoint (/v1/traces is added unless there); default $OTEL_EXPORTER_OTLP_ENDPOINT, else config otel.endpoint')
    .option('--protocol <protocol>', 'http/protobuf (default) or http/json')
    .option('--header <name=value>', 'a request header (repeatable)', (value: string, previous: string[] = []) => [...previous, value])
    .addOption(json)
    .action((id: string, flags: JsonFlag & { endpoint?: string; protocol?: string; header?: string[] }) =>
      run(flags, async () =>
        (await import('./export.js')).exportOtelCommand(
          id,
          { ...(flags.endpoint === undefined ? {} : { endpoint: flags.endpoint }), ...(flags.protocol === undefined ? {} : { protocol: flags.protocol }), headers: flags.header ?? [] },
          configFor(global()),
        ),
      ),
    );

  const report = program.command('report').description("a session's audit report");
  withStore(
    report
      .command('show')
      .description('the verdict, findings by severity, scorecard and recommendations (re-checked from the trail when it is there)')
      .argument('<session_id>', 'aura_sess_ + 12 hex'),
  )
    .addOption(json)
    .action((id: string, flags: JsonFlag & StoreOptions) => run(flags, async () => (await import('./report.js')).reportShowCommand(id, storeFlag(flags), configFor(global()))));
  withStore(report.command('html'))
    .description('write the report as one self-contained HTML page (verdict, chain, findings, scorecard, timeline); prints its path')
    .argument('<session_id>', 'aura_sess_ + 12 hex')
    .option('-o, --output <path>', 'write the page to this file, or into this folder as <session_id>.report.html (default: the current folder)')
    .option('--keys <dir>', 'trust the public keys in DIR (default: AURA_HOME/keys when it has any)')
    .option('--public-key <file>', 'trust this one public key')
    .addOption(json)
    .action((id: string, flags: JsonFlag & KeyOptions & StoreOptions & { output?: string }) =>
      run(flags, async () => {
        const config = configFor(global());
        const { reportHtmlCommand } = await import('./report-html.js');
        return reportHtmlCommand(id, { ...(flags.output === undefined ? {} : { output: flags.output }), keys: keysFor(flags, config), ...storeFlag(flags) }, config);
      }),
    );

  withStore(program.command('ui'))
    .description('serve the sessions list and each session\'s report on 127.0.0.1, read-only, behind a random access token')
    .option('--port <port>', 'listen on this port (default 0: any free port)')
    .option('--keys <dir>', 'trust the public keys in DIR (default: AURA_HOME/keys when it has any)')
    .option('--public-key <file>', 'trust this one public key')
    .addOption(json)
    .action((flags: JsonFlag & KeyOptions & StoreOptions & { port?: string }) =>
      run(flags, async () => {
        const config = configFor(global());
        const { uiCommand } = await import('./ui.js');
        return uiCommand({ ...(flags.port === undefined ? {} : { port: flags.port }), keys: keysFor(flags, config), json: flags.json === true, ...storeFlag(flags) }, config);
      }),
    );

  program
    .command('logs')
    .description("a session's timeline, one event a line")
    .argument('<session_id>', 'aura_sess_ + 12 hex')
    .option('--kind <kind>', 'only events of this kind (a glob such as tool.* works)')
    .option('--since <time>', 'only events at or after this ISO 8601 time')
    .addOption(json)
    .action((id: string, flags: JsonFlag & LogsOptions) =>
      run(flags, async () => (await import('./logs.js')).logsCommand(id, { ...(flags.kind === undefined ? {} : { kind: flags.kind }), ...(flags.since === undefined ? {} : { since: flags.since }) }, configFor(global()))),
    );

  program
    .command('compare')
    .description('two sessions side by side; exit 0 when verdict, findings and policy agree, 1 when they differ')
    .argument('<a>', 'a session id')
    .argument('<b>', 'another session id')
    .addOption(json)
    .action((a: string, b: string, flags: JsonFlag) => run(flags, async () => (await import('./compare.js')).compareCommand(a, b, configFor(global()))));

  withStore(program.command('mcp'))
    .description('serve the findings channel (get_session_findings, SuperAuditor v1.1) over stdio, or Streamable HTTP on loopback')
    .option('--http <port>', 'serve Streamable HTTP on 127.0.0.1:PORT (0 for any free port) instead of stdio')
    .option('--tokens <file>', 'with --http: the bearer tokens and the sessions folders each may read (required)')
    .option('--silent-after <hours>', 'with a store: a host that has not pushed for this long is reported (HOST_SILENT; default 24)')
    .action((flags: McpOptions & StoreOptions) => run({}, async () => (await import('./mcp.js')).mcpCommand({ ...flags, ...storeFlag(flags) }, configFor(global()))));

  withStore(program.command('push'))
    .description('ship closed sessions (every line, summary, seal) to the fleet store; --follow also ships open sessions as they grow')
    .argument('[session_id...]', 'the sessions to push (aura_sess_ + 12 hex)')
    .option('--all', 'push every session of the sessions folder')
    .option('--follow', 'keep pushing: open sessions as they grow, closed ones when they close (until Ctrl-C or SIGTERM)')
    .option('--interval <ms>', 'with --follow: time between rounds (default 1000)')
    .option('--host <name>', 'name this host in the store (default: the machine name)')
    .addOption(json)
    .action((ids: string[], flags: JsonFlag & PushFlags & StoreOptions) => run(flags, async () => (await import('./push.js')).pushCommand(ids, { ...flags, ...storeFlag(flags) }, configFor(global()))));

  withStore(program.command('pull'))
    .description('write a session of the fleet store back as files, byte for byte as it was pushed')
    .argument('<session_id>', 'aura_sess_ + 12 hex')
    .option('-o, --output <dir>', 'write the files into DIR (default: the sessions folder)')
    .addOption(json)
    .action((id: string, flags: JsonFlag & StoreOptions & { output?: string }) =>
      run(flags, async () => (await import('./pull.js')).pullCommand(id, { ...(flags.output === undefined ? {} : { output: flags.output }), ...storeFlag(flags) }, configFor(global()))),
    );

  const store = program.command('store').description('the fleet store on PostgreSQL');
  withStore(store.command('init'))
    .description('create or migrate the store schema, and the ingest and reader roles (needs a role that may create them)')
    .option('--ingest-role <name>', 'the role that may only insert (default aura_ingest)')
    .option('--reader-role <name>', 'the role that may only read (default aura_reader)')
    .addOption(json)
    .action((flags: JsonFlag & StoreOptions & { ingestRole?: string; readerRole?: string }) => run(flags, async () => (await import('./store.js')).storeInitCommand({ ...flags, ...storeFlag(flags) }, configFor(global()))));

  program
    .command('proxy')
    .description('put aura in front of an MCP server: every tool call goes through policy and approvals, into one session per client connection')
    .argument('[command...]', 'the upstream server to run, after --: -- <command> [args…]')
    .option('--profile <file>', 'the agent profile (policy, capabilities; proxy: {findings_tool: false} hides get_session_findings)')
    .option('--agent <ref>', "the agent ref of the sessions (default: the profile's agent_ref, else proxy/<upstream name>)")
    .option('--upstream-url <url>', 'reach the upstream over Streamable HTTP instead of running a command')
    .option('--http <port>', 'serve clients over Streamable HTTP on 127.0.0.1:PORT (0 for any free port) instead of stdio')
    .option('--tokens <file>', 'with --http: the bearer tokens that may connect (required)')
    .option('--max-message-bytes <n>', 'the largest message the upstream may send (a stdio line, an HTTP answer or event); a larger answer fails its call (default 10485760, 10 MiB)')
    .option('--max-sessions <n>', 'with --http: sessions at once, each with its own upstream (default 32)')
    .option('--max-sessions-per-token <n>', 'with --http: sessions at once for one token (default 8)')
    .option('--idle-timeout <seconds>', 'with --http: close a session no request has used for this long (default 900)')
    .action((command: string[], flags: ProxyOptions) => run({}, async () => (await import('./proxy.js')).proxyCommand(command, flags, configFor(global()))));

  program
    .command('approve')
    .description('approve a call waiting in a live session (aura proxy); the agent retries it and it goes through, once')
    .argument('<session_id>', 'aura_sess_ + 12 hex')
    .argument('<request_id>', 'the request id the refused call named')
    .requiredOption('--principal <who>', 'who approves (recorded with the approval)')
    .addOption(json)
    .action((id: string, requestId: string, flags: JsonFlag & { principal: string }) => run(flags, async () => (await import('./approve.js')).approveCommand(id, requestId, flags.principal, configFor(global()))));

  const hook = program.command('hook').description('aura inside an agent host that runs commands for its hooks');
  hook
    .command('claude-code')
    .description("Claude Code's hook command: reads one hook input on stdin, records it in the Claude session's aura session, answers PreToolUse from the profile")
    .option('--profile <file>', 'the agent profile (policy; claude_code: {on_error: deny} refuses calls aura cannot check)')
    .option('--agent <ref>', "the agent ref (default: the profile's agent_ref, else claude-code/<project folder>)")
    .option('--principal <who>', 'who is recorded approving a call at the permission prompt')
    .action(async (flags: { profile?: string; agent?: string; principal?: string }) => {
      const { claudeCodeHook } = await import('./hook-claude-code.js');
      const { home, project } = global();
      const args = Object.entries({ ...flags, home, project }).flatMap(([key, value]) => (typeof value === 'string' ? [`--${key}`, value] : []));
      run({}, async () => ({ exitCode: (await claudeCodeHook(args)) === 0 ? EXIT.ok : EXIT.checkFailed, json: null, human: '', quiet: true }));
    });
  hook
    .command('install')
    .description('print the hooks block for Claude Code, or merge it into a settings.json')
    .argument('<target>', 'claude-code')
    .option('--settings <file>', "merge into this settings file (Claude Code's ~/.claude/settings.json or .claude/settings.json)")
    .option('--profile <file>', 'the agent profile the hook applies')
    .option('--agent <ref>', 'the agent ref of the sessions')
    .addOption(json)
    .action((target: string, flags: JsonFlag & HookInstallOptions) => run(flags, async () => (await import('./hook-install.js')).hookInstallCommand(target, flags, configFor(global()))));


  const sessions = program.command('sessions').description('the sessions folder, or the fleet store');
  withStore(sessions.command('list'))
    .description('list sessions: agent, opened, events, verdict, chain, state')
    .addOption(json)
    .action((flags: JsonFlag & StoreOptions) => run(flags, async () => (await import('./sessions.js')).sessionsListCommand(storeFlag(flags), configFor(global()))));
  configCommand(program, 'paths', 'show AURA_HOME, storage, the sessions folder and the config files found', async () => (await import('./paths.js')).pathsCommand);

  return program;
}

/** The store flag as commands take it (commander leaves it out when neither flag is given). */
function storeFlag(flags: StoreOptions): StoreOptions {
  return flags.store === undefined ? {} : { store: flags.store };
}

/** Runs the CLI on `argv` (without the node and script names) and returns the exit code. */
async function main(argv: readonly string[]): Promise<number> {
  const end = argv.indexOf('--');
  const invocation: Invocation = { asJson: (end < 0 ? argv : argv.slice(0, end)).includes('--json') };
  try {
    await buildProgram(invocation).parseAsync([...argv], { from: 'user' });
    if (invocation.outcome === undefined) return EXIT.ok;
    const result = await invocation.outcome;
    printResult(result, invocation.asJson);
    return result.exitCode;
  } catch (error) {
    return reportError(error, invocation.asJson);
  }
}

/** A failed system call (`open`, `write`, `mkdir`, …) that escaped its command: the file system's doing, not a bug. */
function isSystemError(error: unknown): error is NodeJS.ErrnoException {
  const { code, syscall } = error as NodeJS.ErrnoException;
  return error instanceof Error && typeof code === 'string' && /^E[A-Z0-9]+$/.test(code) && typeof syscall === 'string';
}

/**
 * The one place errors become messages and exit codes: 2 for what the user or the file system
 * caused (arguments, input, a full disk, a read-only folder), 70 for a bug. (A check that fails is
 * a result with exit code 1, not an error.) With `--json` the error is one JSON object on stdout,
 * `{"error": {code, message, data?}}`.
 */
function reportError(error: unknown, asJson: boolean): number {
  let code: string;
  let message: string;
  let data: unknown;
  let exit: number;
  if (error instanceof CommanderError) {
    // Asked-for help and version are successes; help shown for a missing subcommand, and every
    // other parse failure, is a usage error (commander has already printed why, unless --json).
    if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return EXIT.ok;
    if (!asJson) return EXIT.usage;
    [code, message, exit] = ['USAGE', error.message.replace(/^error: /, ''), EXIT.usage];
  } else if (error instanceof AuraError) {
    [code, message, data, exit] = [error.code, error.message, error.data, EXIT.usage];
  } else if (isSystemError(error)) {
    const where = error.path === undefined ? '' : ` ${error.path}`;
    [code, message, data, exit] = ['FILE_SYSTEM', `cannot ${error.syscall}${where}: ${describeCause(error)}`, error.path === undefined ? undefined : { path: error.path }, EXIT.usage];
  } else {
    [code, message, exit] = ['INTERNAL', `internal error: ${error instanceof Error ? error.message : String(error)}`, EXIT.internal];
  }
  // An error can quote what it was given (a path, a URL): a credential in it is not repeated.
  const quoted = (_key: string, value: unknown): unknown => (typeof value === 'string' ? redactCredentials(value) : value);
  if (asJson) process.stdout.write(`${JSON.stringify({ error: { code, message, ...(data === undefined ? {} : { data }) } }, quoted, 2)}\n`);
  else process.stderr.write(`aura: ${redactCredentials(message)}\n`);
  return exit;
}

/**
 * Runs the CLI on `argv` and sets the process's exit code. Output that cannot be written: a reader
 * that stops reading (`aura logs <id> | head -2`) ends the output quietly, and the command
 * finishes as it would have; any other failure (a full disk under `> file`) is said on stderr and
 * exits 2.
 */
export async function runCli(argv: readonly string[]): Promise<void> {
  let outputFailed = false;
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      stream.destroy();
      if (error.code === 'EPIPE' || error.code === 'ERR_STREAM_DESTROYED') return;
      outputFailed = true;
      process.exitCode = EXIT.usage;
      if (stream === process.stdout && !process.stderr.destroyed) process.stderr.write(`aura: cannot write the output: ${describeCause(error)}\n`);
    });
  }
  const exitCode = await main(argv);
  process.exitCode = outputFailed ? EXIT.usage : exitCode;
}
