/**
 * One schema for the files of a dataset, and each file's batches brought to it.
 *
 * The dataset's columns are the union of the files' columns by name, in order of first appearance,
 * then the partition columns. A column's types across files must be equal or widen to one type:
 * - integers to the widest (signed with unsigned: int64, while the unsigned one is under 64 bits);
 * - floating point to the widest;
 * - `Utf8`, `LargeUtf8` and `Utf8View` to `LargeUtf8` when one of them is large, else `Utf8`
 *   (and the same for binaries);
 * - timestamps with the same time zone to the finer unit.
 * Anything else leaves the column out of the dataset's schema: asking for it (columns, filter,
 * aggregates) is a `SCHEMA_MISMATCH` naming the column and the two files — the rest of the
 * dataset still reads. A column a file lacks reads as nulls there (the column is then nullable).
 *
 * {@link conformBatch} builds each output batch in the dataset's types: a column whose file type
 * is already the dataset's passes through untouched (no copy); a widened one is converted from
 * its buffers (integers, floats, timestamps, string offsets), a view through apache-arrow's
 * builders; a partition or missing column is a constant vector.
 */
import type {
  Data,
  DataType,
  DateDay,
  Field,
  Float,
  Int,
  Int64,
  Precision,
  RecordBatch,
  Schema,
  Timestamp,
  Utf8,
  Vector,
} from 'apache-arrow';
import { arrow } from '../arrow.js';
import { PRECISION_DOUBLE, TYPE_ID } from '../arrow-types.js';
import { ParquetSkimError } from '../errors.js';
import { epochDays, type PartitionColumn, type PartitionValue } from './partitions.js';

/** The string types' ids, and the binary ones' (with those of types a given apache-arrow may lack). */
const STRINGS: number[] = [TYPE_ID.Utf8, TYPE_ID.LargeUtf8, TYPE_ID.Utf8View];
const BINARIES: number[] = [TYPE_ID.Binary, TYPE_ID.LargeBinary, TYPE_ID.BinaryView];

/**
 * `new LargeUtf8()` / `new LargeBinary()` where this apache-arrow has them (added after 13.0, the
 * oldest this package runs with: looked up at run time), else the 32-bit-offset type.
 */
function large(name: 'LargeUtf8' | 'LargeBinary'): DataType {
  const module = arrow();
  const Large = (module as unknown as Record<string, (new () => DataType) | undefined>)[name];
  if (Large !== undefined) return new Large();
  const { Utf8, Binary } = module;
  return name === 'LargeUtf8' ? new Utf8() : new Binary();
}

/** The apache-arrow type of a partition column. */
export function partitionArrowType(type: PartitionColumn['type']): DataType {
  const { Int64, DateDay, Utf8 } = arrow();
  switch (type) {
    case 'int64':
      return new Int64();
    case 'date':
      return new DateDay();
    case 'string':
      return new Utf8();
  }
}

/** A dataset's schema, and the columns left out of it because the files' types conflict. */
export interface UnifiedSchema {
  schema: Schema;
  /** Column name → the `SCHEMA_MISMATCH` error using it raises (naming both files). */
  conflicts: Map<string, ParquetSkimError>;
}

/**
 * The union of `files`' schemas, widened (see the module doc), with `partitions` appended. A
 * column whose types do not widen to one is left out, its error kept for when a scan asks for
 * it; a partition key that is also a column of a file is a `SCHEMA_MISMATCH` at once.
 */
