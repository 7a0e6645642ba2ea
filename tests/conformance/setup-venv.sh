#!/usr/bin/env bash
# setup-venv.sh — make the pyarrow reference outputs for the conformance tests.
#
# Design note: creates tests/.venv with `python3 -m venv` when it is missing,
# installs tests/conformance/requirements.txt into it only when the SHA-256 of
# that file differs from the one stamped in tests/.venv/.requirements.sha256
# (so repeated runs do not touch the network), then runs reference.py, which
# itself skips work when its outputs are up to date. Extra arguments are passed
# on to reference.py (e.g. --force, --data DIR, --out DIR). Works from any
# working directory.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tests_dir="$(dirname "$here")"
venv="$tests_dir/.venv"
requirements="$here/requirements.txt"
stamp="$venv/.requirements.sha256"

if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi

want="$(sha256sum "$requirements" | cut -d' ' -f1)"
have="$(cat "$stamp" 2>/dev/null || true)"
if [ "$want" != "$have" ]; then
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements"
  printf '%s\n' "$want" > "$stamp"
fi

# TPC-H answers on the generated sample (run after .ci/sample-data.sh), then the references.
sample="$tests_dir/.cache/data/lineitem-sf1.parquet"
if [ -f "$sample" ]; then
  "$venv/bin/python" "$here/tpch_reference.py" "$sample" "$tests_dir/.cache/tpch-reference.json"
fi
# The hive-partitioned (and other) datasets of the dataset tests, written by pyarrow.
"$venv/bin/python" "$tests_dir/dataset/write_datasets.py"
exec "$venv/bin/python" "$here/reference.py" "$@"
