/**
 * Tests for canonical.ts, on tables built with apache-arrow JS itself.
 *
 * Design note: each Arrow type gets values chosen to expose a wrong rule
 * (64-bit extremes, negative decimals in every bit width, pre-epoch dates and
 * timestamps, -0/NaN/±Infinity, out-of-line view strings, sliced vectors whose
 * buffers carry an offset). Dates are cross-checked against JS Date over a wide
 * span; decimal words are written with BigInt.asUintN so the test's encoding
 * does not share code with the decoder under test.
 */
import {
  Binary,
  BinaryView,
  Bool,
  BufferType,
  Data,
  DataType,
  DateDay,
  DateMillisecond,
  Decimal,
  DenseUnion,
  Dictionary,
  DurationMillisecond,
  DurationSecond,
  Field,
  FixedSizeBinary,
  FixedSizeList,
  Float16,
  Float32,
  Float64,
  Int8,
  Int16,
  Int32,
  Int64,
  IntervalDayTime,
  IntervalMonthDayNano,
  IntervalYearMonth,
  LargeBinary,
  LargeList,
  LargeUtf8,
  List,
  Map_,
  makeData,
  makeVector,
  Null,
  RecordBatch,
  SparseUnion,
  Struct,
  Table,
  TimeMicrosecond,
  TimeMillisecond,
  TimeNanosecond,
  TimeSecond,
  TimestampMicrosecond,
  TimestampMillisecond,
  TimestampNanosecond,
  TimestampSecond,
  Uint32,
  Uint64,
  Utf8,
  Utf8View,
  type Vector,
  vectorFromArray,
} from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import {
  canonicalTable,
  canonicalVector,
  compareTables,
  float16ToNumber,
  formatDecimal,
  isoDate,
} from './canonical.ts';

/** Validity bitmap for a list of values, null meaning invalid. */
function bitmapOf(values: readonly unknown[]): Uint8Array {
  const bits = new Uint8Array(Math.ceil(values.length / 8));
  values.forEach((v, i) => {
    if (v !== null) bits[i >> 3] = (bits[i >> 3] ?? 0) | (1 << (i & 7));
  });
  return bits;
}

function decimalVector(values: (bigint | null)[], precision: number, scale: number, bitWidth: number): Vector {
  const stride = bitWidth / 32;
  const words = new Uint32Array(values.length * stride);
  values.forEach((v, i) => {
    const u = BigInt.asUintN(bitWidth, v ?? 0n);
    for (let k = 0; k < stride; k++) words[i * stride + k] = Number((u >> BigInt(32 * k)) & 0xffffffffn);
  });
  const type = new Decimal(scale, precision, bitWidth);
  return makeVector(
    makeData({
      type,
      length: values.length,
      data: words,
      nullBitmap: bitmapOf(values),
    }),
  );
}

function bigintVector(type: DataType, values: (bigint | null)[]): Vector {
  const data = BigInt64Array.from(values, (v) => v ?? 0n);
  const buffers = {
    [BufferType.DATA]: data,
    [BufferType.VALIDITY]: bitmapOf(values),
  };
  return makeVector(new Data(type, 0, values.length, -1, buffers));
}

function int32Vector(type: DataType, words: number[], length: number): Vector {
  const buffers = { [BufferType.DATA]: Int32Array.from(words) };
  return makeVector(new Data(type, 0, length, 0, buffers));
}

function single(vector: Vector, name = 'c'): Table {
  return new Table({ [name]: vector });
}