export function unifySchemas(
  files: ReadonlyArray<{ path: string; schema: Schema }>,
  partitions: readonly PartitionColumn[],
): UnifiedSchema {
  const { Field, Schema } = arrow();
  const merged = new Map<string, { field: Field; path: string; files: number }>();
  const conflicts = new Map<string, ParquetSkimError>();
  for (const { path, schema } of files) {
    for (const field of schema.fields) {
      const seen = merged.get(field.name);
      if (conflicts.has(field.name)) continue;
      if (seen === undefined) {
        merged.set(field.name, { field, path, files: 1 });
        continue;
      }
      const type = widen(seen.field.type, field.type);
      if (type === null) {
        conflicts.set(
          field.name,
          new ParquetSkimError(
            'SCHEMA_MISMATCH',
            `column '${field.name}' is ${seen.field.type} in '${seen.path}' but ${field.type} in '${path}', ` +
              'and neither widens to the other, so the dataset leaves it out; read those files apart to see it',
          ),
        );
        merged.delete(field.name);
        continue;
      }
      seen.field = new Field(field.name, type, seen.field.nullable || field.nullable, seen.field.metadata);
      seen.files += 1;
    }
  }
  const fields = [...merged.values()].map(({ field, files: count }) =>
    count < files.length && !field.nullable ? new Field(field.name, field.type, true, field.metadata) : field,
  );
  for (const partition of partitions) {
    const clash = merged.get(partition.name) ?? conflicts.get(partition.name);
    if (clash !== undefined) {
      const where = 'path' in clash ? `'${clash.path}'` : 'the files';
      throw new ParquetSkimError(
        'SCHEMA_MISMATCH',
        `'${partition.name}' is a hive partition of the paths and also a column of ${where}; ` +
          'pass hivePartitioning: false to read the column from the files',
      );
    }
    fields.push(new Field(partition.name, partitionArrowType(partition.type), true));
  }
  return { schema: new Schema(fields), conflicts };
}

/** The type `a` and `b` both widen to, or null when there is none. */
export function widen(a: DataType, b: DataType): DataType | null {
  if (sameType(a, b)) return a;
  const { Float, Utf8, Binary, Timestamp } = arrow();
  const ids = new Set<number>([a.typeId, b.typeId]);
  const only = (...types: number[]) => [...ids].every((id) => types.includes(id));
  if (only(TYPE_ID.Int)) return widenInts(a as Int, b as Int);
  if (only(TYPE_ID.Float)) return new Float(Math.max((a as Float).precision, (b as Float).precision) as Precision);
  if (only(...STRINGS)) return ids.has(TYPE_ID.LargeUtf8) ? large('LargeUtf8') : new Utf8();
  if (only(...BINARIES)) return ids.has(TYPE_ID.LargeBinary) ? large('LargeBinary') : new Binary();
  if (only(TYPE_ID.Timestamp)) {
    const [x, y] = [a as Timestamp, b as Timestamp];
    if ((x.timezone ?? null) === (y.timezone ?? null))
      return new Timestamp(Math.max(x.unit, y.unit), x.timezone ?? null);
  }
  return null;
}

function widenInts(a: Int, b: Int): DataType | null {
  const { Int, Int64 } = arrow();
  if (a.isSigned === b.isSigned) return new Int(a.isSigned, Math.max(a.bitWidth, b.bitWidth) as 8 | 16 | 32 | 64);
  const unsigned = a.isSigned ? b : a;
  const signed = a.isSigned ? a : b;
  if (signed.bitWidth > unsigned.bitWidth) return signed;
  return unsigned.bitWidth < 64 ? new Int64() : null;
}

/**
 * `batch` (a file's output) as a batch of `schema` (the dataset's, projected): file columns
 * converted where their type differs, `constants` (partition values by name) and missing columns
 * filled in.
 */
export function conformBatch(
  batch: RecordBatch,
  schema: Schema,
  constants: ReadonlyMap<string, PartitionValue>,
): RecordBatch {
  const { util, makeData, Struct, RecordBatch } = arrow();
  const rows = batch.numRows;
  if (constants.size === 0 && util.compareSchemas(batch.schema, schema)) return batch;
  const children = schema.fields.map((field) => {
    if (constants.has(field.name)) return constantData(field.type, constants.get(field.name) ?? null, rows);
    const column = batch.getChild(field.name);
    if (column === null) return nullData(field.type, rows);
    if (sameType(column.type, field.type)) return column.data[0] as Data;
    return convert(column, field.type);
  });
  const data = makeData({ type: new Struct(schema.fields), length: rows, nullCount: 0, children });
  return new RecordBatch(schema, data);
}

