import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  DateDay,
  Decimal,
  Field,
  Float32,
  Int64,
  List,
  makeData,
  makeVector,
  Schema,
  Struct,
  Table,
  TimeMicrosecond,
  Timestamp,
  TimestampMillisecond,
  TimeUnit,
  Utf8,
  vectorFromArray,
} from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { formatRows, formatValue, valueAt } from './format.js';
import { openParquet } from './reader.js';

const dataDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../shared/parquet-testing/data');

describe('formatValue', () => {
  it('prints dates, timestamps and times as calendar text, not epoch numbers', () => {
    const day = Date.UTC(1996, 2, 13);
    expect(formatValue(vectorFromArray([day], new DateDay()).get(0), new DateDay())).toBe('1996-03-13');
    const instant = Date.UTC(2009, 2, 1, 0, 1, 2, 250);
    // A timestamp without a time zone is wall-clock time: no `Z`.
    expect(formatValue(instant, new TimestampMillisecond())).toBe('2009-03-01T00:01:02.250');
    expect(formatValue(instant, new Timestamp(TimeUnit.MILLISECOND, 'UTC'))).toBe('2009-03-01T00:01:02.250Z');
    expect(formatValue(45_296_000_123n, new TimeMicrosecond())).toBe('12:34:56.000123');
    // apache-arrow before 15 gives `Date` objects: the same text.
    expect(formatValue(new Date(day), new DateDay())).toBe('1996-03-13');
    expect(formatValue(new Date(instant), new TimestampMillisecond())).toBe('2009-03-01T00:01:02.250');
  });

  it('prints 64-bit integers exactly and floats at their own precision', () => {
    const big = 2n ** 62n + 1n;
    expect(formatValue(vectorFromArray([big], new Int64()).get(0), new Int64())).toBe('4611686018427387905');
    expect(formatValue(Math.fround(1.1), new Float32())).toBe('1.1');
    expect(formatValue(null, new Int64())).toBeNull();
  });

  it('prints decimals at their scale, negative ones included', () => {
    const type = new Decimal(2, 10, 128);
    // -12345 as a 128-bit two's complement, little-endian 32-bit words.
    const words = new Uint32Array([0xffffcfc7, 0xffffffff, 0xffffffff, 0xffffffff, 5, 0, 0, 0]);
    const vector = makeVector(makeData({ type, length: 2, data: words }));
    expect(formatValue(vector.get(0), type)).toBe('-123.45');
    expect(formatValue(vector.get(1), type)).toBe('0.05');
  });

  it('prints nested values as JSON with the same rules inside (64-bit integers as exact strings)', () => {
    const type = new Struct([
      new Field('name', new Utf8()),
      new Field('born', new DateDay()),
      new Field('ids', new List(new Field('item', new Int64()))),
    ]);
    const vector = vectorFromArray([{ name: 'a', born: Date.UTC(2000, 0, 2), ids: [1n, 2n] }], type);
    expect(formatValue(vector.get(0), type)).toBe('{"name":"a","born":"2000-01-02","ids":["1","2"]}');
  });
});

describe('formatRows', () => {
  it('turns a read Parquet file into rows of display text', async () => {
    const file = await openParquet(await readFile(path.join(dataDir, 'int32_decimal.parquet')));
    const table = await file.scan({ limit: 3 }).toTable();
    expect(formatRows(table)).toEqual([{ value: '1.00' }, { value: '2.00' }, { value: '3.00' }]);
  });

  it('prints timestamps with every digit of their unit, and beyond 2^53 (INT96 from Spark) exactly', async () => {
    const file = await openParquet(await readFile(path.join(dataDir, 'int96_from_spark.parquet')));
    const table = await file.scan().toTable();
    const rows = formatRows(table).map((r) => r.a);
    // Microseconds kept; the row apache-arrow's get() cannot turn into a number is printed too.
    expect(rows[0]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}$/);
    expect(rows.every((r) => !(r ?? '').includes('e+'))).toBe(true);
    expect(() => table.getChildAt(0)?.get(5)).toThrow();
    expect(typeof valueAt(table.getChildAt(0), 5)).toBe('bigint');
    // Past what a Date holds (year 290,000): the exact count, with its unit.
    expect(rows[5]).toBe('9089380393200000000 (microseconds since 1970)');
  });

  it('takes a window of rows', () => {
    const table = new Table(new Schema([new Field('n', new Int64())]), undefined);
    expect(formatRows(table)).toEqual([]);
    const numbers = new Table({ n: vectorFromArray([1n, 2n, 3n, 4n], new Int64()) });
    expect(formatRows(numbers, { offset: 1, limit: 2 })).toEqual([{ n: '2' }, { n: '3' }]);
  });
});
