#!/usr/bin/env node
/**
 * The `aura` and `aura-harness` commands. `aura hook claude-code` runs before every tool call a
 * person waits on, so it runs from its one-file bundle (scripts/build-hook.mjs) and loads nothing
 * else; every other command goes to the full CLI.
 */

import type { claudeCodeHook as ClaudeCodeHook } from './hook-claude-code.js';

const argv = process.argv.slice(2);
if (argv[0] === 'hook' && argv[1] === 'claude-code') {
  // Built by `npm run build`; the bundle's entry is ./hook-claude-code.js, which it holds whole.
  const { claudeCodeHook } = (await import(new URL('../claude-code-hook.js', import.meta.url).href)) as { claudeCodeHook: typeof ClaudeCodeHook };
  process.exitCode = await claudeCodeHook(argv.slice(2));
} else {
  await import('./main.js');
}
