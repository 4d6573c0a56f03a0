#!/usr/bin/env node
/**
 * The `aura` and `aura-harness` commands. Each runs from a one-file bundle (scripts/build-bundles.mjs,
 * loaded by ./bundle-loader.ts with a code cache): `aura hook claude-code`, which runs before every
 * tool call a person waits on, from its own that loads nothing else; every other command from the
 * CLI's (./main.ts).
 */

import type { BundleName, loadBundle as LoadBundle } from './bundle-loader.js';
import type { claudeCodeHook } from './hook-claude-code.js';
import type { runCli } from './main.js';

// The loader's CommonJS build: required, the built-ins it uses load lazily as they do for CommonJS.
const { createRequire } = await import('node:module');
const { loadBundle } = createRequire(import.meta.url)('./bundle-loader.cjs') as { loadBundle: typeof LoadBundle };

/** A bundle's export, or a clear failure when dist/ was built without its bundles. */
function exported<T>(bundle: BundleName, value: T | undefined): T {
  if (value === undefined) throw new Error(`dist/${bundle}.cjs is incomplete: run npm run build`);
  return value;
}

const argv = process.argv.slice(2);
if (argv[0] === 'hook' && argv[1] === 'claude-code') {
  const args = argv.slice(2);
  const hook = loadBundle<{ claudeCodeHook: typeof claudeCodeHook }>('claude-code-hook', optionValue(args, '--home'));
  process.exitCode = await exported('claude-code-hook', hook.exports.claudeCodeHook)(args);
  hook.saveCache();
} else {
  const cli = loadBundle<{ runCli: typeof runCli }>('cli', optionValue(argv, '--home'));
  await exported('cli', cli.exports.runCli)(argv);
  cli.saveCache();
}

/** The value of `name` (`NAME VALUE` or `NAME=VALUE`) before any `--`; the command checks its arguments itself. */
function optionValue(args: readonly string[], name: string): string | undefined {
  for (let at = 0; at < args.length && args[at] !== '--'; at++) {
    if (args[at] === name) return args[at + 1];
    if (args[at]?.startsWith(`${name}=`)) return args[at]?.slice(name.length + 1);
  }
  return undefined;
}
