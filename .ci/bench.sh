#!/usr/bin/env bash
# Benchmarks (never timed tests): builds, generates the data (TPC-H lineitem SF1, and a 2M-row
# ClickBench-hits-like table; deterministic, cached in tests/.cache/data), then runs in headless
# Chromium:
# - the read-task ablations → bench/results/<date>-ablations.json
# - the predicate / cross-scan cache benchmark, on the hits table as datagen, pyarrow and DuckDB
#   write it → bench/results/<date>-cache.json
# - the package size (.wasm and JS, raw / gzip / brotli) → bench/results/<date>-size.json
# - parquet-skim against parquet-wasm, hyparquet and DuckDB-WASM, beside the I/O floor (TPC-H
#   lineitem in three layouts of its own and as tpchgen-cli, pyarrow and DuckDB write it, and the
#   hits table; the bulk queries also at 20 ms / 200 Mbit/s and 80 ms / 50 Mbit/s; plus the same
#   queries natively) → bench/results/<date>-peers.{json,md,svg} (BENCH_RUNS, BENCH_NETWORKS…)
# - interactive speed: a cold page's first rows and a lookup, and the same on a warm reader, on
#   files from three writers, against the I/O and compile floors and the peers, at 0 and 20 ms per
#   request, with the cold path broken down → bench/results/<date>-interactive.{json,md}
# - the explorer: an edited LIKE on SF1's l_comment, its first rows, block and count against the
#   I/O floor of what it fetched, at 0 and 20 ms → bench/results/<date>-explorer.{json,md}
# - a dataset of 3,024 files (the hive lineitem listed 36 times) counted in one page, with and
#   without the bound on its open files' memory → bench/results/<date>-dataset-memory.{json,md}
set -euo pipefail
cd "$(dirname "$0")/.."
bash crate/patches/parquet/apply.sh  # the workspace builds arrow-rs's parquet from there
bash .ci/build.sh
bash .ci/sample-data.sh
hits=tests/.cache/data/hits-2m.parquet
if [ ! -f "$hits" ]; then
  cargo run --quiet --locked -p parquet-skim-datagen -- hits --rows 2000000 --row-group-rows 262144 --out "$hits"
fi
bash tests/conformance/setup-venv.sh >/dev/null  # tpchgen-cli, pyarrow and DuckDB write the other writers' files
node tests/bench/ablations.mjs
node tests/bench/cache.mjs
node tests/bench/size.mjs
node tests/bench/peers.mjs
node tests/bench/interactive.mjs
node tests/bench/explorer.mjs
node tests/bench/dataset-memory.mjs
