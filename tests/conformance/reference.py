"""Write pyarrow's reading of every parquet-testing file as an Arrow IPC stream.

Design note
- The conformance tests compare what parquet-skim decodes with what pyarrow
  decodes. This script produces the pyarrow side once, as files the Node tests
  can load with apache-arrow JS: for each regular file under --data (searched
  recursively) whose name ends in `.parquet` or `.parquet.encrypted`, it calls
  `pyarrow.parquet.read_table(path)` and writes the table as an IPC *stream* to
  `OUT/<relative path with '/' replaced by '__'>.arrow`. A file pyarrow cannot
  read gets no reference; its error message goes into the manifest instead.
- apache-arrow JS 21 cannot read every Arrow type from IPC, so each schema is
  first mapped to a JS-readable equivalent with the same values: extension
  types become their storage type, string_view/binary_view/list_view/
  large_list_view become string/binary/list/large_list, run-end-encoded
  becomes its value type, decimal32/decimal64 become decimal128. Columns
  that change are rebuilt array by array (convert_array), because pyarrow's
  cast() lacks or mishandles some of these conversions. Every such
  cast is recorded in the manifest entry as `"cast": "description"`.
  Dictionaries are unified across chunks so one dictionary message serves the
  whole stream.
- `OUT/manifest.json` is `{ "inputs_hash", "pyarrow", "files": [...] }`, files
  sorted by relative path, each `{ file, rows, reference, error }` (+ `cast`).
  inputs_hash is a SHA-256 of the sorted `path<TAB>size` list of inputs. The
  run is skipped (idempotent) when the manifest is newer than this script, its
  inputs_hash and pyarrow version match, and every reference it names exists.
  Output is deterministic: sorted inputs, no timestamps, stale .arrow files
  removed, each file written to a temporary name and renamed into place.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.ipc as ipc
import pyarrow.parquet as pq

SCRIPT = Path(__file__).resolve()
REPO_ROOT = SCRIPT.parents[2]
DEFAULT_DATA = REPO_ROOT.parent / "shared" / "parquet-testing" / "data"
DEFAULT_OUT = REPO_ROOT / "tests" / ".cache" / "conformance"
SUFFIXES = (".parquet", ".parquet.encrypted")


def list_inputs(data_dir: Path) -> list[tuple[str, int]]:
    """Relative POSIX paths and sizes of the Parquet inputs, sorted."""
    found = []
    for root, dirs, files in os.walk(data_dir):
        dirs.sort()
        for name in files:
            path = Path(root) / name
            if not name.endswith(SUFFIXES) or path.is_symlink() or not path.is_file():
                continue
            found.append((path.relative_to(data_dir).as_posix(), path.stat().st_size))
    return sorted(found)


def inputs_hash(inputs: list[tuple[str, int]]) -> str:
    digest = hashlib.sha256()
    for rel, size in inputs:
        digest.update(f"{rel}\t{size}\n".encode())
    return digest.hexdigest()


def reference_name(rel: str) -> str:
    return rel.replace("/", "__") + ".arrow"


def js_readable(t: pa.DataType, notes: list[str], where: str) -> pa.DataType:
    """Map t to a type apache-arrow JS 21 reads from IPC, noting each change."""
    if isinstance(t, pa.BaseExtensionType):
        storage = js_readable(t.storage_type, notes, where)
        notes.append(f"{where}: extension {t.extension_name} -> {storage}")
        return storage
    if t == pa.string_view():
        notes.append(f"{where}: string_view -> string")
        return pa.string()
    if t == pa.binary_view():
        notes.append(f"{where}: binary_view -> binary")
        return pa.binary()
    if pa.types.is_decimal32(t) or pa.types.is_decimal64(t):
        wide = pa.decimal128(t.precision, t.scale)
        notes.append(f"{where}: {t} -> {wide}")
        return wide
    if pa.types.is_run_end_encoded(t):
        value = js_readable(t.value_type, notes, where)
        notes.append(f"{where}: run_end_encoded -> {value}")
        return value
    if pa.types.is_list_view(t) or pa.types.is_large_list_view(t):
        item = t.value_field.with_type(js_readable(t.value_type, notes, f"{where}[]"))
        target = pa.list_(item) if pa.types.is_list_view(t) else pa.large_list(item)
        notes.append(f"{where}: {t} -> {target}")
        return target
    if pa.types.is_fixed_size_list(t):
        return pa.list_(t.value_field.with_type(js_readable(t.value_type, notes, f"{where}[]")), t.list_size)
    if pa.types.is_list(t):
        return pa.list_(t.value_field.with_type(js_readable(t.value_type, notes, f"{where}[]")))
    if pa.types.is_large_list(t):
        return pa.large_list(t.value_field.with_type(js_readable(t.value_type, notes, f"{where}[]")))
    if pa.types.is_map(t):
        key = t.key_field.with_type(js_readable(t.key_type, notes, f"{where}.key"))
        item = t.item_field.with_type(js_readable(t.item_type, notes, f"{where}.value"))
        return pa.map_(key, item, keys_sorted=t.keys_sorted)
    if pa.types.is_struct(t):
        return pa.struct([f.with_type(js_readable(f.type, notes, f"{where}.{f.name}")) for f in t])
    if pa.types.is_dictionary(t):
        return pa.dictionary(t.index_type, js_readable(t.value_type, notes, where), t.ordered)
    return t


def convert_array(arr: pa.Array, target: pa.DataType) -> pa.Array:
    """Rebuild arr with type target (from js_readable), keeping every value.

    cast() alone is not enough: it has no kernel from run-end-encoded, and its
    list_view -> list kernel produces invalid offsets in pyarrow 26, so those
    and the containers around them are rebuilt by hand.
    """
    t = arr.type
    if t == target:
        return arr
    if isinstance(t, pa.BaseExtensionType):
        return convert_array(arr.storage, target)
    if pa.types.is_run_end_encoded(t):
        return convert_array(pc.run_end_decode(arr), target)
    mask = arr.is_null() if arr.null_count else None
    if pa.types.is_list_view(t) or pa.types.is_large_list_view(t):
        # flatten() yields the visible values of the non-null lists in order, so
        # offsets are the running sum of their sizes (a null list has none).
        sizes = pc.if_else(arr.is_null(), pa.scalar(0, arr.sizes.type), arr.sizes)
        offsets = pa.concat_arrays([pa.array([0], arr.sizes.type), pc.cumulative_sum(sizes)])
        values = convert_array(arr.flatten(), target.value_type)
        cls = pa.ListArray if pa.types.is_list(target) else pa.LargeListArray
        return cls.from_arrays(offsets, values, type=target, mask=mask)
    if pa.types.is_map(t) or pa.types.is_list(t) or pa.types.is_large_list(t):
        # from_arrays wants zero-based offsets when given a mask: rebase them
        # and cut the child to the range this (possibly sliced) array covers.
        first, last = arr.offsets[0].as_py(), arr.offsets[-1].as_py()
        offsets = pc.subtract(arr.offsets, pa.scalar(first, arr.offsets.type))
        child = arr.values.slice(first, last - first)
        if pa.types.is_map(t):
            keys = convert_array(child.field(0), target.key_type)
            items = convert_array(child.field(1), target.item_type)
            return pa.MapArray.from_arrays(offsets, keys, items, type=target, mask=mask)
        cls = pa.ListArray if pa.types.is_list(t) else pa.LargeListArray
        return cls.from_arrays(offsets, convert_array(child, target.value_type), type=target, mask=mask)
    if pa.types.is_fixed_size_list(t):
        size = t.list_size
        values = convert_array(arr.values.slice(arr.offset * size, len(arr) * size), target.value_type)
        return pa.FixedSizeListArray.from_arrays(values, type=target, mask=mask)
    if pa.types.is_struct(t):
        children = [convert_array(arr.field(i), target.field(i).type) for i in range(t.num_fields)]
        return pa.StructArray.from_arrays(children, fields=list(target), mask=mask)
    if pa.types.is_dictionary(t):
        dictionary = convert_array(arr.dictionary, target.value_type)
        return pa.DictionaryArray.from_arrays(arr.indices, dictionary, ordered=t.ordered)
    return arr.cast(target)


def js_readable_table(table: pa.Table) -> tuple[pa.Table, list[str]]:
    notes: list[str] = []
    fields = [f.with_type(js_readable(f.type, notes, f.name)) for f in table.schema]
    if notes:
        columns = [
            pa.chunked_array([convert_array(chunk, field.type) for chunk in column.chunks], field.type)
            for column, field in zip(table.columns, fields)
        ]
        table = pa.Table.from_arrays(columns, schema=pa.schema(fields, metadata=table.schema.metadata))
    return table.unify_dictionaries(), notes


def write_stream(table: pa.Table, dest: Path) -> None:
    tmp = dest.with_name(dest.name + ".tmp")
    with pa.OSFile(str(tmp), "wb") as sink:
        with ipc.new_stream(sink, table.schema) as writer:
            writer.write_table(table)
    os.replace(tmp, dest)


def build_entry(data_dir: Path, rel: str, out_dir: Path) -> dict:
    entry: dict = {"file": rel, "rows": None, "reference": None, "error": None}
    try:
        # INT96 as microseconds, like parquet-skim (and DuckDB): nanoseconds overflow i64 for the
        # dates Spark writes outside 1677-2262.
        table = pq.read_table(data_dir / rel, coerce_int96_timestamp_unit="us")
    except Exception as exc:  # pyarrow raises several exception classes
        # The message names the absolute input path; keep the manifest portable.
        entry["error"] = str(exc).replace(str(data_dir / rel), rel)
        return entry
    entry["rows"] = table.num_rows
    try:
        table, notes = js_readable_table(table)
        name = reference_name(rel)
        write_stream(table, out_dir / name)
    except (pa.ArrowException, OSError) as exc:
        entry["error"] = f"cannot write a JS-readable reference: {exc}"
        return entry
    entry["reference"] = name
    if notes:
        entry["cast"] = "; ".join(notes)
    return entry


def up_to_date(manifest_path: Path, digest: str, out_dir: Path) -> bool:
    if not manifest_path.is_file() or manifest_path.stat().st_mtime <= SCRIPT.stat().st_mtime:
        return False
    try:
        manifest = json.loads(manifest_path.read_text())
    except (OSError, ValueError):
        return False
    if manifest.get("inputs_hash") != digest or manifest.get("pyarrow") != pa.__version__:
        return False
    return all((out_dir / f["reference"]).is_file() for f in manifest.get("files", []) if f.get("reference"))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="parquet-testing data directory")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output directory")
    parser.add_argument("--force", action="store_true", help="regenerate even when up to date")
    args = parser.parse_args(argv)
    data_dir: Path = args.data.resolve()
    out_dir: Path = args.out.resolve()
    if not data_dir.is_dir():
        print(f"reference.py: data directory not found: {data_dir}", file=sys.stderr)
        return 2

    inputs = list_inputs(data_dir)
    digest = inputs_hash(inputs)
    manifest_path = out_dir / "manifest.json"
    if not args.force and up_to_date(manifest_path, digest, out_dir):
        print(f"conformance references up to date in {out_dir}")
        return 0

    out_dir.mkdir(parents=True, exist_ok=True)
    files = [build_entry(data_dir, rel, out_dir) for rel, _size in inputs]
    wanted = {f["reference"] for f in files if f["reference"]}
    for stale in out_dir.glob("*.arrow"):
        if stale.name not in wanted:
            stale.unlink()

    manifest = {"inputs_hash": digest, "pyarrow": pa.__version__, "files": files}
    tmp = manifest_path.with_name("manifest.json.tmp")
    tmp.write_text(json.dumps(manifest, indent=2) + "\n")
    os.replace(tmp, manifest_path)
    failed = [f for f in files if f["error"]]
    print(f"conformance references: {len(files)} inputs, {len(wanted)} written, {len(failed)} without a reference -> {out_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
