import { describe, expect, it } from 'vitest';
import { count, expr, finish, max, min, sum } from '../aggregate.js';
import { col } from '../filter.js';
import { aggregateInFile, checkPartitionAggregate } from './partition-aggregates.js';
import type { Constant } from './partitions.js';

const partitions = [
  { name: 'year', type: 'int64' as const },
  { name: 'day', type: 'date' as const },
  { name: 'region', type: 'string' as const },
];
const file = new Map<string, Constant>([
  ['year', { type: 'int64', value: 1994n }],
  ['day', { type: 'date', value: '1994-03-02' }],
  ['region', { type: 'string', value: 'EU' }],
  // A column this file lacks.
  ['l_tax', { type: null, value: null }],
]);

describe('aggregates over partition columns', () => {
  it('refuses arithmetic on partition columns alone, and sums of dates or strings', () => {
    expect(() => checkPartitionAggregate(sum(expr(col('year')).mul(2)), partitions)).toThrow(
      expect.objectContaining({ code: 'UNSUPPORTED' }),
    );
    expect(() => checkPartitionAggregate(sum(col('day')), partitions)).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT', message: expect.stringContaining('holds dates') }),
    );
    for (const ok of [sum(col('year')), max(col('day')), min(col('region')), sum(expr(col('x')).mul(col('year')))]) {
      expect(() => checkPartitionAggregate(ok, partitions)).not.toThrow();
    }
  });

  it('makes a partition column’s partial from the rows that pass, typed as the core would', () => {
    const partial = (spec: Parameters<typeof aggregateInFile>[0], rows: number) => {
      const inFile = aggregateInFile(spec, file);
      if (inFile.kind !== 'rows') throw new Error(`expected rows, got ${inFile.kind}`);
      return inFile.partial(rows);
    };
    expect(finish('sum', partial(sum(col('year')), 3))).toBe(5982n);
    expect(finish('count', partial(count(col('region')), 3))).toBe(3);
    expect(finish('max', partial(max(col('day')), 1))).toBe('1994-03-02');
    expect(finish('min', partial(min(col('region')), 2))).toBe('EU');
    expect(finish('min', partial(min(col('year')), 0))).toBeNull();
  });

  it('folds the rest in the tasks: the columns as they are, partition values as literals; nulls give nothing', () => {
    expect(aggregateInFile(count(), file)).toEqual({ kind: 'tasks', spec: count() });
    expect(aggregateInFile(sum(col('l_quantity')), file)).toEqual({ kind: 'tasks', spec: sum(col('l_quantity')) });
    expect(aggregateInFile(sum(expr(col('l_quantity')).mul(col('year'))), file)).toEqual({
      kind: 'tasks',
      spec: { fn: 'sum', expr: { op: 'mul', left: { column: 'l_quantity' }, right: { value: '1994' } } },
    });
    expect(aggregateInFile(sum(col('l_tax')), file)).toEqual({ kind: 'none' });
    const nullRegion = new Map(file).set('region', { type: 'string', value: null });
    expect(aggregateInFile(max(col('region')), nullRegion)).toEqual({ kind: 'none' });
  });
});
