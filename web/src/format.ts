/**
 * Arrow values → display text, driven by the column's Arrow type: what printing rows needs.
 *
 * Design note: apache-arrow hands out raw JS values whose meaning depends on the type — a
 * timestamp or date is a plain number of milliseconds, a decimal is an unscaled big number, a
 * 64-bit integer is a `bigint`, binary is a `Uint8Array`, a struct is a row proxy, a list is a
 * `Vector`. Printed the obvious way (`String(value)`), decimals come out unscaled and dates as
 * epoch milliseconds. So formatting walks the *type* next to the value instead of guessing from
 * the value: scalars become one string ({@link formatValue}); nested values are first turned into
 * plain JSON values with the same rules and then printed as compact JSON, with `bigint` and
 * non-finite numbers as strings so `JSON.stringify` never throws or loses them.
 * {@link formatRows} does it for whole rows of a table or batch.
 */
import type {
  Binary,
  Bool,
  DataType,
  Date_,
  Decimal,
  Dictionary,
  Field,
  FixedSizeBinary,
  FixedSizeList,
  Float,
  Int,
  LargeBinary,
  LargeList,
  List,
  Map_,
  Precision,
  RecordBatch,
  Struct,
  Table,
  Time,
  Timestamp,
  TimeUnit,
  Union,
  Vector,
} from 'apache-arrow';
import { DATE_UNIT_DAY, PRECISION_DOUBLE, PRECISION_SINGLE, TYPE_ID, typeIs } from './arrow-types.js';

const isDictionary = typeIs<Dictionary>(TYPE_ID.Dictionary);
const isStruct = typeIs<Struct>(TYPE_ID.Struct);
const isFloat = typeIs<Float>(TYPE_ID.Float);
const isDecimal = typeIs<Decimal>(TYPE_ID.Decimal);
const isDate = typeIs<Date_>(TYPE_ID.Date);
const isTime = typeIs<Time>(TYPE_ID.Time);
const isTimestamp = typeIs<Timestamp>(TYPE_ID.Timestamp);
const isMap = typeIs<Map_>(TYPE_ID.Map);
const isList = typeIs<List>(TYPE_ID.List);
// LargeList and LargeBinary came with apache-arrow 21.2 and 15: one without them cannot read such
// a column from IPC, so none reaches here.
const isLargeList = typeIs<LargeList>(TYPE_ID.LargeList);
const isFixedSizeList = typeIs<FixedSizeList>(TYPE_ID.FixedSizeList);
const isUnion = typeIs<Union>(TYPE_ID.Union);
const isInt = typeIs<Int>(TYPE_ID.Int);
const isBool = typeIs<Bool>(TYPE_ID.Bool);
const isBinary = typeIs<Binary>(TYPE_ID.Binary);
const isLargeBinary = typeIs<LargeBinary>(TYPE_ID.LargeBinary);
const isFixedSizeBinary = typeIs<FixedSizeBinary>(TYPE_ID.FixedSizeBinary);

/** Bytes of binary values shown (as hex) before cutting. */
const MAX_BINARY_BYTES = 32;

/**
 * The text of one value of a column of `type` (`null` for a null value): decimals exact at their
 * scale (`'1234.56'`), dates as `YYYY-MM-DD`, timestamps as ISO 8601 (with `Z` only when the
 * column has a time zone), times as `HH:MM:SS.fff`, 64-bit integers exact, floats as the shortest
 * text of their precision, binary as UTF-8 text when printable (else `0x…` hex), nested values as
 * JSON.
 *
 * ```ts
 * const field = table.schema.fields[0];
 * formatValue(table.getChildAt(0)?.get(0), field.type); // '1996-03-13', not 826675200000
 * ```
 */
export function formatValue(value: unknown, type: DataType): string | null {
  if (value === null || value === undefined) return null;
  if (isDictionary(type)) return formatValue(value, type.dictionary);
  if (isNested(type)) return JSON.stringify(toPlain(value, type), jsonReplacer);
  return scalarText(value, type);
}

/**
 * Rows `offset … offset + limit` (default: all) of a table or batch as objects of display text,
 * keyed by column name, each value as {@link formatValue} writes it — for `console.table`, a
 * template, or a test.
 */
export function formatRows(
  data: Table | RecordBatch,
  options: { offset?: number; limit?: number } = {},
): Array<Record<string, string | null>> {
  const offset = Math.max(0, options.offset ?? 0);
  const end = Math.min(data.numRows, offset + (options.limit ?? data.numRows));
  const fields = data.schema.fields;
  const columns = fields.map((_, i) => data.getChildAt(i));
  const rows: Array<Record<string, string | null>> = [];
  for (let row = offset; row < end; row++) {
    const out: Record<string, string | null> = {};
    fields.forEach((field, i) => {
      out[field.name] = formatValue(valueAt(columns[i], row), field.type);
    });
    rows.push(out);
  }
  return rows;
}