describe('canonicalVector scalars', () => {
  it('keeps small integers as numbers and nulls as null', () => {
    expect(canonicalVector(vectorFromArray([1, -128, 127, null], new Int8()))).toEqual([1, -128, 127, null]);
    expect(canonicalVector(vectorFromArray([-32768, null], new Int16()))).toEqual([-32768, null]);
    expect(canonicalVector(vectorFromArray([2147483647, -2147483648], new Int32()))).toEqual([2147483647, -2147483648]);
    expect(canonicalVector(vectorFromArray([4294967295, 0], new Uint32()))).toEqual([4294967295, 0]);
  });

  it('turns 64-bit integers into exact decimal strings', () => {
    const signed = vectorFromArray([-9223372036854775808n, 9223372036854775807n, null, 0n], new Int64());
    expect(canonicalVector(signed)).toEqual(['-9223372036854775808', '9223372036854775807', null, '0']);
    const unsigned = vectorFromArray([18446744073709551615n, 9007199254740993n], new Uint64());
    expect(canonicalVector(unsigned)).toEqual(['18446744073709551615', '9007199254740993']);
  });

  it('maps float specials to strings and -0 to 0', () => {
    const v = vectorFromArray(
      [1.5, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0, null],
      new Float64(),
    );
    const out = canonicalVector(v);
    expect(out).toEqual([1.5, 'NaN', 'Infinity', '-Infinity', 0, null]);
    expect(Object.is(out[4], 0)).toBe(true);
    expect(canonicalVector(vectorFromArray([0.1], new Float32()))).toEqual([Math.fround(0.1)]);
  });

  it('decodes Float16 bits', () => {
    const bits = Uint16Array.of(0x3c00, 0xc000, 0x7bff, 0x0001, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0x3555);
    const v = makeVector(makeData({ type: new Float16(), length: bits.length, data: bits }));
    expect(canonicalVector(v)).toEqual([1, -2, 65504, 2 ** -24, 0, 'Infinity', '-Infinity', 'NaN', 0.333251953125]);
    expect(float16ToNumber(0x0400)).toBe(2 ** -14);
    expect(canonicalVector(vectorFromArray([1.5, null], new Float16()))).toEqual([1.5, null]);
  });

  it('reads booleans, also from a slice that starts mid-byte', () => {
    const v = vectorFromArray([true, false, null, true, true, false, false, true, false, true], new Bool());
    expect(canonicalVector(v)).toEqual([true, false, null, true, true, false, false, true, false, true]);
    expect(canonicalVector(v.slice(2, 9))).toEqual([null, true, true, false, false, true, false]);
  });

  it('gives null for every slot of the Null type', () => {
    expect(canonicalVector(makeVector(makeData({ type: new Null(), length: 3 })))).toEqual([null, null, null]);
  });
});

describe('canonicalVector decimals', () => {
  it('formats decimal128 with its scale, including negatives', () => {
    const v = decimalVector([12345n, -5n, -123456789012345678901234567890n, 0n, null, -1n], 38, 2, 128);
    expect(canonicalVector(v)).toEqual(['123.45', '-0.05', '-1234567890123456789012345678.90', '0.00', null, '-0.01']);
  });

  it('handles the extremes of decimal128 two’s complement', () => {
    const min = -(2n ** 127n);
    const max = 2n ** 127n - 1n;
    expect(canonicalVector(decimalVector([min, max], 38, 0, 128))).toEqual([min.toString(), max.toString()]);
  });

  it('handles decimal256, decimal64 and decimal32 widths', () => {
    const big = -(10n ** 70n) - 3n;
    expect(canonicalVector(decimalVector([big], 76, 5, 256))).toEqual([`${(big / 100000n).toString()}.00003`]);
    expect(canonicalVector(decimalVector([-9_000_000_000_123n, 7n], 18, 3, 64))).toEqual(['-9000000000.123', '0.007']);
    expect(canonicalVector(decimalVector([-2147483648n, 2147483647n], 9, 4, 32))).toEqual([
      '-214748.3648',
      '214748.3647',
    ]);
  });

  it('multiplies out a zero or negative scale', () => {
    expect(canonicalVector(decimalVector([7n, -7n], 10, -2, 128))).toEqual(['700', '-700']);
    expect(formatDecimal(42n, 0)).toBe('42');
    expect(formatDecimal(-42n, 5)).toBe('-0.00042');
  });
});

