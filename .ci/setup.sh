#!/usr/bin/env bash
# Installs whatever this machine lacks to build and test parquet-skim, and nothing it already has:
# the wasm32 Rust target, the wasm-bindgen CLI pinned to Cargo.lock, Debian's chromium and clang
# (zstd's C code is compiled for wasm32 with clang), nginx-light (one of the servers the tests
# read through), firefox-esr, webkit2gtk-driver and xvfb (the other two engines), npm packages
# (from package-lock.json), and the Python venv with pyarrow (for the
# conformance references) and moto (an S3 server for the tests), and arrow-rs's parquet crate
# with parquet-skim's fixes (crate/patches/parquet, before any cargo command: the workspace builds
# it). Idempotent and quiet when done.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { echo "setup: $*"; }

bash crate/patches/parquet/apply.sh

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  say "adding the wasm32-unknown-unknown Rust target"
  rustup target add wasm32-unknown-unknown
fi

want=$(awk '/^name = "wasm-bindgen"$/ {getline; gsub(/version = |"/, ""); print; exit}' Cargo.lock)
have=$(wasm-bindgen --version 2>/dev/null | awk '{print $2}' || true)
if [ "$have" != "$want" ]; then
  say "installing wasm-bindgen-cli $want (found '${have:-none}')"
  cargo install wasm-bindgen-cli --version "$want" --force
fi

missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v clang >/dev/null 2>&1 || missing+=(clang)
[ -x /usr/sbin/nginx ] || missing+=(nginx-light)
# The two other engines of the smoke test (tests/engines) and the bench: Firefox ESR, and WebKit
# (WebKitWebDriver and its MiniBrowser) under a virtual display.
[ -x /usr/bin/firefox-esr ] || missing+=(firefox-esr)
[ -x /usr/bin/WebKitWebDriver ] || missing+=(webkit2gtk-driver)
command -v xvfb-run >/dev/null 2>&1 || missing+=(xvfb)
if [ ${#missing[@]} -gt 0 ]; then
  say "installing Debian packages: ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# npm ci only when package-lock.json changed since the last install.
stamp=node_modules/.parquet-skim-lock
lock_hash=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$lock_hash" ]; then
  say "installing npm packages"
  PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error
  echo "$lock_hash" > "$stamp"
fi
