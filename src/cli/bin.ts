#!/usr/bin/env node
/**
 * The `aura` and `aura-harness` commands. `aura hook claude-code` runs before every tool call a
 * person waits on, so it runs from its one-file bundle (scripts/build-hook.mjs, loaded by
 * ./hook-loader.ts) and loads nothing else; every other command goes to the full CLI.
 */

import type { loadClaudeCodeHook as LoadHook } from './hook-loader.js';

const argv = process.argv.slice(2);
if (argv[0] === 'hook' && argv[1] === 'claude-code') {
  // Its CommonJS bundle (scripts/build-hook.mjs): required, the built-ins it uses load lazily as they do for CommonJS.
  const { createRequire } = await import('node:module');
  const { loadClaudeCodeHook } = createRequire(import.meta.url)('./hook-loader.cjs') as { loadClaudeCodeHook: typeof LoadHook };
  const hook = loadClaudeCodeHook(argv.slice(2));
  process.exitCode = await hook.claudeCodeHook(argv.slice(2));
  hook.saveCache();
} else {
  await import('./main.js');
}