describe('canonicalVector dates and times', () => {
  it('formats Date32 days as ISO dates', () => {
    const days = [0, -1, 19000, 11016, -719162, 2932896, null];
    const v = makeVector(
      makeData({
        type: new DateDay(),
        length: days.length,
        data: Int32Array.from(days, (d) => d ?? 0),
        nullBitmap: bitmapOf(days),
      }),
    );
    expect(canonicalVector(v)).toEqual([
      '1970-01-01',
      '1969-12-31',
      '2022-01-08',
      '2000-02-29',
      '0001-01-01',
      '9999-12-31',
      null,
    ]);
  });

  it('agrees with JS Date across years 1..9999', () => {
    for (let day = -719162; day <= 2932896; day += 997) {
      expect(isoDate(day)).toBe(new Date(day * 86_400_000).toISOString().slice(0, 10));
    }
    expect(isoDate(-719163)).toBe('0000-12-31');
    expect(isoDate(-719528)).toBe('0000-01-01');
    expect(isoDate(-719529)).toBe('-0001-12-31');
  });

  it('formats Date64 milliseconds as the day they fall in', () => {
    const v = bigintVector(new DateMillisecond(), [0n, 19000n * 86_400_000n, -1n, null]);
    expect(canonicalVector(v)).toEqual(['1970-01-01', '2022-01-08', '1969-12-31', null]);
  });

  it('turns timestamps of every unit into exact nanosecond strings', () => {
    expect(canonicalVector(bigintVector(new TimestampSecond(), [-1n, 1700000000n]))).toEqual([
      '-1000000000',
      '1700000000000000000',
    ]);
    expect(canonicalVector(bigintVector(new TimestampMillisecond('UTC'), [1700000000123n, null]))).toEqual([
      '1700000000123000000',
      null,
    ]);
    expect(canonicalVector(bigintVector(new TimestampMicrosecond('America/New_York'), [1700000000123457n]))).toEqual([
      '1700000000123457000',
    ]);
    expect(
      canonicalVector(bigintVector(new TimestampNanosecond(), [1700000000123456789n, -9223372036854775808n])),
    ).toEqual(['1700000000123456789', '-9223372036854775808']);
  });

  it('turns Time32 and Time64 into nanosecond strings', () => {
    expect(canonicalVector(int32Vector(new TimeSecond(), [86399], 1))).toEqual(['86399000000000']);
    expect(canonicalVector(int32Vector(new TimeMillisecond(), [1500], 1))).toEqual(['1500000000']);
    expect(canonicalVector(bigintVector(new TimeMicrosecond(), [86399999999n, null]))).toEqual([
      '86399999999000',
      null,
    ]);
    expect(canonicalVector(bigintVector(new TimeNanosecond(), [1n]))).toEqual(['1']);
  });

  it('turns durations into nanosecond strings', () => {
    expect(canonicalVector(bigintVector(new DurationMillisecond(), [1500n, -2n]))).toEqual(['1500000000', '-2000000']);
    expect(canonicalVector(bigintVector(new DurationSecond(), [9223372036n]))).toEqual(['9223372036000000000']);
  });

  it('turns intervals into arrays of their fields', () => {
    expect(canonicalVector(int32Vector(new IntervalYearMonth(), [14, -3], 2))).toEqual([[14], [-3]]);
    expect(canonicalVector(int32Vector(new IntervalDayTime(), [3, 500, -1, -2], 2))).toEqual([
      [3, 500],
      [-1, -2],
    ]);
    // nanos 5e9 = 0x1_2A05F200 (spans both words) and -1 (all ones).
    const mdn = int32Vector(new IntervalMonthDayNano(), [1, 2, 0x2a05f200, 1, -1, 0, -1, -1], 2);
    expect(canonicalVector(mdn)).toEqual([
      [1, 2, '5000000000'],
      [-1, 0, '-1'],
    ]);
  });
});

describe('canonicalVector strings and bytes', () => {
  const strings = ['a', 'héllo ✓', null, '', 'a string longer than twelve bytes'];

  it('reads Utf8, LargeUtf8 and Utf8View alike', () => {
    for (const type of [new Utf8(), new LargeUtf8(), new Utf8View()]) {
      expect(canonicalVector(vectorFromArray(strings, type)), String(type)).toEqual(strings);
    }
    expect(canonicalVector(vectorFromArray(strings, new Utf8()).slice(1, 4))).toEqual(strings.slice(1, 4));
  });

  it('writes Binary, LargeBinary, BinaryView and FixedSizeBinary as lowercase hex', () => {
    const bytes = [Uint8Array.of(0, 255, 16), null, new Uint8Array(0), new Uint8Array(20).fill(0xab)];
    const hex = ['00ff10', null, '', 'ab'.repeat(20)];
    for (const type of [new Binary(), new LargeBinary(), new BinaryView()]) {
      expect(canonicalVector(vectorFromArray(bytes, type)), String(type)).toEqual(hex);
    }
    const fixed = vectorFromArray([Uint8Array.of(1, 0xfe), null, Uint8Array.of(0xa0, 0x0b)], new FixedSizeBinary(2));
    expect(canonicalVector(fixed)).toEqual(['01fe', null, 'a00b']);
    expect(canonicalVector(fixed.slice(2))).toEqual(['a00b']);
  });
});

