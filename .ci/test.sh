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
step "cargo clippy (host, all targets; wasm32 for the bindings, both builds of the core)"
cargo clippy --locked --workspace --all-targets -- -D warnings
cargo clippy --locked --target wasm32-unknown-unknown -p parquet-skim-wasm -- -D warnings
# The SIMD build compiles other code (crate/core/src/filter/find.rs): linted in its own target
# directory, as .ci/build-wasm.sh builds it, so neither configuration undoes the other's.
CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target}/simd CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS="-C target-feature=+simd128" \
  cargo clippy --locked --target wasm32-unknown-unknown -p parquet-skim-wasm -- -D warnings
step "tsc --noEmit (strict)"
npx tsc --noEmit -p web/tsconfig.json
npx tsc --noEmit -p web/tsconfig.tests.json
npx tsc --noEmit -p tests/tsconfig.json
npx tsc --noEmit -p web/explorer/tsconfig.json
step "biome (lint + format)"
npx biome ci .

counts=$(mktemp)
rm -rf tests/.cache/robustness  # the robustness ledgers cover exactly this run
step "cargo test"
cargo test --locked --workspace 2>&1 | tee -a "$counts"
step "cargo test: the slim codec set (snappy, zstd) reads its codecs and names the missing ones"
cargo test --locked -p parquet-skim-core --no-default-features --features snappy,zstd --test codecs 2>&1 | tee -a "$counts"
step "vitest (Node)"
npx vitest run 2>&1 | tee -a "$counts"

step "sample data and conformance references"
bash .ci/sample-data.sh
bash tests/conformance/setup-venv.sh

step "browser tests (Playwright, Debian Chromium)"
npx playwright test -c tests/browser/playwright.config.ts 2>&1 | tee -a "$counts"

step "robustness summary (hostile files, servers, big files, lifecycle, fuzz)"
node tests/robustness/summary.mjs --json tests/.cache/robustness-summary.json

# One closing line for all three runners (pipefail has already stopped us on any failure).
plain=$(sed 's/\x1b\[[0-9;]*m//g' "$counts")
cargo_passed=$(grep -oE '^test result: ok\. [0-9]+ passed' <<<"$plain" | awk '{s+=$4} END {print s+0}')
vitest_passed=$(grep -oE '^ +Tests +[0-9]+ passed' <<<"$plain" | awk '{s+=$2} END {print s+0}')
playwright_passed=$(grep -oE '^ +[0-9]+ passed \(' <<<"$plain" | awk '{s+=$1} END {print s+0}')
rm -f "$counts"
step "done: cargo $cargo_passed, vitest $vitest_passed, playwright $playwright_passed"
echo "$((cargo_passed + vitest_passed + playwright_passed)) passed, 0 failed"
