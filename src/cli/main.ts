/**
 * The `aura` command line (./bin.ts runs it): every command, wired to commander in the frame of
 * ./program.ts. Each command lives in its own file and returns a result object.
 *
 * A command's module is imported only when that command runs: a process pays for what it uses
 * (`verify chain` does not load the MCP SDK, the PostgreSQL client or the report pages).
 */

import { configFor, givenKeysFor, type KeyOptions, type StoreOptions } from './context.js';
import type { LogsOptions } from './logs.js';
import type { McpOptions } from './mcp.js';
import type { ProxyOptions } from './proxy.js';
import type { HookInstallOptions } from './hook-install.js';
import { EXIT } from './output.js';
import { runProgram, storeFlag, type JsonFlag, type ProgramKit } from './program.js';
import type { PushFlags } from './push.js';
import { addVerifyChain, verifyCommand } from './verify-chain-command.js';

function registerCommands(kit: ProgramKit): void {
  const { program, json, global, run, withStore, configCommand } = kit;
  configCommand(program, 'demo', 'run a scripted session of a small agent (no network), write it to the sessions folder, verify it', async () => (await import('./demo.js')).demoCommand);

  const verify = verifyCommand(program);
  addVerifyChain(verify, kit);
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
        return verifyStoreCommand(config, { keys: givenKeysFor(flags), anchorLog: config.paths.anchorLog, ...storeFlag(flags) });
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
        return reportHtmlCommand(id, { ...(flags.output === undefined ? {} : { output: flags.output }), keys: givenKeysFor(flags), ...storeFlag(flags) }, config);
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
        return uiCommand({ ...(flags.port === undefined ? {} : { port: flags.port }), keys: givenKeysFor(flags), json: flags.json === true, ...storeFlag(flags) }, config);
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
    .option('--nice <n>', "the push's CPU niceness, 0 (as the shell's) to 19 (yields the most; default 10): a bulk push yields to the host's agents")
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
    .option('--event <name>', 'the hook event this command is installed for: a PreToolUse whose input cannot be read is then refused when failing closed')
    .option('--on-error <allow|deny>', "a call the hook cannot check: 'deny' refuses it (over the profile's claude_code.on_error)")
    .action(async (flags: { profile?: string; agent?: string; principal?: string; event?: string; onError?: string }) => {
      const { claudeCodeHook } = await import('./hook-claude-code.js');
      const { home, project } = global();
      const args = Object.entries({ ...flags, home, project }).flatMap(([key, value]) => (typeof value === 'string' ? [`--${key === 'onError' ? 'on-error' : key}`, value] : []));
      run({}, async () => ({ exitCode: (await claudeCodeHook(args)) === 0 ? EXIT.ok : EXIT.checkFailed, json: null, human: '', quiet: true }));
    });
  hook
    .command('install')
    .description('print the hooks block for Claude Code, or merge it into a settings.json')
    .argument('<target>', 'claude-code')
    .option('--settings <file>', "merge into this settings file (Claude Code's ~/.claude/settings.json or .claude/settings.json)")
    .option('--profile <file>', 'the agent profile the hook applies')
    .option('--agent <ref>', 'the agent ref of the sessions')
    .option('--on-error <allow|deny>', "'deny': the hook refuses a call it cannot check (its input or its profile unreadable)")
    .addOption(json)
    .action((target: string, flags: JsonFlag & HookInstallOptions) => run(flags, async () => (await import('./hook-install.js')).hookInstallCommand(target, flags, configFor(global()))));


  const sessions = program.command('sessions').description('the sessions folder, or the fleet store');
  withStore(sessions.command('list'))
    .description('list sessions: agent, opened, events, verdict, chain, state')
    .addOption(json)
    .action((flags: JsonFlag & StoreOptions) => run(flags, async () => (await import('./sessions.js')).sessionsListCommand(storeFlag(flags), configFor(global()))));
  configCommand(program, 'paths', 'show AURA_HOME, storage, the sessions folder and the config files found', async () => (await import('./paths.js')).pathsCommand);

}

/** Runs the CLI on `argv` (without the node and script names) and sets the process's exit code. */
export function runCli(argv: readonly string[]): Promise<void> {
  return runProgram(argv, registerCommands);
}
