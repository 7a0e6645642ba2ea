#!/usr/bin/env bash
# Benchmarks (never timed tests): builds, generates the data (TPC-H lineitem SF1, and a 2M-row
# ClickBench-hits-like table; deterministic, cached in tests/.cache/data), then runs in headless
# Chromium:
# - the read-task ablations → bench/results/<date>-ablations.json
# - the predicate / cross-scan cache benchmark → bench/results/<date>-cache.json
# - the package size (.wasm and JS, raw / gzip / brotli) → bench/results/<date>-size.json
# - parquet-skim against parquet-wasm, hyparquet and DuckDB-WASM (TPC-H lineitem in three layouts,
#   which it generates, and the hits table; plus the same queries natively) →
#   bench/results/<date>-peers.{json,md,svg} (~20-25 min on 2 cores; BENCH_RUNS, see the script)
set -euo pipefail
cd "$(dirname "$0")/.."
bash crate/patches/parquet/apply.sh  # the workspace builds arrow-rs's parquet from there
bash .ci/build.sh
bash .ci/sample-data.sh
hits=tests/.cache/data/hits-2m.parquet
if [ ! -f "$hits" ]; then
  cargo run --quiet --locked -p parquet-skim-datagen -- hits --rows 2000000 --row-group-rows 262144 --out "$hits"
fi
node tests/bench/ablations.mjs
node tests/bench/cache.mjs
node tests/bench/size.mjs
node tests/bench/peers.mjs
