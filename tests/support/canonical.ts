/**
 * canonical — turn an apache-arrow Table into plain JSON-safe values so that two
 * tables decoded by different Parquet readers (pyarrow's reference, our
 * arrow-rs based reader) can be compared for equal *values*.
 *
 * Design note
 * - Conversion is directed by each column's DataType, not by JS value shapes,
 *   and never goes through Table.get(i) or the lossy JS getters: for every
 *   Data chunk a reader closure `(i) => value` is built once (children first),
 *   so ~100k cells cost a few closure calls each. Readers follow apache-arrow's
 *   buffer conventions: fixed-width `values` are already offset to the chunk,
 *   bool values and validity bitmaps are indexed by `data.offset + i`,
 *   variable-width offsets index unsliced value buffers / children, struct and
 *   fixed-size-list children are sliced with their parent.
 * - Incidental type differences vanish: 64-bit integers become decimal
 *   strings; timestamps (any unit, any time zone), times and durations become
 *   exact integer nanoseconds as strings, computed with BigInt from the raw
 *   storage, so a µs column and a ns column holding the same instants compare
 *   equal; dictionary columns become their decoded values; Large* and view
 *   variants read like their plain forms; decimals of any bit width become the
 *   exact decimal string at the column's scale (two's complement via BigInt).
 * - Other canonical forms: floats are numbers with NaN/Infinity/-Infinity as
 *   strings and -0 as 0 (Float16 decoded from its bits); dates are
 *   'YYYY-MM-DD' (proleptic Gregorian, any int32 day count); binaries are
 *   lowercase hex; lists are arrays; structs are objects keyed by field name in
 *   field order; maps are arrays of [key, value] pairs in stored order; unions
 *   are the canonical value of the active child; intervals are arrays of their
 *   fields: YEAR_MONTH [months], DAY_TIME [days, ms], MONTH_DAY_NANO [months,
 *   days, nanoseconds as string]. Null slots and the Null type give null. A
 *   type with no rule throws, naming the type.
 * - compareTables canonicalises both sides and compares cell by cell through
 *   JSON text; the reason names the first differing column and row and shows
 *   both values, each truncated.
 */
import {
  type Data,
  DataType,
  DateUnit,
  IntervalUnit,
  makeVector,
  Precision,
  type Table,
  TimeUnit,
  UnionMode,
  type Vector,
} from 'apache-arrow';

export interface CanonicalTable {
  columns: string[];
  rows: number;
  /** Column-major: values[column][row]. */
  values: unknown[][];
}

export type Comparison = { equal: true } | { equal: false; reason: string };

type Reader = (index: number) => unknown;

const NS_PER_UNIT: Record<TimeUnit, bigint> = {
  [TimeUnit.SECOND]: 1_000_000_000n,
  [TimeUnit.MILLISECOND]: 1_000_000n,
  [TimeUnit.MICROSECOND]: 1_000n,
  [TimeUnit.NANOSECOND]: 1n,
};

const MS_PER_DAY = 86_400_000n;
const REASON_VALUE_LIMIT = 120;
const utf8 = new TextDecoder('utf-8');
const dictionaryCache = new WeakMap<Vector, unknown[]>();

/** Canonical value of every row of a table, column-major. */
export function canonicalTable(table: Table): CanonicalTable {
  const columns = table.schema.fields.map((f) => f.name);
  const values = columns.map((_, j) => {
    const column = table.getChildAt(j);
    return column ? canonicalVector(column) : [];
  });
  return { columns, rows: table.numRows, values };
}

/** Canonical value of every element of a (possibly chunked) vector. */
export function canonicalVector(vector: Vector): unknown[] {
  const out = new Array<unknown>(vector.length);
  let at = 0;
  for (const data of vector.data) {
    // Empty data (an empty result's column) may lack the children a reader needs.
    if (data.length === 0) continue;
    const read = readerFor(data);
    for (let i = 0; i < data.length; i++) out[at++] = read(i);
  }
  return out;
}

/** Compare two tables by canonical values; on mismatch, say where and what. */
export function compareTables(actual: Table, expected: Table): Comparison {
  const a = canonicalTable(actual);
  const e = canonicalTable(expected);
  if (a.columns.length !== e.columns.length || a.columns.some((name, j) => name !== e.columns[j])) {
    return {
      equal: false,
      reason: `columns differ: actual ${truncate(JSON.stringify(a.columns))}, expected ${truncate(JSON.stringify(e.columns))}`,
    };
  }
  if (a.rows !== e.rows) {
    return {
      equal: false,
      reason: `row count differs: actual ${a.rows}, expected ${e.rows}`,
    };
  }
  for (let j = 0; j < a.columns.length; j++) {
    const av = a.values[j] ?? [];
    const ev = e.values[j] ?? [];
    for (let i = 0; i < a.rows; i++) {
      const x = JSON.stringify(av[i]);
      const y = JSON.stringify(ev[i]);
      if (x !== y) {
        return {
          equal: false,
          reason: `column "${a.columns[j]}" row ${i}: actual ${truncate(x)}, expected ${truncate(y)}`,
        };
      }
    }
  }
  return { equal: true };
}

