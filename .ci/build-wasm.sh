#!/usr/bin/env bash
# Builds the WebAssembly core and its JS glue into web/src/wasm/ (generated, not committed).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked --target wasm32-unknown-unknown -p parquet-skim-wasm
wasm-bindgen --target web --out-dir web/src/wasm --out-name parquet_skim_wasm \
  target/wasm32-unknown-unknown/release/parquet_skim_wasm.wasm
echo "wasm: $(stat -c %s web/src/wasm/parquet_skim_wasm_bg.wasm) bytes"
