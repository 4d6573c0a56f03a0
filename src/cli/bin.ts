#!/usr/bin/env node
/**
 * The `aura` and `aura-harness` commands. `aura hook claude-code` runs before every tool call a
 * person waits on, so it loads only its own modules; every other command goes to the full CLI.
 */

const argv = process.argv.slice(2);
if (argv[0] === 'hook' && argv[1] === 'claude-code') {
  const { claudeCodeHook } = await import('./hook-claude-code.js');
  process.exitCode = await claudeCodeHook(argv.slice(2));
} else {
  await import('./main.js');
}
