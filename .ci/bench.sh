#!/usr/bin/env bash
# Benchmarks (never timed tests): builds, generates the sample data, then runs the ablations in
# headless Chromium and writes bench/results/<date>-ablations.json.
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/build.sh
bash .ci/sample-data.sh
node tests/bench/ablations.mjs
