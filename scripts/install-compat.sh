#!/usr/bin/env bash
# The other runtimes the tests need, from the npm registry (never a download script), pinned so
# every run tests the same versions; npm runs only when they are not there yet.
# - .compat/ai-sdk-7: ai@7 and Node 22 (AI SDK 7 needs it), where test/adapters/ai-sdk-7.test.ts
#   runs the adapter scenario. The package there is this checkout's dist/ under a copy of
#   package.json, so `aura-harness` resolves `ai` to version 7 and everything else from the
#   checkout (run with --preserve-symlinks).
# - .compat/node-24: Node 24, whose JSON.parse can misread an escaped key
#   (test/spine/native-json.test.ts; scripts/test-node-24.sh runs the whole suite on it).
set -euo pipefail
cd "$(dirname "$0")/.."

install_pinned() {
  local dir=$1 want=$2
  mkdir -p "$dir"
  [ -f "$dir/package.json" ] || echo '{ "private": true, "type": "module" }' > "$dir/package.json"
  if [ "$(cat "$dir/.installed" 2>/dev/null)" != "$want" ] || [ ! -x "$dir/node_modules/.bin/node" ]; then
    # shellcheck disable=SC2086
    (cd "$dir" && npm install --no-audit --no-fund --loglevel=error $want >/dev/null)
    echo "$want" > "$dir/.installed"
  fi
}

install_pinned .compat/ai-sdk-7 'ai@7.0.173 zod@4.6.7 node@22.23.3'
# After npm install, which removes what it did not install.
mkdir -p .compat/ai-sdk-7/node_modules/aura-harness
cp package.json .compat/ai-sdk-7/node_modules/aura-harness/package.json
ln -sfn ../../../../dist .compat/ai-sdk-7/node_modules/aura-harness/dist

install_pinned .compat/node-24 'node@24.21.0'
