#!/usr/bin/env bash
# Generates the sample data (deterministic; skipped when already there): TPC-H lineitem SF1 with a
# page index, ~200 MB, and the ~70 KB template of a 5 GiB virtual file for the big-file tests
# (served by tests/server/virtual-file.mjs), written by crate/datagen into tests/.cache/data/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash crate/patches/parquet/apply.sh  # the workspace builds arrow-rs's parquet from there
out=tests/.cache/data/lineitem-sf1.parquet
if [ ! -f "$out" ]; then
  mkdir -p tests/.cache/data
  cargo run --quiet --locked -p parquet-skim-datagen -- lineitem --sf 1 --out "$out"
fi
big=tests/.cache/data/big-template-v1
if [ ! -f "$big/template.json" ]; then
  cargo run --quiet --locked -p parquet-skim-datagen -- big-template --out "$big"
fi
