#!/usr/bin/env bash
# Builds everything, generates the sample file, and serves the explorer on it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/build.sh
bash .ci/sample-data.sh
port=${PORT:-8080}
echo
echo "parquet-skim explorer: http://127.0.0.1:${port}/?url=/data/lineitem-sf1.parquet"
echo "(Ctrl-C to stop)"
exec node tests/server/range-server.mjs --port "$port" \
  --mount /=web/explorer/dist --mount /data/=tests/.cache/data
