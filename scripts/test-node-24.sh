#!/usr/bin/env bash
# The whole suite on Node 24 (users run 22 and 24; the floor is 20): the tests' child processes
# run on it too, as they start `process.execPath`. Node 24 comes from the npm registry's `node`
# package (scripts/install-compat.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-compat.sh
PATH="$PWD/.compat/node-24/node_modules/.bin:$PATH"
echo "vitest on $(node --version)"
node node_modules/vitest/vitest.mjs run "$@"