/**
 * The value at `row` of `vector`, for {@link formatValue}: `vector.get(row)`, except that a
 * timestamp comes as its raw `bigint` count of its unit — apache-arrow's `get` turns it into a
 * float of milliseconds, which drops microseconds and nanoseconds and throws beyond 2^53 (INT96
 * timestamps from Spark, far dates in nanoseconds).
 *
 * ```ts
 * formatValue(valueAt(table.getChildAt(0), 5), field.type); // '2258-01-01T00:13:13.200000000'
 * ```
 */
export function valueAt(vector: Vector | null | undefined, row: number): unknown {
  if (vector === null || vector === undefined) return undefined;
  if (!isTimestamp(vector.type)) return vector.get(row);
  if (!vector.isValid(row)) return null;
  let index = row;
  for (const data of vector.data) {
    if (index < data.length) {
      const values = data.values as unknown as BigInt64Array | Int32Array;
      // apache-arrow 21 keeps 64-bit values as such; 13 as pairs of 32-bit words (low, high).
      if (values instanceof BigInt64Array) return values[index];
      const low = BigInt((values[2 * index] ?? 0) >>> 0);
      const high = BigInt(values[2 * index + 1] ?? 0);
      return BigInt.asIntN(64, (high << 32n) | low);
    }
    index -= data.length;
  }
  return undefined;
}

/** Whether values of `type` are shown as JSON. */
function isNested(type: DataType): boolean {
  return isStruct(type) || isList(type) || isLargeList(type) || isFixedSizeList(type) || isMap(type) || isUnion(type);
}

/** A value as plain JSON-able data (scalars formatted as in a cell, except numbers and booleans). */
function toPlain(value: unknown, type: DataType): unknown {
  if (value === null || value === undefined) return null;
  if (isDictionary(type)) return toPlain(value, type.dictionary);
  if (isStruct(type)) {
    const row = value as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const field of type.children as Field[]) out[field.name] = toPlain(row[field.name], field.type);
    return out;
  }
  if (isList(type) || isLargeList(type) || isFixedSizeList(type)) {
    const itemType = (type.children[0] as Field).type;
    return Array.from(value as Iterable<unknown>, (item) => toPlain(item, itemType));
  }
  if (isMap(type)) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of value as Iterable<[unknown, unknown]>) {
      out[String(formatValue(key, type.keyType))] = toPlain(item, type.valueType);
    }
    return out;
  }
  if (isUnion(type)) return plainOfUnknown(value);
  if (typeof value === 'number' && isFloat(type)) return Number(floatText(value, type.precision));
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') {
    if (isInt(type) || isBool(type)) return value;
  }
  return scalarText(value, type);
}

/** `JSON.stringify` replacer: `bigint` and non-finite numbers become strings. */
function jsonReplacer(_key: string, value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  return value;
}

/** The text of a non-null, non-nested value. */
function scalarText(raw: unknown, type: DataType): string {
  // apache-arrow before 15 gives dates and timestamps as `Date`s, later versions as milliseconds.
  const value = raw instanceof Date ? raw.getTime() : raw;
  if (isTimestamp(type) && typeof value === 'bigint') {
    const iso = exactIsoString(value, type.unit);
    return type.timezone ? iso : iso.replace(/Z$/, '');
  }
  if (isTimestamp(type) && typeof value === 'number') {
    // Without a time zone the value is wall-clock time, not an instant: drop the `Z`.
    const iso = isoString(value);
    return type.timezone ? iso : iso.replace(/Z$/, '');
  }
  if (isDate(type) && typeof value === 'number') {
    const iso = isoString(value);
    return type.unit === DATE_UNIT_DAY || iso.endsWith('T00:00:00.000Z') ? iso.slice(0, 10) : iso;
  }
  if (isTime(type) && (typeof value === 'number' || typeof value === 'bigint')) {
    return timeOfDay(BigInt(value), type.unit);
  }
  if (isDecimal(type)) return decimalText(value, type.scale);
  if (value instanceof Uint8Array && (isBinary(type) || isLargeBinary(type) || isFixedSizeBinary(type))) {
    return binaryText(value);
  }
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && isFloat(type)) return floatText(value, type.precision);
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  return JSON.stringify(plainOfUnknown(value), jsonReplacer) ?? String(value);
}

