#!/usr/bin/env bash
# Everything CI checks, in order of cost: formatting and lints, Rust and TS unit tests, then the
# browser end-to-end and conformance tests in Debian Chromium against a real range server.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)
step() { echo; echo "== $* ($(( $(date +%s) - started ))s)"; }

step "setup and build"
bash .ci/build.sh

step "cargo fmt --check"
cargo fmt --all -- --check
step "cargo clippy (host, all targets; wasm32 for the bindings)"
cargo clippy --locked --workspace --all-targets -- -D warnings
cargo clippy --locked --target wasm32-unknown-unknown -p parquet-skim-wasm -- -D warnings
step "tsc --noEmit (strict)"
npx tsc --noEmit -p web/tsconfig.json
npx tsc --noEmit -p tests/tsconfig.json
npx tsc --noEmit -p web/explorer/tsconfig.json
step "biome (lint + format)"
npx biome ci .

step "cargo test"
cargo test --locked --workspace
step "vitest (Node)"
npx vitest run

step "sample data and conformance references"
bash .ci/sample-data.sh
bash tests/conformance/setup-venv.sh

step "browser tests (Playwright, Debian Chromium)"
npx playwright test -c tests/browser/playwright.config.ts

step "all tests passed"
