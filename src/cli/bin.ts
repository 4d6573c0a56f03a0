#!/usr/bin/env node
/**
 * The `aura` and `aura-harness` commands. `aura hook claude-code` runs before every tool call a
 * person waits on, so it runs from its one-file bundle (scripts/build-hook.mjs, loaded by
 * ./hook-loader.ts) and loads nothing else; every other command goes to the full CLI.
 */

const argv = process.argv.slice(2);
if (argv[0] === 'hook' && argv[1] === 'claude-code') {
  const { loadClaudeCodeHook } = await import('./hook-loader.js');
  const hook = loadClaudeCodeHook(argv.slice(2));
  process.exitCode = await hook.claudeCodeHook(argv.slice(2));
  hook.saveCache();
} else {
  await import('./main.js');
}