/** A column of `rows` copies of `value` (null: all null). */
function constantData(type: DataType, value: PartitionValue, rows: number): Data {
  if (value === null) return nullData(type, rows);
  const { makeData } = arrow();
  if (type.typeId === TYPE_ID.Int) {
    return makeData({
      type: type as Int64,
      length: rows,
      nullCount: 0,
      data: new BigInt64Array(rows).fill(value as bigint),
    });
  }
  if (type.typeId === TYPE_ID.Date) {
    const days = epochDays(value as string);
    return makeData({ type: type as DateDay, length: rows, nullCount: 0, data: new Int32Array(rows).fill(days) });
  }
  const bytes = new TextEncoder().encode(String(value));
  const data = new Uint8Array(bytes.length * rows);
  const valueOffsets = new Int32Array(rows + 1);
  for (let i = 0; i < rows; i++) {
    data.set(bytes, i * bytes.length);
    valueOffsets[i + 1] = (i + 1) * bytes.length;
  }
  return makeData({ type: type as Utf8, length: rows, nullCount: 0, data, valueOffsets });
}

/** A column of `rows` nulls, of any type. */
function nullData(type: DataType, rows: number): Data {
  return arrow().vectorFromArray(new Array(rows).fill(null), type).data[0] as Data;
}

/** A file's column in the dataset's (wider) type `to` (see {@link widen}). */
function convert(column: Vector, to: DataType): Data {
  const { makeData, vectorFromArray } = arrow();
  const from = column.data[0] as Data;
  if (column.data.length !== 1) return vectorFromArray([...column], to).data[0] as Data;
  const base = {
    type: to,
    length: from.length,
    offset: from.offset,
    nullCount: from.nullCount,
    nullBitmap: from.nullBitmap,
  };
  if (to.typeId === TYPE_ID.Int) {
    const values = from.values as ArrayLike<number | bigint>;
    const data = new (to as Int).ArrayType(values.length) as unknown as { [i: number]: number | bigint };
    const big = (to as Int).bitWidth === 64;
    for (let i = 0; i < values.length; i++) data[i] = big ? BigInt(values[i] as number | bigint) : Number(values[i]);
    return makeData({ ...base, type: to, data } as never);
  }
  if (to.typeId === TYPE_ID.Float) {
    const data =
      (to as Float).precision === PRECISION_DOUBLE ? Float64Array.from(from.values) : Float32Array.from(from.values);
    return makeData({ ...base, type: to, data } as never);
  }
  if (to.typeId === TYPE_ID.Timestamp && from.type.typeId === TYPE_ID.Timestamp) {
    const factor = 1000n ** BigInt((to as Timestamp).unit - (from.type as Timestamp).unit);
    const values = from.values as BigInt64Array;
    const data = new BigInt64Array(values.length);
    for (let i = 0; i < values.length; i++) data[i] = (values[i] as bigint) * factor;
    return makeData({ ...base, type: to, data } as never);
  }
  const isLarge = to.typeId === TYPE_ID.LargeUtf8 || to.typeId === TYPE_ID.LargeBinary;
  const offsets = from.valueOffsets as Int32Array | BigInt64Array | undefined;
  if (offsets !== undefined && (from.type.typeId === TYPE_ID.Utf8 || from.type.typeId === TYPE_ID.Binary) === isLarge) {
    // 32-bit offsets ↔ 64-bit ones; the value bytes are shared.
    const valueOffsets = isLarge
      ? BigInt64Array.from(offsets as Int32Array, (o) => BigInt(o))
      : Int32Array.from(offsets as BigInt64Array, (o) => Number(o));
    return makeData({ ...base, type: to, data: from.values, valueOffsets } as never);
  }
  // Views, or anything else widen() allows: through apache-arrow's builders.
  return vectorFromArray([...column], to).data[0] as Data;
}

/** Whether two types are equal (apache-arrow's comparison, without its type-guard narrowing). */
export function sameType(a: DataType, b: DataType): boolean {
  return arrow().util.compareTypes(a, b);
}
