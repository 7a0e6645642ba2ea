#!/usr/bin/env bash
# Builds everything: the WebAssembly core, the npm package (web/dist), the explorer and the browser
# test harness. Incremental: cargo, tsc and vite only redo what changed.
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/setup.sh
# The browser tests' second core, with test hooks (a task that traps on purpose): loaded by the
# tests that need it through `wasmUrl`; the package never ships them. Built first, and only when
# the Rust sources changed since: cargo keeps one cdylib per crate, so building it last would make
# the next build relink the package's core.
hooks=tests/.cache/wasm-test-hooks/parquet_skim_wasm_bg.wasm
if [ ! -f "$hooks" ] || [ -n "$(find crate .cargo Cargo.toml Cargo.lock .ci/build-wasm.sh -newer "$hooks" -print -quit)" ]; then
  PARQUET_SKIM_TEST_HOOKS=1 WASM_OUT_DIR=tests/.cache/wasm-test-hooks bash .ci/build-wasm.sh
fi
bash .ci/build-wasm.sh
echo "build: the TypeScript contract (web/src/wasm/contract.ts, from the Rust definitions)"
cargo run --quiet --locked -p parquet-skim-core --features ts --example contract > web/src/wasm/contract.ts.new
mv web/src/wasm/contract.ts.new web/src/wasm/contract.ts

echo "build: npm package (web/dist: type declarations, then the bundles)"
rm -rf web/dist
npx tsc -p web/tsconfig.json
node web/bundle.mjs

echo "build: explorer and test harness"
npx vite build --config web/explorer/vite.config.ts --logLevel warn
npx vite build --config tests/browser/harness/vite.config.ts --logLevel warn