function truncate(text: string | undefined): string {
  const s = text ?? 'undefined';
  return s.length <= REASON_VALUE_LIMIT ? s : `${s.slice(0, REASON_VALUE_LIMIT)}… (${s.length} chars)`;
}

/** Reader for one Data chunk: null for invalid slots, canonical value otherwise. */
function readerFor(data: Data): Reader {
  const value = valueReader(data);
  if (DataType.isUnion(data.type) || DataType.isNull(data.type)) return value;
  const bitmap = data.nullBitmap as Uint8Array | undefined;
  if (!bitmap || bitmap.length === 0 || data.nullCount === 0) return value;
  const offset = data.offset;
  return (i) => {
    const bit = offset + i;
    return ((bitmap[bit >> 3] ?? 0) >> (bit & 7)) & 1 ? value(i) : null;
  };
}

/** Reader for the values of a Data chunk, ignoring its validity bitmap. */
function valueReader(data: Data): Reader {
  const type = data.type;
  if (DataType.isNull(type)) return () => null;
  if (DataType.isBool(type)) {
    const bits = data.values as Uint8Array;
    const offset = data.offset;
    return (i) => (((bits[(offset + i) >> 3] ?? 0) >> ((offset + i) & 7)) & 1) === 1;
  }
  if (DataType.isInt(type)) {
    const values = data.values as ArrayLike<number | bigint>;
    if (type.bitWidth === 64) return (i) => String(values[i]);
    return (i) => values[i];
  }
  if (DataType.isFloat(type)) {
    if (type.precision === Precision.HALF) {
      const halves = data.values as Uint16Array;
      return (i) => canonicalFloat(float16ToNumber(halves[i] ?? 0));
    }
    const floats = data.values as Float32Array | Float64Array;
    return (i) => canonicalFloat(floats[i] ?? Number.NaN);
  }
  if (DataType.isDecimal(type)) {
    const words = data.values as Uint32Array;
    const stride = type.bitWidth / 32;
    const bitWidth = BigInt(type.bitWidth);
    const scale = type.scale;
    return (i) => formatDecimal(decimalWords(words, i * stride, stride, bitWidth), scale);
  }
  if (DataType.isDate(type)) {
    if (type.unit === DateUnit.DAY) {
      const days = data.values as Int32Array;
      return (i) => isoDate(days[i] ?? 0);
    }
    const millis = data.values as ArrayLike<bigint | number>;
    return (i) => isoDate(Number(floorDiv(BigInt(millis[i] ?? 0), MS_PER_DAY)));
  }
  if (DataType.isTimestamp(type) || DataType.isTime(type) || DataType.isDuration(type)) {
    const raw = data.values as ArrayLike<bigint | number>;
    const scale = NS_PER_UNIT[type.unit];
    return (i) => (BigInt(raw[i] ?? 0) * scale).toString();
  }
  if (DataType.isInterval(type)) return intervalReader(data.values as Int32Array, type.unit, type);
  if (DataType.isUtf8(type) || DataType.isLargeUtf8(type)) {
    const bytes = data.values as Uint8Array;
    const offsets = data.valueOffsets as ArrayLike<number | bigint>;
    return (i) => utf8.decode(bytes.subarray(Number(offsets[i]), Number(offsets[i + 1])));
  }
  if (DataType.isBinary(type) || DataType.isLargeBinary(type)) {
    const bytes = data.values as Uint8Array;
    const offsets = data.valueOffsets as ArrayLike<number | bigint>;
    return (i) => hex(bytes.subarray(Number(offsets[i]), Number(offsets[i + 1])));
  }
  if (DataType.isFixedSizeBinary(type)) {
    const bytes = data.values as Uint8Array;
    const width = type.byteWidth;
    return (i) => hex(bytes.subarray(i * width, (i + 1) * width));
  }
  if (DataType.isUtf8View(type)) {
    const vector = makeVector(data);
    return (i) => vector.get(i) as string;
  }
  if (DataType.isBinaryView(type)) {
    const vector = makeVector(data);
    return (i) => hex(vector.get(i) as Uint8Array);
  }
  if (DataType.isList(type) || DataType.isLargeList(type)) {
    const offsets = data.valueOffsets as ArrayLike<number | bigint>;
    const child = readerFor(childOf(data, 0));
    return (i) => {
      const end = Number(offsets[i + 1]);
      const items: unknown[] = [];
      for (let k = Number(offsets[i]); k < end; k++) items.push(child(k));
      return items;
    };
  }
  if (DataType.isFixedSizeList(type)) {
    const size = type.listSize;
    const child = readerFor(childOf(data, 0));
    return (i) => {
      const items = new Array<unknown>(size);
      for (let k = 0; k < size; k++) items[k] = child(i * size + k);
      return items;
    };
  }
  if (DataType.isStruct(type)) {
    const fields = type.children.map((f, k) => ({
      name: f.name,
      read: readerFor(childOf(data, k)),
    }));
    return (i) => {
      const row: Record<string, unknown> = {};
      for (const field of fields) row[field.name] = field.read(i);
      return row;
    };
  }
  if (DataType.isMap(type)) {
    const offsets = data.valueOffsets as ArrayLike<number | bigint>;
    const entries = childOf(data, 0);
    const key = readerFor(childOf(entries, 0));
    const item = readerFor(childOf(entries, 1));
    return (i) => {
      const end = Number(offsets[i + 1]);
      const pairs: unknown[] = [];
      for (let k = Number(offsets[i]); k < end; k++) pairs.push([key(k), item(k)]);
      return pairs;
    };
  }
  if (DataType.isUnion(type)) {
    const typeIds = data.typeIds as Int8Array;
    const childIndex = type.typeIdToChildIndex;
    const children = data.children.map((c) => readerFor(c));
    const offsets = type.mode === UnionMode.Dense ? (data.valueOffsets as ArrayLike<number | bigint>) : undefined;
    return (i) => {
      const id = typeIds[i] ?? -1;
      const k = childIndex[id];
      const read = k === undefined ? undefined : children[k];
      if (!read) throw new Error(`canonical: union type id ${id} has no child`);
      return read(offsets ? Number(offsets[i]) : i);
    };
  }
  if (DataType.isDictionary(type)) {
    const indices = data.values as ArrayLike<number | bigint>;
    const dictionary = data.dictionary;
    if (!dictionary) throw new Error(`canonical: ${String(type)} column has no dictionary`);
    let decoded = dictionaryCache.get(dictionary);
    if (!decoded) {
      decoded = canonicalVector(dictionary);
      dictionaryCache.set(dictionary, decoded);
    }
    const dict = decoded;
    return (i) => dict[Number(indices[i])];
  }
  throw new Error(`canonical: unsupported Arrow type ${String(type)} (typeId ${type.typeId})`);
}

