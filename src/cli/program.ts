/**
 * The `aura` command line's frame, which every set of commands runs in: the program with its
 * global options, running the command the arguments name, printing its result (`--json` or for
 * people) and mapping errors to the documented exit codes, in one place (`reportError`). Nothing
 * reaches the user as a stack trace.
 *
 * The commands themselves are registered by the bundle's entry: ./main.ts registers all of them,
 * ./verify-chain-main.ts only `verify chain`, whose bundle starts in a fraction of the time.
 */

import { Command, CommanderError, Option } from 'commander';
import type { AuraConfig } from '../config/config.js';
import { AuraError, describeCause } from '../errors.js';
import { redactCredentials } from '../middleware/credential-text.js';
import { VERSION } from '../version.js';
import { quotedTexts, redactedMessage } from './error-text.js';
import { configFor, type GlobalOptions, type StoreOptions } from './context.js';
import { GLOBAL_OPTIONS } from './global-options.js';
import { EXIT, printResult, terminalText, type CommandResult } from './output.js';

/** The `--json` flag, as every command that prints a result takes it. */
export interface JsonFlag {
  readonly json?: boolean;
}

/** What the parsed command line asked for: the command's result, and how to print it. */
interface Invocation {
  outcome?: Promise<CommandResult>;
  asJson: boolean;
}

/** The program, and what each command's registration uses of it. */
export interface ProgramKit {
  readonly program: Command;
  /** The `--json` option, for `addOption`. */
  readonly json: Option;
  /** The global options (`--home`, `--project`, `--anchor-dir`) as parsed. */
  global(): GlobalOptions;
  /** Runs a command's action: its result is printed once the arguments are parsed. */
  run(flags: JsonFlag, command: () => CommandResult | Promise<CommandResult>): void;
  /** Adds `--store URL` and `--no-store`: the fleet store, or the local folder whatever the config says. */
  withStore(command: Command): Command;
  /** A command that takes no arguments, only the configuration; `load` imports it when it runs. */
  configCommand(parent: Command, name: string, description: string, load: () => Promise<(config: AuraConfig) => CommandResult | Promise<CommandResult>>): void;
}

/** Registers a set of commands on the program. */
export type Registration = (kit: ProgramKit) => void;

function buildProgram(invocation: Invocation, register: Registration): Command {
  const program = new Command('aura')
    .description('Runtime harness for AI agent sessions: hash-chained audit trails, policy at the tool boundary, evidence exports.')
    .version(`aura-harness ${VERSION}`, '-V, --version')
    .showHelpAfterError('(run aura --help for usage)')
    .exitOverride()
    // With --json a usage error is printed as JSON, by reportError.
    .configureOutput({ writeErr: (text) => !invocation.asJson && process.stderr.write(usageText(text)) });

  for (const { flags, description } of GLOBAL_OPTIONS) program.option(flags, description);
  const global = (): GlobalOptions => program.opts<GlobalOptions>();
  const json = new Option('--json', 'print one JSON object (stable, for machines)');
  const run = (flags: JsonFlag, command: () => CommandResult | Promise<CommandResult>): void => {
    invocation.asJson = flags.json === true;
    invocation.outcome = Promise.resolve().then(command);
  };
  register({
    program,
    json,
    global,
    run,
    withStore: (command) =>
      command
        .option('--store <url>', 'read the fleet store at this postgres:// URL (or env:NAME holding one) instead of the sessions folder (default: config store)')
        .option('--no-store', 'read the local sessions folder even when the config names a store'),
    configCommand: (parent, name, description, load) => {
      parent
        .command(name)
        .description(description)
        .addOption(json)
        .action((flags: JsonFlag) => run(flags, async () => (await load())(configFor(global()))));
    },
  });
  return program;
}

/** The store flag as commands take it (commander leaves it out when neither flag is given). */
export function storeFlag(flags: StoreOptions): StoreOptions {
  return flags.store === undefined ? {} : { store: flags.store };
}

/** Runs the CLI on `argv` (without the node and script names) and returns the exit code. */
async function main(argv: readonly string[], register: Registration): Promise<number> {
  const end = argv.indexOf('--');
  const invocation: Invocation = { asJson: (end < 0 ? argv : argv.slice(0, end)).includes('--json') };
  try {
    await buildProgram(invocation, register).parseAsync([...argv], { from: 'user' });
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
    [code, message, exit] = ['USAGE', usageText(error.message.replace(/^error: /, '')), EXIT.usage];
  } else if (error instanceof AuraError) {
    [code, message, data, exit] = [error.code, error.message, error.data, EXIT.usage];
  } else if (isSystemError(error)) {
    const where = error.path === undefined ? '' : ` ${error.path}`;
    [code, message, data, exit] = ['FILE_SYSTEM', `cannot ${error.syscall}${where}: ${describeCause(error)}`, error.path === undefined ? undefined : { path: error.path }, EXIT.usage];
  } else {
    [code, message, exit] = ['INTERNAL', `internal error: ${error instanceof Error ? error.message : String(error)}`, EXIT.internal];
  }
  // An error can quote what it was given (a path, a URL): a credential in it is not repeated.
  const said = redactedMessage(message, quotedTexts(error));
  if (asJson) {
    const body = { code, message: said, ...(data === undefined ? {} : { data }) };
    // The message is redacted already, its quoted paths apart from aura's words; the data's texts each alone.
    const quoted = function (this: unknown, key: string, value: unknown): unknown {
      return typeof value === 'string' && !(this === body && key === 'message') ? redactCredentials(value) : value;
    };
    process.stdout.write(`${JSON.stringify({ error: body }, quoted, 2)}\n`);
  } else process.stderr.write(`aura: ${terminalText(said)}\n`);
  return exit;
}

/**
 * A usage error's text without what an option was given: an option the parser does not know
 * (`--stroe=postgres://user:password@…`, `--headers=x-api-key=…`) is quoted with its value, and
 * only its name says what was wrong. Credentials elsewhere in it are redacted as in every error.
 */
function usageText(text: string): string {
  return redactCredentials(text.replace(/'(-{1,2}[^'=\s]+)=[^']*'/g, "'$1=…'"));
}

/**
 * Runs the commands `register` adds on `argv` and sets the process's exit code. Output that cannot be written: a reader
 * that stops reading (`aura logs <id> | head -2`) ends the output quietly, and the command
 * finishes as it would have; any other failure (a full disk under `> file`) is said on stderr and
 * exits 2.
 */
export async function runProgram(argv: readonly string[], register: Registration): Promise<void> {
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
  const exitCode = await main(argv, register);
  process.exitCode = outputFailed ? EXIT.usage : exitCode;
}
