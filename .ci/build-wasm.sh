#!/usr/bin/env bash
# Builds the WebAssembly core and its JS glue into web/src/wasm/ (generated, not committed): the
# core without SIMD (parquet_skim_wasm_bg.wasm, for JavaScriptCore) and with it
# (parquet_skim_wasm_simd_bg.wasm, for V8 and SpiderMonkey; .cargo/config.toml says why two).
#
#   PARQUET_SKIM_CODECS  unset or `all`: every codec (snappy, gzip, brotli, lz4 + lz4_raw, zstd), the
#                        published build; or a comma list of crate/wasm features for a slimmer
#                        build, e.g. `snappy,zstd` (README.md, Size).
#   WASM_OUT_DIR         where the .wasm and its glue go (default web/src/wasm).
#   PARQUET_SKIM_TEST_HOOKS=1  add the crate's `test-hooks` feature: the browser tests' second
#                        build only (tests/.cache/wasm-test-hooks; without SIMD, built once), never
#                        the package's.
#   PARQUET_SKIM_KEEP_NAMES=1  keep the name section: function names in CPU profiles (profiling
#                        builds only; 0.12 MB more brotli).
#
# The name and producers sections are dropped (0.12 MB of brotli; they only name functions in
# devtools stack traces; the panic hook's message does not need them). No wasm-opt: measured on
# this module, `-Oz` shrinks the raw file but not what a browser downloads (brotli/gzip equal or
# larger), and costs 1–5 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
bash crate/patches/parquet/apply.sh  # the workspace builds arrow-rs's parquet from there
codecs=${PARQUET_SKIM_CODECS:-all}
features=()
if [ "$codecs" != all ]; then
  features=(--no-default-features --features "$codecs")
fi
if [ "${PARQUET_SKIM_TEST_HOOKS:-0}" = 1 ]; then
  features+=(--features test-hooks)
fi
out=${WASM_OUT_DIR:-web/src/wasm}
cargo build --release --locked --target wasm32-unknown-unknown -p parquet-skim-wasm "${features[@]}"
# --omit-default-module-path: the glue's fallback `new URL('…_bg.wasm', import.meta.url)` would
# point bundlers at a file next to the bundle; the package always passes the compiled module.
strip=(--remove-name-section)
[ "${PARQUET_SKIM_KEEP_NAMES:-0}" = 1 ] && strip=()
bindgen() {  # <out dir> <target dir>: the glue and the .wasm of that target dir's release build
  wasm-bindgen --target web --out-dir "$1" --out-name parquet_skim_wasm \
    "${strip[@]}" --remove-producers-section --omit-default-module-path \
    "$2/wasm32-unknown-unknown/release/parquet_skim_wasm.wasm"
}
bindgen "$out" "${CARGO_TARGET_DIR:-target}"
echo "wasm ($codecs${PARQUET_SKIM_TEST_HOOKS:+, test hooks}): $(stat -c %s "$out/parquet_skim_wasm_bg.wasm") bytes"
[ "${PARQUET_SKIM_TEST_HOOKS:-0}" = 1 ] && exit 0
# The same core with 128-bit SIMD, for the engines whose first tier runs it (V8, SpiderMonkey):
# `parquet_skim_wasm_simd_bg.wasm`, picked by web/src/wasm-build.ts (JavaScriptCore gets the build
# above; .cargo/config.toml says why). Its own target directory, so neither build undoes the other
# (the flags are part of every crate's fingerprint). The glue must come out the same.
simd_target=${CARGO_TARGET_DIR:-target}/simd
CARGO_TARGET_DIR=$simd_target CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS="-C target-feature=+simd128" \
  cargo build --release --locked --target wasm32-unknown-unknown -p parquet-skim-wasm "${features[@]}"
glue=$(mktemp -d)
bindgen "$glue" "$simd_target"
if ! cmp -s "$glue/parquet_skim_wasm.js" "$out/parquet_skim_wasm.js"; then
  echo "the SIMD build's wasm-bindgen glue differs from the other build's: one glue cannot load both" >&2
  exit 1
fi
mv "$glue/parquet_skim_wasm_bg.wasm" "$out/parquet_skim_wasm_simd_bg.wasm"
rm -rf "$glue"
echo "wasm ($codecs, simd128): $(stat -c %s "$out/parquet_skim_wasm_simd_bg.wasm") bytes"
