"""Writes TPC-H lineitem as other writers do, with their defaults, for the benchmarks.

Usage: write-others.py SOURCE.parquet OUT_DIR
       write-others.py hits HITS.parquet OUT_DIR

- ``lineitem-sf1-tpchgen.parquet``: tpchgen-cli's own Parquet output (``tpchgen-cli parquet -s 1
  --tables=lineitem``: arrow-rs's writer as tpchgen-cli sets it up — ~114k-row groups, string
  views, no page index);
- ``lineitem-sf1-pyarrow.parquet``: ``pyarrow.parquet.write_table`` with pyarrow's defaults (1Mi-row
  groups, snappy, dictionaries, 1 MB pages, no page index);
- ``lineitem-1m-pyarrow.parquet``: the first 1,000,000 rows with ``write_table``'s defaults: one
  row group and no page index, what ``pandas.DataFrame.to_parquet`` writes for a table of up to
  ~1M rows;
- ``lineitem-sf1-duckdb.parquet``: DuckDB's ``COPY … TO … (FORMAT parquet)`` with its defaults
  (122,880-row groups, snappy).

- ``lineitem-sf1-hive/``: ``pyarrow.parquet.write_to_dataset`` partitioned by ship year and month
  (``year=1994/month=3/part-0.parquet``, ~84 files; the two columns live in the paths only), with
  pyarrow's defaults otherwise;
- ``lineitem-sf1-64/``: the rows split in order into 64 files (``part-00.parquet`` …), each written
  by ``pyarrow.parquet.write_table`` with its defaults.

With ``hits``, the ClickBench-hits-like table (crate/datagen ``hits``, whose writer leaves
dictionaries off its near-unique columns) as the cache benchmark also reads it:

- ``hits-2m-pyarrow.parquet``: ``pyarrow.parquet.write_table`` with its defaults (1Mi-row groups,
  so two; dictionaries on every column, falling back to plain pages once a dictionary passes 1 MB);
- ``hits-2m-duckdb.parquet``: DuckDB's ``COPY … TO … (FORMAT parquet)`` with its defaults.

Each is skipped when it exists. The rows are the source's, in its order.
"""

import os
import shutil
import subprocess
import sys
import tempfile

import duckdb
import pyarrow
import pyarrow.compute as pc
import pyarrow.parquet as pq


def write_datasets(source: str, out_dir: str) -> None:
    hive_out = os.path.join(out_dir, "lineitem-sf1-hive")
    flat_out = os.path.join(out_dir, "lineitem-sf1-64")
    if os.path.exists(hive_out) and os.path.exists(flat_out):
        return
    table = pq.read_table(source)
    if not os.path.exists(hive_out):
        dated = table.append_column("year", pc.year(table["l_shipdate"])).append_column(
            "month", pc.month(table["l_shipdate"])
        )
        pq.write_to_dataset(
            dated, hive_out + ".tmp", partition_cols=["year", "month"], basename_template="part-{i}.parquet"
        )
        os.replace(hive_out + ".tmp", hive_out)
        print(f"wrote {hive_out} (pyarrow {pyarrow.__version__} write_to_dataset, by ship year and month)")
    if not os.path.exists(flat_out):
        os.makedirs(flat_out + ".tmp")
        per_file = -(-table.num_rows // 64)
        for i in range(64):
            pq.write_table(
                table.slice(i * per_file, per_file), os.path.join(flat_out + ".tmp", f"part-{i:02d}.parquet")
            )
        os.replace(flat_out + ".tmp", flat_out)
        print(f"wrote {flat_out} (64 files, pyarrow {pyarrow.__version__} write_table defaults)")


def write_pyarrow(table_of, out: str, what: str = "defaults") -> None:
    """``pq.write_table`` of ``table_of()`` with pyarrow's defaults, unless ``out`` exists."""
    if not os.path.exists(out):
        pq.write_table(table_of(), out + ".tmp")
        os.replace(out + ".tmp", out)
        print(f"wrote {out} (pyarrow {pyarrow.__version__} {what})")


def write_duckdb(source: str, out: str) -> None:
    """DuckDB's ``COPY … TO … (FORMAT parquet)`` of ``source`` with its defaults, unless ``out`` exists."""
    if not os.path.exists(out):
        con = duckdb.connect()
        con.execute(f"COPY (SELECT * FROM read_parquet('{source}')) TO '{out}.tmp' (FORMAT parquet)")
        os.replace(out + ".tmp", out)
        print(f"wrote {out} (DuckDB {duckdb.__version__} defaults)")


def write_hits(source: str, out_dir: str) -> None:
    write_pyarrow(lambda: pq.read_table(source), os.path.join(out_dir, "hits-2m-pyarrow.parquet"))
    write_duckdb(source, os.path.join(out_dir, "hits-2m-duckdb.parquet"))


def main() -> None:
    if sys.argv[1] == "hits":
        write_hits(sys.argv[2], sys.argv[3])
        return
    source, out_dir = sys.argv[1], sys.argv[2]
    tpchgen_out = os.path.join(out_dir, "lineitem-sf1-tpchgen.parquet")
    if not os.path.exists(tpchgen_out):
        cli = os.path.join(os.path.dirname(sys.executable), "tpchgen-cli")
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run(
                [cli, "parquet", "-s", "1", "--tables=lineitem", f"--output-dir={tmp}"], check=True
            )
            shutil.move(os.path.join(tmp, "lineitem.parquet"), tpchgen_out)
        print(f"wrote {tpchgen_out} (tpchgen-cli defaults)")
    write_pyarrow(lambda: pq.read_table(source), os.path.join(out_dir, "lineitem-sf1-pyarrow.parquet"))
    write_pyarrow(
        lambda: pq.read_table(source).slice(0, 1_000_000),
        os.path.join(out_dir, "lineitem-1m-pyarrow.parquet"),
        "defaults, 1M rows",
    )
    write_duckdb(source, os.path.join(out_dir, "lineitem-sf1-duckdb.parquet"))
    write_datasets(source, out_dir)


if __name__ == "__main__":
    main()
