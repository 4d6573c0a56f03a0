#!/usr/bin/env bash
# AI SDK 7 needs Node 22: installs ai@7 and a Node 22 binary (the npm registry's `node` package)
# into .compat/ai-sdk-7, where test/adapters/ai-sdk-7.test.ts runs the adapter scenario on them.
# The package there is this checkout's dist/ under a copy of package.json, so `aura-harness`
# resolves `ai` to version 7 and everything else from the checkout (run with --preserve-symlinks).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=.compat/ai-sdk-7
mkdir -p "$dir"
[ -f "$dir/package.json" ] || echo '{ "private": true, "type": "module" }' > "$dir/package.json"
(cd "$dir" && npm install --no-audit --no-fund --loglevel=error ai@7 zod@4 node@22 >/dev/null)
# After npm install, which removes what it did not install.
mkdir -p "$dir/node_modules/aura-harness"
cp package.json "$dir/node_modules/aura-harness/package.json"
ln -sfn ../../../../dist "$dir/node_modules/aura-harness/dist"
"$dir/node_modules/.bin/node" --version
