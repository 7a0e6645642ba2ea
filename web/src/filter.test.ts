import { describe, expect, it } from 'vitest';
import { and, col, not, or } from './filter.js';

describe('filter builder', () => {
  it('builds the same JSON AST the SQL parser produces', () => {
    const q6 = col('l_shipdate')
      .gte('1994-01-01')
      .and(col('l_shipdate').lt('1995-01-01'), col('l_discount').between(0.05, 0.07), col('l_quantity').lt(24));
    expect(JSON.parse(JSON.stringify(q6))).toEqual({
      op: 'and',
      args: [
        { op: 'gte', column: 'l_shipdate', value: '1994-01-01' },
        { op: 'lt', column: 'l_shipdate', value: '1995-01-01' },
        { op: 'between', column: 'l_discount', low: 0.05, high: 0.07 },
        { op: 'lt', column: 'l_quantity', value: 24 },
      ],
    });
  });

  it('covers every operator and converts bigint and Date values', () => {
    const expr = or(
      not(col('a.b').in([1n, 2, 'x'])),
      and(col('s').like('a%'), col('s').startsWith('p'), col('s').endsWith('q'), col('s').contains('r')),
      col('t').eq(new Date(Date.UTC(2024, 0, 2))),
      col('n').isNull().or(col('n').isNotNull().not()),
      col('x').ne(true).and(col('x').lte(1), col('x').gt(2)),
    );
    const ast = expr.toJSON();
    expect(ast.op).toBe('or');
    expect(JSON.stringify(ast)).toContain('{"op":"not","arg":{"op":"in","column":"a.b","values":["1",2,"x"]}}');
    expect(JSON.stringify(ast)).toContain('"value":"2024-01-02T00:00:00.000Z"');
    expect(JSON.stringify(ast)).toContain('{"op":"like","column":"s","pattern":"a%"}');
  });
});

describe('aggregate partials', () => {
  it('take kind and scale from the partial that has a value', async () => {
    const { finish, mergePartials } = await import('./aggregate.js');
    const empty = { kind: 'int' as const, scale: 0, dataType: '', count: 0, value: null };
    const decimal = { kind: 'int' as const, scale: 4, dataType: 'Decimal128(31, 4)', count: 2, value: '141000' };
    const merged = mergePartials('sum', empty, decimal);
    expect(finish('sum', merged)).toBe('14.1000');
    const floats = mergePartials('max', empty, {
      kind: 'float',
      scale: 0,
      dataType: 'Float64',
      count: 1,
      value: 'Infinity',
    });
    expect(finish('max', floats)).toBe(Number.POSITIVE_INFINITY);
    expect(finish('sum', mergePartials('sum', decimal, decimal))).toBe('28.2000');
  });
});
