"""TPC-H answers on the generated sample file, computed by DuckDB, for the browser tests to match.

Usage: tpch_reference.py SAMPLE.parquet OUT.json

Writes {"q6": {"revenue": "<exact decimal>", "rows": N}, "orderkey_range": {"rows": N}} — the
revenue of TPC-H Q6 (sum(l_extendedprice * l_discount) over its filter) as DuckDB's exact decimal
text, and the row count of the selective lookup the I/O test runs. Skips the work when OUT is newer
than both SAMPLE and this script.
"""

import json
import os
import sys

import duckdb

Q6_FILTER = (
    "l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01' "
    "AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24"
)


def main() -> None:
    sample, out = sys.argv[1], sys.argv[2]
    newest_input = max(os.path.getmtime(sample), os.path.getmtime(__file__))
    if os.path.exists(out) and os.path.getmtime(out) > newest_input:
        return
    con = duckdb.connect()
    revenue, q6_rows = con.execute(
        f"SELECT sum(l_extendedprice * l_discount)::VARCHAR, count(*) FROM read_parquet(?) WHERE {Q6_FILTER}",
        [sample],
    ).fetchone()
    (lookup_rows,) = con.execute(
        "SELECT count(*) FROM read_parquet(?) WHERE l_orderkey BETWEEN 3000000 AND 3001000",
        [sample],
    ).fetchone()
    result = {
        "q6": {"filter": Q6_FILTER, "revenue": revenue, "rows": q6_rows},
        "orderkey_range": {"rows": lookup_rows},
        "duckdb": duckdb.__version__,
    }
    tmp = out + ".partial"
    with open(tmp, "w") as f:
        json.dump(result, f, indent=2)
    os.replace(tmp, out)
    print(f"tpch reference: {result}")


if __name__ == "__main__":
    main()
