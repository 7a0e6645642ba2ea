/**
 * apache-arrow's type ids (its `Type` enum), as constants: the Arrow format's own numbers (its
 * flatbuffers schema) and -1 for a dictionary, the same in every apache-arrow from 13 on —
 * including ids of types an older apache-arrow lacks (no column of such a type can reach it).
 * apache-arrow's `DataType.isX` compare these same ids; compared through these, code needs no
 * apache-arrow loaded (arrow.ts) and works on Arrow objects from any copy of it.
 */
import type { DataType } from 'apache-arrow';

export const TYPE_ID = {
  Dictionary: -1,
  Int: 2,
  Float: 3,
  Binary: 4,
  Utf8: 5,
  Bool: 6,
  Decimal: 7,
  Date: 8,
  Time: 9,
  Timestamp: 10,
  List: 12,
  Struct: 13,
  Union: 14,
  FixedSizeBinary: 15,
  FixedSizeList: 16,
  Map: 17,
  LargeBinary: 19,
  LargeUtf8: 20,
  LargeList: 21,
  BinaryView: 23,
  Utf8View: 24,
} as const;

/** A check that a type has the id `id`, and so is a `T` (for the type checker). */
export const typeIs =
  <T extends DataType>(id: number) =>
  (type: DataType | null | undefined): type is T =>
    type?.typeId === id;

/** apache-arrow's `DateUnit.DAY` and `Precision.SINGLE` / `DOUBLE`: the Arrow format's numbers. */
export const DATE_UNIT_DAY = 0;
export const PRECISION_SINGLE = 1;
export const PRECISION_DOUBLE = 2;