function childOf(data: Data, k: number): Data {
  const child = data.children[k];
  if (!child) throw new Error(`canonical: ${String(data.type)} data is missing child ${k}`);
  return child;
}

function intervalReader(words: Int32Array, unit: IntervalUnit, type: DataType): Reader {
  switch (unit) {
    case IntervalUnit.YEAR_MONTH:
      return (i) => [words[i]];
    case IntervalUnit.DAY_TIME:
      return (i) => [words[2 * i], words[2 * i + 1]];
    case IntervalUnit.MONTH_DAY_NANO:
      return (i) => {
        const lo = BigInt((words[4 * i + 2] ?? 0) >>> 0);
        const hi = BigInt(words[4 * i + 3] ?? 0);
        return [words[4 * i], words[4 * i + 1], ((hi << 32n) + lo).toString()];
      };
    default:
      throw new Error(`canonical: unsupported interval unit in ${String(type)}`);
  }
}

function canonicalFloat(x: number): number | string {
  if (Number.isNaN(x)) return 'NaN';
  if (x === Number.POSITIVE_INFINITY) return 'Infinity';
  if (x === Number.NEGATIVE_INFINITY) return '-Infinity';
  return x === 0 ? 0 : x;
}

/** IEEE 754 binary16 bits to a number. */
export function float16ToNumber(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  const fraction = bits & 0x3ff;
  if (exponent === 0) return sign * fraction * 2 ** -24;
  if (exponent === 0x1f) return fraction ? Number.NaN : sign * Number.POSITIVE_INFINITY;
  return sign * (1 + fraction / 1024) * 2 ** (exponent - 15);
}

/** Little-endian 32-bit words of a two's complement integer to a BigInt. */
function decimalWords(words: Uint32Array, start: number, count: number, bitWidth: bigint): bigint {
  let value = 0n;
  for (let k = count - 1; k >= 0; k--) value = (value << 32n) | BigInt(words[start + k] ?? 0);
  return value >> (bitWidth - 1n) ? value - (1n << bitWidth) : value;
}

/** Exact decimal text of unscaled × 10^-scale (negative scales multiply). */
export function formatDecimal(unscaled: bigint, scale: number): string {
  if (scale <= 0) return (unscaled * 10n ** BigInt(-scale)).toString();
  const negative = unscaled < 0n;
  const digits = (negative ? -unscaled : unscaled).toString().padStart(scale + 1, '0');
  const text = `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  return negative ? `-${text}` : text;
}

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
}

/** Days since 1970-01-01 to 'YYYY-MM-DD' in the proleptic Gregorian calendar. */
export function isoDate(days: number): string {
  // Shift the epoch to 0000-03-01 so leap days fall at the end of each year,
  // then split into 400-year eras of 146097 days.
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const dayOfEra = z - era * 146097;
  const yearOfEra = Math.floor(
    (dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36524) - Math.floor(dayOfEra / 146096)) / 365,
  );
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const monthIndex = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * monthIndex + 2) / 5) + 1;
  const month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  const yearText = year < 0 ? `-${String(-year).padStart(4, '0')}` : String(year).padStart(4, '0');
  return `${yearText}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}

function hex(bytes: Uint8Array): string {
  let out = '';
  for (let k = 0; k < bytes.length; k++) out += (bytes[k] ?? 0).toString(16).padStart(2, '0');
  return out;
}
