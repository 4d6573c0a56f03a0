#!/usr/bin/env node
/**
 * The `aura` and `aura-harness` commands, built to the package's bin, dist/cli/bin.cjs
 * (scripts/build-bundles.mjs): a CommonJS entry, because Node starts an ES module entry through its
 * module loader, which costs each command several milliseconds before it runs. Each command runs
 * from a one-file bundle loaded by ./bundle-loader.ts with a code cache: `aura hook claude-code`,
 * which runs before every tool call a person waits on, from its own that loads nothing else;
 * `aura verify chain` from its own (./verify-chain-main.ts); every other command from the CLI's
 * (./main.ts).
 */

import { loadBundle, type BundleName } from './bundle-loader.js';
import { GLOBAL_OPTIONS_WITH_VALUES } from './global-options.js';
import type { claudeCodeHook, keptProfileValue } from './hook-claude-code.js';
import type { runCli } from './main.js';

/** A bundle's export, or a clear failure when dist/ was built without its bundles. */
function exported<T>(bundle: BundleName, value: T | undefined): T {
  if (value === undefined) throw new Error(`dist/${bundle}.cjs is incomplete: run npm run build`);
  return value;
}

async function main(argv: readonly string[]): Promise<void> {
  if (argv[0] === 'hook' && argv[1] === 'claude-code') {
    const args = argv.slice(2);
    const hook = loadBundle<{ claudeCodeHook: typeof claudeCodeHook; keptProfileValue: typeof keptProfileValue }>('claude-code-hook', optionValue(args, '--home'));
    process.exitCode = await exported('claude-code-hook', hook.exports.claudeCodeHook)(args);
    // A hook that parsed its profile's YAML and kept the value leaves the code cache to the next,
    // which reads that value: a cache holds the code its process compiled, and yaml's would be read
    // by every later hook for nothing (490 against 330 kB here: 9.3 against 7.5 ms to load).
    if (hook.exports.keptProfileValue?.() !== true) hook.saveCache();
  } else {
    const command = commandOf(argv);
    const bundle = command?.name === 'verify' && argv[command.at + 1] === 'chain' ? 'verify-chain' : 'cli';
    const cli = loadBundle<{ runCli: typeof runCli }>(bundle, optionValue(argv, '--home'), bundle === 'cli' ? command?.name : undefined);
    await exported(bundle, cli.exports.runCli)(argv);
    cli.saveCache();
  }
}

/** The value of `name` (`NAME VALUE` or `NAME=VALUE`) before any `--`; the command checks its arguments itself. */
function optionValue(args: readonly string[], name: string): string | undefined {
  for (let at = 0; at < args.length && args[at] !== '--'; at++) {
    if (args[at] === name) return args[at + 1];
    if (args[at]?.startsWith(`${name}=`)) return args[at]?.slice(name.length + 1);
  }
  return undefined;
}

/**
 * The command's name and place (`verify`, 2 of `aura --home h verify chain t`), or undefined for
 * none a file may be named by.
 */
function commandOf(argv: readonly string[]): { name: string; at: number } | undefined {
  for (let at = 0; at < argv.length; at++) {
    const arg = argv[at] as string;
    if (GLOBAL_OPTIONS_WITH_VALUES.has(arg)) at++;
    else if (!arg.startsWith('-')) return /^[a-z][a-z-]{0,31}$/.test(arg) ? { name: arg, at } : undefined;
  }
  return undefined;
}

// A failure the commands do not turn into an exit code ends the process as an uncaught error would.
void main(process.argv.slice(2));
