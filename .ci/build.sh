#!/usr/bin/env bash
# Builds everything: the WebAssembly core, the npm package (web/dist), the explorer and the browser
# test harness. Incremental: cargo, tsc and vite only redo what changed.
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/setup.sh
bash .ci/build-wasm.sh

echo "build: npm package (web/dist: type declarations, then the bundles)"
rm -rf web/dist
npx tsc -p web/tsconfig.json
node web/bundle.mjs

echo "build: explorer and test harness"
npx vite build --config web/explorer/vite.config.ts --logLevel warn
npx vite build --config tests/browser/harness/vite.config.ts --logLevel warn