describe('canonicalVector nested types', () => {
  const item = () => new Field('item', new Int32(), true);

  it('turns List and LargeList into arrays, also when sliced', () => {
    const rows = [[1, 2], null, [], [3, null]];
    for (const type of [new List(item()), new LargeList(item())]) {
      const v = vectorFromArray(rows, type);
      expect(canonicalVector(v), String(type)).toEqual(rows);
      expect(canonicalVector(v.slice(3)), String(type)).toEqual([[3, null]]);
    }
  });

  it('turns FixedSizeList into arrays, also when sliced', () => {
    const v = vectorFromArray([[1, 2], null, [5, null]], new FixedSizeList(2, item()));
    expect(canonicalVector(v)).toEqual([[1, 2], null, [5, null]]);
    expect(canonicalVector(v.slice(2))).toEqual([[5, null]]);
  });

  it('turns Struct into objects keyed in field order', () => {
    const type = new Struct([new Field('z', new Utf8(), true), new Field('a', new Int64(), true)]);
    const v = vectorFromArray([{ z: 'x', a: 1n }, null, { z: null, a: -2n }], type);
    const out = canonicalVector(v);
    expect(out).toEqual([{ z: 'x', a: '1' }, null, { z: null, a: '-2' }]);
    expect(Object.keys(out[0] as object)).toEqual(['z', 'a']);
    expect(canonicalVector(v.slice(2))).toEqual([{ z: null, a: '-2' }]);
  });

  it('turns Map into [key, value] pairs in stored order', () => {
    const entries = new Struct([new Field('key', new Utf8(), false), new Field('value', new Int32(), true)]);
    const type = new Map_(new Field('entries', entries, false));
    const v = vectorFromArray(
      [
        new Map<string, number | null>([
          ['k2', 1],
          ['k1', null],
        ]),
        null,
        new Map<string, number | null>(),
      ],
      type,
    );
    expect(canonicalVector(v)).toEqual([
      [
        ['k2', 1],
        ['k1', null],
      ],
      null,
      [],
    ]);
  });

  it('decodes dictionaries to their values', () => {
    const v = vectorFromArray(['b', 'a', null, 'b'], new Dictionary(new Utf8(), new Int32()));
    expect(v.type.typeId).toBe(new Dictionary(new Utf8(), new Int32()).typeId);
    expect(canonicalVector(v)).toEqual(['b', 'a', null, 'b']);
  });

  it('reads the active child of dense and sparse unions', () => {
    const fields = [new Field('i', new Int32(), true), new Field('s', new Utf8(), true)];
    const ints = vectorFromArray([10, null], new Int32()).data[0] as Data;
    const strs = vectorFromArray(['a', 'b'], new Utf8()).data[0] as Data;
    const dense = makeData({
      type: new DenseUnion([5, 7], fields),
      length: 4,
      typeIds: Int8Array.of(5, 7, 5, 7),
      valueOffsets: Int32Array.of(0, 0, 1, 1),
      children: [ints, strs],
    });
    expect(canonicalVector(makeVector(dense))).toEqual([10, 'a', null, 'b']);
    const sparse = makeData({
      type: new SparseUnion([0, 1], fields),
      length: 3,
      typeIds: Int8Array.of(1, 0, 1),
      children: [
        vectorFromArray([1, 2, 3], new Int32()).data[0] as Data,
        vectorFromArray(['x', 'y', 'z'], new Utf8()).data[0] as Data,
      ],
    });
    expect(canonicalVector(makeVector(sparse))).toEqual(['x', 2, 'z']);
  });

  it('throws on a type it has no rule for, naming it', () => {
    const mystery = Object.assign(Object.create(DataType.prototype), {
      typeId: 99,
      toString: () => 'Mystery<7>',
    }) as DataType;
    const data = {
      type: mystery,
      length: 1,
      offset: 0,
      nullCount: 0,
      children: [],
    } as unknown as Data;
    const vector = { length: 1, data: [data] } as unknown as Vector;
    expect(() => canonicalVector(vector)).toThrow(/unsupported Arrow type Mystery<7> \(typeId 99\)/);
  });
});

describe('canonicalTable', () => {
  it('is column-major, JSON-serializable and spans record batches', () => {
    const first = new RecordBatch({
      n: vectorFromArray([1n, 2n], new Int64()).data[0] as Data,
      s: vectorFromArray(['a', null], new Utf8()).data[0] as Data,
    });
    const second = new RecordBatch({
      n: vectorFromArray([3n], new Int64()).data[0] as Data,
      s: vectorFromArray(['c'], new Utf8()).data[0] as Data,
    });
    const table = new Table([first, second]);
    const canonical = canonicalTable(table);
    expect(canonical).toEqual({
      columns: ['n', 's'],
      rows: 3,
      values: [
        ['1', '2', '3'],
        ['a', null, 'c'],
      ],
    });
    expect(JSON.parse(JSON.stringify(canonical))).toEqual(canonical);
  });

  it('handles 100k cells per column chunk by chunk', () => {
    const n = 100_000;
    const ints = Int32Array.from({ length: n }, (_, i) => i * 7);
    const table = new Table({
      i: makeVector(ints),
      s: vectorFromArray(
        Array.from({ length: n }, (_, i) => (i % 3 === 0 ? null : `v${i}`)),
        new Utf8(),
      ),
    });
    const canonical = canonicalTable(table);
    expect(canonical.rows).toBe(n);
    expect(canonical.values[0]?.[n - 1]).toBe((n - 1) * 7);
    expect(canonical.values[1]?.[n - 2]).toBe(`v${n - 2}`);
    expect(canonical.values[1]?.[n - 1]).toBeNull(); // 99999 % 3 === 0
  });
});