/** Values whose type gives no guidance (unions, intervals): use `toJSON()` where there is one. */
function plainOfUnknown(value: unknown): unknown {
  if (ArrayBuffer.isView(value)) return Array.from(value as unknown as ArrayLike<unknown>);
  if (typeof value === 'object' && value !== null && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    return (value as { toJSON(): unknown }).toJSON();
  }
  return value;
}

/**
 * The shortest text that reads back as the same value at the column's precision: a float32
 * `1.1` widened to a double is `1.100000023841858`, and should print as `1.1`.
 */
function floatText(value: number, precision: Precision): string {
  if (Object.is(value, -0)) return '-0';
  if (precision === PRECISION_DOUBLE || !Number.isFinite(value)) return String(value);
  const round = precision === PRECISION_SINGLE ? Math.fround : (Math as { f16round?: (x: number) => number }).f16round;
  const maxDigits = precision === PRECISION_SINGLE ? 9 : 5;
  for (let digits = 1; round !== undefined && digits < maxDigits; digits++) {
    const candidate = Number(value.toPrecision(digits));
    if (round(candidate) === value) return String(candidate);
  }
  return String(Number(value.toPrecision(maxDigits)));
}

function isoString(ms: number): string {
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? String(ms) : date.toISOString();
}

/** Ticks of each `TimeUnit` (second, milli-, micro-, nanosecond: the Arrow format's 0–3) in a second. */
const TICKS_PER_SECOND: Readonly<Record<TimeUnit, bigint>> = [1n, 1_000n, 1_000_000n, 1_000_000_000n];

/** Digits of a second's fraction in each unit. */
const FRACTION_DIGITS: Readonly<Record<TimeUnit, number>> = [0, 3, 6, 9];

/** Each unit's name. */
const UNIT_NAMES: Readonly<Record<TimeUnit, string>> = ['second', 'millisecond', 'microsecond', 'nanosecond'];

/**
 * ISO 8601 of a count of `unit`s since the epoch, every digit of the unit kept
 * (`2024-01-01T20:34:56.123456Z`); beyond what a `Date` holds (±275,760 years), the count itself.
 */
function exactIsoString(ticks: bigint, unit: TimeUnit): string {
  const perSecond = TICKS_PER_SECOND[unit];
  let seconds = ticks / perSecond;
  let fraction = ticks % perSecond;
  if (fraction < 0n) {
    seconds -= 1n;
    fraction += perSecond;
  }
  const date = new Date(Number(seconds) * 1000);
  if (Number.isNaN(date.getTime())) return `${ticks} (${UNIT_NAMES[unit]}s since 1970)`;
  const digits = FRACTION_DIGITS[unit];
  const whole = date.toISOString().slice(0, 19);
  return digits === 0 ? `${whole}Z` : `${whole}.${fraction.toString().padStart(digits, '0')}Z`;
}

/** `13:45:07.250` from a count of `unit`s since midnight. */
function timeOfDay(ticks: bigint, unit: TimeUnit): string {
  const perSecond = TICKS_PER_SECOND[unit];
  const seconds = ticks / perSecond;
  const fraction = ticks % perSecond;
  const two = (n: bigint) => n.toString().padStart(2, '0');
  const hms = `${two(seconds / 3600n)}:${two((seconds / 60n) % 60n)}:${two(seconds % 60n)}`;
  if (perSecond === 1n) return hms;
  return `${hms}.${fraction.toString().padStart(perSecond.toString().length - 1, '0')}`;
}

/** An exact decimal string from an Arrow decimal (an unscaled big integer) and its scale. */
function decimalText(value: unknown, scale: number): string {
  // apache-arrow's big numbers print their exact digits as strings (`BigNum`'s `toPrimitive`).
  const unscaled = String(value);
  if (scale <= 0) return scale === 0 ? unscaled : unscaled + '0'.repeat(-scale);
  const negative = unscaled.startsWith('-');
  const digits = (negative ? unscaled.slice(1) : unscaled).padStart(scale + 1, '0');
  const text = `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  return negative ? `-${text}` : text;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Binary as text when it is printable UTF-8 (many writers store strings as unannotated binary),
 * else as `0x0a1b…` (at most {@link MAX_BINARY_BYTES} bytes shown).
 */
function binaryText(bytes: Uint8Array): string {
  try {
    const text = utf8.decode(bytes);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
    if (!/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(text)) return text;
  } catch {
    // not UTF-8: hex below
  }
  return hexText(bytes);
}

function hexText(bytes: Uint8Array): string {
  let hex = '';
  for (const byte of bytes.subarray(0, MAX_BINARY_BYTES)) hex += byte.toString(16).padStart(2, '0');
  return `0x${hex}${bytes.length > MAX_BINARY_BYTES ? '…' : ''}`;
}
