import { describe, expect, it } from 'vitest';
import { ParquetSkimError } from '../errors.js';
import { and, col, not, or } from '../filter.js';
import { type Constant, foldFilter, hiveSegments, inferPartitions, likeRegExp } from './partitions.js';

const constants = (entries: Record<string, Constant>) => new Map(Object.entries(entries));
const year = (value: bigint | null): Constant => ({ type: 'int64', value });
const region = (value: string | null): Constant => ({ type: 'string', value });
const missing: Constant = { type: null, value: null };

describe('hive paths', () => {
  it('reads key=value directory segments, decoded, and ignores the file name', () => {
    expect(hiveSegments('s3/bucket/year=1994/month=3/part-0.parquet')).toEqual([
      ['year', '1994'],
      ['month', '3'],
    ]);
    expect(hiveSegments('city=S%C3%A3o%20Paulo/a=b=c/x.parquet')).toEqual([
      ['city', 'São Paulo'],
      ['a', 'b=c'],
    ]);
    expect(hiveSegments('dir/k=v.parquet')).toEqual([]);
  });

  it('infers int64, date and string types over all files, with nulls', () => {
    const { columns, values } = inferPartitions([
      'year=1994/day=1994-01-02/tag=7/a.parquet',
      'year=__HIVE_DEFAULT_PARTITION__/day=1995-12-31/tag=x/b.parquet',
    ]);
    expect(columns).toEqual([
      { name: 'year', type: 'int64' },
      { name: 'day', type: 'date' },
      { name: 'tag', type: 'string' },
    ]);
    expect(values).toEqual([
      [1994n, '1994-01-02', '7'],
      [null, '1995-12-31', 'x'],
    ]);
    // Not a real date, or an integer past int64: the next type that fits.
    expect(inferPartitions(['d=1994-02-30/a.parquet']).columns[0]?.type).toBe('string');
    expect(inferPartitions(['n=9223372036854775808/a.parquet']).columns[0]?.type).toBe('string');
  });

  it('takes explicit types, and rejects a value that does not fit them', () => {
    expect(inferPartitions(['year=1994/a.parquet'], { year: 'string' }).values).toEqual([['1994']]);
    const error = catching(() => inferPartitions(['year=1994/a.parquet', 'year=x/b.parquet'], { year: 'int64' }));
    expect(error.code).toBe('SCHEMA_MISMATCH');
    expect(error.message).toContain("'year=x/b.parquet'");
    expect(catching(() => inferPartitions(['year=1994/a.parquet'], { month: 'int64' })).code).toBe('INVALID_ARGUMENT');
  });

  it('refuses paths that name different keys, naming both files', () => {
    const error = catching(() => inferPartitions(['year=1994/a.parquet', 'month=3/b.parquet']));
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.message).toContain('year=1994/a.parquet');
    expect(error.message).toContain('month=3/b.parquet');
  });
});

describe('folding a filter over a file', () => {
  it('decides leaves on partition columns and keeps the rest', () => {
    const c = constants({ year: year(1994n), region: region('EU') });
    expect(foldFilter(col('year').eq(1994).toJSON(), c)).toEqual({ kind: 'all' });
    expect(foldFilter(col('year').gt('1994').toJSON(), c)).toEqual({ kind: 'none' });
    expect(foldFilter(col('year').between(1990, 1994).toJSON(), c)).toEqual({ kind: 'all' });
    expect(foldFilter(col('region').in(['US', 'EU']).toJSON(), c)).toEqual({ kind: 'all' });
    expect(foldFilter(col('region').like('E_').toJSON(), c)).toEqual({ kind: 'all' });
    expect(foldFilter(col('year').lt(1994.5).toJSON(), c)).toEqual({ kind: 'all' });
    const rest = col('x').lt(3).toJSON();
    expect(foldFilter(and(col('year').eq(1994), col('x').lt(3)).toJSON(), c)).toEqual({ kind: 'filter', ast: rest });
    expect(foldFilter(and(col('year').eq(1995), col('x').lt(3)).toJSON(), c)).toEqual({ kind: 'none' });
    expect(foldFilter(or(col('year').eq(1994), col('x').lt(3)).toJSON(), c)).toEqual({ kind: 'all' });
    expect(foldFilter(or(col('year').eq(1995), col('x').lt(3)).toJSON(), c)).toEqual({ kind: 'filter', ast: rest });
  });

  it('pushes not down to the leaves', () => {
    const c = constants({ year: year(1994n) });
    expect(foldFilter(not(and(col('year').eq(1994), col('x').lt(3))).toJSON(), c)).toEqual({
      kind: 'filter',
      ast: { op: 'not', arg: col('x').lt(3).toJSON() },
    });
    expect(foldFilter(not(or(col('year').eq(1994), col('x').lt(3))).toJSON(), c)).toEqual({ kind: 'none' });
  });

  it('follows three-valued logic for null partitions and missing columns', () => {
    const c = constants({ year: year(null), gone: missing });
    expect(foldFilter(col('year').eq(1994).toJSON(), c)).toEqual({ kind: 'none' });
    expect(foldFilter(not(col('year').eq(1994)).toJSON(), c)).toEqual({ kind: 'none' });
    expect(foldFilter(col('year').isNull().toJSON(), c)).toEqual({ kind: 'all' });
    expect(foldFilter(col('gone').isNotNull().toJSON(), c)).toEqual({ kind: 'none' });
    expect(foldFilter(or(col('gone').gt(3), col('x').lt(3)).toJSON(), c)).toEqual({
      kind: 'filter',
      ast: col('x').lt(3).toJSON(),
    });
    // NOT (NULL AND x < 3) is true exactly where x >= 3 (x < 3 false): kept as NOT x < 3.
    expect(foldFilter(not(and(col('year').eq(1), col('x').lt(3))).toJSON(), c)).toEqual({
      kind: 'filter',
      ast: { op: 'not', arg: col('x').lt(3).toJSON() },
    });
  });

  it('types the literals by the partition column, even where the value is null', () => {
    expect(catching(() => foldFilter(col('year').eq('abc').toJSON(), constants({ year: year(1n) }))).code).toBe(
      'TYPE_MISMATCH',
    );
    expect(catching(() => foldFilter(col('year').eq('abc').toJSON(), constants({ year: year(null) }))).code).toBe(
      'TYPE_MISMATCH',
    );
    expect(catching(() => foldFilter(col('region').eq(5).toJSON(), constants({ region: region('EU') }))).code).toBe(
      'TYPE_MISMATCH',
    );
    const day = constants({ day: { type: 'date', value: '1994-03-01' } });
    expect(foldFilter(col('day').gte('1994-01-01').toJSON(), day)).toEqual({ kind: 'all' });
    expect(catching(() => foldFilter(col('day').contains('94').toJSON(), day)).code).toBe('TYPE_MISMATCH');
  });

  it('matches LIKE as the core does', () => {
    expect(likeRegExp('a_c').test('aéc')).toBe(true);
    expect(likeRegExp('a\\%c').test('a%c')).toBe(true);
    expect(likeRegExp('a\\%c').test('abc')).toBe(false);
    expect(likeRegExp('%.%').test('x.y')).toBe(true);
    expect(likeRegExp('%.%').test('xy')).toBe(false);
  });
});

function catching(run: () => unknown): ParquetSkimError {
  try {
    run();
  } catch (error) {
    if (error instanceof ParquetSkimError) return error;
    throw error;
  }
  throw new Error('expected a ParquetSkimError');
}