describe('compareTables', () => {
  it('treats a µs timestamp column and a ns one with the same instants as equal', () => {
    const micros = single(bigintVector(new TimestampMicrosecond('UTC'), [1n, 1700000000123456n, null, -5n]), 'ts');
    const nanos = single(
      bigintVector(new TimestampNanosecond('+00:00'), [1000n, 1700000000123456000n, null, -5000n]),
      'ts',
    );
    expect(compareTables(nanos, micros)).toEqual({ equal: true });
    const off = single(bigintVector(new TimestampNanosecond(), [1000n, 1700000000123456001n, null, -5000n]), 'ts');
    expect(compareTables(off, micros)).toEqual({
      equal: false,
      reason: 'column "ts" row 1: actual "1700000000123456001", expected "1700000000123456000"',
    });
  });

  it('treats a dictionary column and a plain one with the same values as equal', () => {
    const values = ['x', 'y', null, 'x', 'x'];
    const dict = single(vectorFromArray(values, new Dictionary(new Utf8(), new Int32())));
    const plain = single(vectorFromArray(values, new LargeUtf8()));
    expect(compareTables(dict, plain)).toEqual({ equal: true });
  });

  it('compares negative decimal128 values exactly across bit widths', () => {
    const a = single(decimalVector([-123456789012345678901n, null], 38, 4, 128));
    const b = single(decimalVector([-123456789012345678901n, null], 40, 4, 256));
    expect(compareTables(a, b)).toEqual({ equal: true });
    const c = single(decimalVector([-123456789012345678902n, null], 38, 4, 128));
    expect(compareTables(c, a)).toEqual({
      equal: false,
      reason: 'column "c" row 0: actual "-12345678901234567.8902", expected "-12345678901234567.8901"',
    });
  });

  it('names the first differing column and row, with both values', () => {
    const expected = new Table({
      a: vectorFromArray([1, 2, 3], new Int32()),
      b: vectorFromArray(['p', 'q', 'r'], new Utf8()),
    });
    const actual = new Table({
      a: vectorFromArray([1, 2, 3], new Int32()),
      b: vectorFromArray(['p', 'q', null], new Utf8()),
    });
    expect(compareTables(actual, expected)).toEqual({
      equal: false,
      reason: 'column "b" row 2: actual null, expected "r"',
    });
  });

  it('truncates long values in the reason', () => {
    const long = 'x'.repeat(500);
    const actual = single(vectorFromArray([long], new Utf8()), 'text');
    const expected = single(vectorFromArray([`${long}!`], new Utf8()), 'text');
    const result = compareTables(actual, expected);
    expect(result.equal).toBe(false);
    const reason = result.equal ? '' : result.reason;
    expect(reason.startsWith(`column "text" row 0: actual "${'x'.repeat(119)}… (502 chars), expected "`)).toBe(true);
    expect(reason.endsWith('… (503 chars)')).toBe(true);
    expect(reason.length).toBeLessThan(320);
  });

  it('reports different column lists and row counts', () => {
    const ab = new Table({
      a: vectorFromArray([1], new Int32()),
      b: vectorFromArray([1], new Int32()),
    });
    const ac = new Table({
      a: vectorFromArray([1], new Int32()),
      c: vectorFromArray([1], new Int32()),
    });
    expect(compareTables(ab, ac)).toEqual({
      equal: false,
      reason: 'columns differ: actual ["a","b"], expected ["a","c"]',
    });
    const longer = new Table({ a: vectorFromArray([1, 2], new Int32()) });
    const shorter = new Table({ a: vectorFromArray([1], new Int32()) });
    expect(compareTables(longer, shorter)).toEqual({
      equal: false,
      reason: 'row count differs: actual 2, expected 1',
    });
  });

  it('distinguishes values that only a lossy conversion would merge', () => {
    const a = single(vectorFromArray([9007199254740993n], new Int64()));
    const b = single(vectorFromArray([9007199254740992n], new Int64()));
    expect(compareTables(a, b).equal).toBe(false);
  });
});
