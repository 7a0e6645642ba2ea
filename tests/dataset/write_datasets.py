"""Writes the datasets of the dataset tests with pyarrow, and what pyarrow reads back from them.

Design note: the files are written by an independent writer (pyarrow's `write_dataset` with hive
partitioning, the layout Spark, DuckDB and `write_to_dataset` produce), not by parquet-skim's own
datagen, and the expected answers are computed here from the rows given to the writer. Output in
tests/.cache/data/datasets/ (served by the browser tests' range server under /sample/datasets/):
- `hive/year=…/region=…/part-0.parquet`: 120,000 rows partitioned by year (4) and region (EU, US,
  null → `__HIVE_DEFAULT_PARTITION__`), row groups of 4,000 rows;
- `mixed/`: two files whose columns widen (int32/int64, float/double, string/large_string) and one
  column only the second has;
- `broken/`: two good files and one that is not Parquet;
- `reference.json`: the files in order and the answers. Skipped when it is already there, written
  by this version of the script (`VERSION`, raised whenever the answers asked for change).
- `single/one-row-group.parquet` (not a dataset): 300,000 rows in one row group, pyarrow's
  `write_table` defaults (no page index), with `single/reference.json`: a row group the reader
  splits across workers, where every task must read whole column chunks. Written when missing.
"""
import json
import os
import shutil
import sys

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

ROWS = 120_000
# Raised when the answers change: a reference.json of another version is written again.
VERSION = 2


def source_table():
    ids = list(range(ROWS))
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "value": pa.array([(i * 7919 % 10007) / 10007.0 for i in ids], pa.float64()),
            "name": pa.array([f"n{i % 1000}" for i in ids], pa.string()),
            "year": pa.array([2020 + i % 4 for i in ids], pa.int64()),
            "region": pa.array([["EU", "US", None][i % 3] for i in ids], pa.string()),
        }
    )


def files_in(root):
    found = []
    for folder, _, names in os.walk(root):
        found += [os.path.relpath(os.path.join(folder, n), root).replace(os.sep, "/") for n in names]
    return sorted(found)


def write_hive(root):
    table = source_table()
    part = ds.partitioning(pa.schema([("year", pa.int64()), ("region", pa.string())]), flavor="hive")
    ds.write_dataset(
        table,
        root,
        format="parquet",
        partitioning=part,
        basename_template="part-{i}.parquet",
        max_rows_per_group=4000,
        min_rows_per_group=4000,
    )
    files = files_in(root)
    # Rows in file order (the order the test lists the files), read back by pyarrow.
    first_ids = []
    for f in files:
        first_ids += pq.read_table(os.path.join(root, f), columns=["id"])["id"].to_pylist()
        if len(first_ids) >= 20:
            break
    eu_cheap = table.filter(pc.and_(pc.equal(table["region"], "EU"), pc.less(table["value"], 0.25)))
    late = table.filter(pc.greater_equal(table["year"], 2022))
    cheap = table.filter(pc.less(table["value"], 0.25))
    return {
        "files": files,
        "rows": table.num_rows,
        "firstIds": first_ids[:20],
        "year2021": table.filter(pc.equal(table["year"], 2021)).num_rows,
        "regionNull": table.filter(pc.is_null(table["region"])).num_rows,
        "euCheap": {"rows": eu_cheap.num_rows, "sumId": pc.sum(eu_cheap["id"]).as_py()},
        "lateSumValue": pc.sum(late["value"]).as_py(),
        # Aggregates of the partition columns over value < 0.25.
        "cheapPartitions": {
            "sumYear": pc.sum(cheap["year"]).as_py(),
            "sumIdTimesYear": pc.sum(pc.multiply(cheap["id"], cheap["year"])).as_py(),
            "regions": pc.count(cheap["region"]).as_py(),
            "minRegion": pc.min(cheap["region"]).as_py(),
            "maxYear": pc.max(cheap["year"]).as_py(),
        },
        "rowsPerFile": {f: pq.ParquetFile(os.path.join(root, f)).metadata.num_rows for f in files},
    }


def write_mixed(root):
    os.makedirs(root)
    first = pa.table(
        {
            "id": pa.array([1, 2, 3], pa.int32()),
            "value": pa.array([0.5, 1.5, None], pa.float32()),
            "name": pa.array(["a", None, "c"], pa.string()),
        }
    )
    second = pa.table(
        {
            "id": pa.array([4, 5], pa.int64()),
            "value": pa.array([2.25, 3.25], pa.float64()),
            "name": pa.array(["d", "e"], pa.large_string()),
            "extra": pa.array([7, None], pa.int32()),
        }
    )
    pq.write_table(first, os.path.join(root, "part-0.parquet"))
    pq.write_table(second, os.path.join(root, "part-1.parquet"))
    unified = pa.unify_schemas([first.schema, second.schema], promote_options="permissive")
    whole = pa.concat_tables(
        [t.cast(pa.schema([unified.field(n) for n in t.column_names])) for t in (first, second)],
        promote_options="permissive",
    )
    return {
        "files": ["part-0.parquet", "part-1.parquet"],
        "types": {f.name: str(f.type) for f in unified},
        "columns": {name: whole[name].to_pylist() for name in whole.column_names},
    }


def write_broken(root, hive_root, hive_files):
    os.makedirs(root)
    good = hive_files[:2]
    for i, f in enumerate(good):
        shutil.copy(os.path.join(hive_root, f), os.path.join(root, f"good-{i}.parquet"))
    with open(os.path.join(root, "bad.parquet"), "wb") as out:
        out.write(b"<html><body>404 Not Found</body></html>\n" * 10)
    return {"files": ["good-0.parquet", "bad.parquet", "good-1.parquet"], "goodRows": sum(
        pq.ParquetFile(os.path.join(root, f"good-{i}.parquet")).metadata.num_rows for i in range(2)
    )}


def write_single(root):
    rows = 300_000
    ids = list(range(rows))
    table = pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "value": pa.array([(i * 7919 % 10007) / 10007.0 for i in ids], pa.float64()),
            "name": pa.array([f"n{i % 1000}" for i in ids], pa.string()),
        }
    )
    os.makedirs(root, exist_ok=True)
    pq.write_table(table, os.path.join(root, "one-row-group.parquet"))
    cheap = table.filter(pc.less(table["value"], 0.25))
    answers = {
        "rows": rows,
        "sumId": pc.sum(table["id"]).as_py(),
        "cheap": {"rows": cheap.num_rows, "sumId": pc.sum(cheap["id"]).as_py()},
    }
    with open(os.path.join(root, "reference.json"), "w") as f:
        json.dump(answers, f, indent=1)


def current(reference):
    with open(reference) as f:
        return json.load(f).get("version") == VERSION


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "../.cache/data/datasets")
    reference = os.path.join(out, "reference.json")
    if os.path.exists(reference) and current(reference):
        if not os.path.exists(os.path.join(out, "single", "reference.json")):
            write_single(os.path.join(out, "single"))
        return
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    hive = write_hive(os.path.join(out, "hive"))
    write_single(os.path.join(out, "single"))
    answers = {
        "version": VERSION,
        "hive": hive,
        "mixed": write_mixed(os.path.join(out, "mixed")),
        "broken": write_broken(os.path.join(out, "broken"), os.path.join(out, "hive"), hive["files"]),
    }
    with open(reference + ".tmp", "w") as f:
        json.dump(answers, f, indent=1)
    os.replace(reference + ".tmp", reference)


if __name__ == "__main__":
    main()
