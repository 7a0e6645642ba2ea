import {
  Field,
  Float32,
  Float64,
  Int8,
  Int32,
  Int64,
  LargeUtf8,
  makeData,
  RecordBatch,
  Schema,
  Struct,
  TimestampMicrosecond,
  TimestampMillisecond,
  TimestampNanosecond,
  Uint32,
  Uint64,
  Utf8,
  type Vector,
  vectorFromArray,
} from 'apache-arrow';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadArrow } from '../arrow.js';
import { ParquetSkimError } from '../errors.js';
import { conformBatch, unifySchemas, widen } from './schema.js';

const schema = (...fields: Array<[string, ConstructorParameters<typeof Field>[1], boolean?]>) =>
  new Schema(fields.map(([name, type, nullable]) => new Field(name, type, nullable ?? true)));

function batchOf(columns: Record<string, Vector>): RecordBatch {
  const fields = Object.entries(columns).map(([name, v]) => new Field(name, v.type, true));
  const rows = Object.values(columns)[0]?.length ?? 0;
  const children = Object.values(columns).map((v) => v.data[0]);
  return new RecordBatch(
    new Schema(fields),
    makeData({ type: new Struct(fields), length: rows, nullCount: 0, children: children as never }),
  );
}

// The module reaches apache-arrow as the package does, once it has loaded (arrow.ts).
beforeAll(async () => {
  await loadArrow();
});
describe('one schema for the files of a dataset', () => {
  it('widens integers, floats, strings and timestamp units', () => {
    expect(String(widen(new Int32(), new Int64()))).toBe('Int64');
    expect(String(widen(new Int8(), new Int32()))).toBe('Int32');
    expect(String(widen(new Uint32(), new Int32()))).toBe('Int64');
    expect(widen(new Uint64(), new Int64())).toBeNull();
    expect(String(widen(new Float32(), new Float64()))).toBe('Float64');
    expect(String(widen(new Utf8(), new LargeUtf8()))).toBe('LargeUtf8');
    expect(String(widen(new TimestampMillisecond('UTC'), new TimestampNanosecond('UTC')))).toBe(
      String(new TimestampNanosecond('UTC')),
    );
    expect(widen(new TimestampMillisecond('UTC'), new TimestampMillisecond(null))).toBeNull();
    expect(widen(new Int32(), new Utf8())).toBeNull();
  });

  it('takes the union by name, nullable where a file lacks a column, partitions last', () => {
    const { schema: unified } = unifySchemas(
      [
        { path: 'a.parquet', schema: schema(['id', new Int32(), false], ['x', new Float32()]) },
        { path: 'b.parquet', schema: schema(['id', new Int64(), false], ['s', new Utf8()]) },
      ],
      [{ name: 'year', type: 'int64' }],
    );
    expect(unified.fields.map((f) => `${f.name}:${f.type}:${f.nullable}`)).toEqual([
      'id:Int64:false',
      'x:Float32:true',
      's:Utf8:true',
      'year:Int64:true',
    ]);
  });

  it('leaves out a column whose types conflict, keeping the error naming it and both files', () => {
    const { schema: unified, conflicts } = unifySchemas(
      [
        { path: 'a.parquet', schema: schema(['id', new Int32()], ['x', new Int32()]) },
        { path: 'b.parquet', schema: schema(['id', new Utf8()], ['x', new Int32()]) },
        { path: 'c.parquet', schema: schema(['id', new Int32()]) },
      ],
      [],
    );
    expect(unified.fields.map((f) => f.name)).toEqual(['x']);
    const error = conflicts.get('id') as ParquetSkimError;
    expect(error.code).toBe('SCHEMA_MISMATCH');
    expect(error.message).toContain("'id'");
    expect(error.message).toContain("'a.parquet'");
    expect(error.message).toContain("'b.parquet'");
    const clash = catching(() =>
      unifySchemas([{ path: 'a.parquet', schema: schema(['year', new Int32()]) }], [{ name: 'year', type: 'int64' }]),
    );
    expect(clash.code).toBe('SCHEMA_MISMATCH');
  });
});

describe('a file batch in the dataset schema', () => {
  it('converts widened columns, fills missing ones with nulls and appends partitions', () => {
    const batch = batchOf({
      id: vectorFromArray([1, null, 3], new Int32()),
      x: vectorFromArray([1.5, 2.5, null], new Float32()),
      s: vectorFromArray(['a', 'bé', null], new Utf8()),
      t: vectorFromArray([new Date(1000), null, new Date(3000)], new TimestampMillisecond()),
    });
    const target = schema(
      ['id', new Int64()],
      ['x', new Float64()],
      ['s', new LargeUtf8()],
      ['t', new TimestampMicrosecond()],
      ['gone', new Utf8()],
      ['year', new Int64()],
      ['region', new Utf8()],
    );
    const out = conformBatch(
      batch,
      target,
      new Map<string, bigint | string | null>([
        ['year', 1994n],
        ['region', 'EU'],
      ]),
    );
    expect(out.schema.fields.map((f) => String(f.type))).toEqual(target.fields.map((f) => String(f.type)));
    expect([...(out.getChild('id') ?? [])]).toEqual([1n, null, 3n]);
    expect([...(out.getChild('x') ?? [])]).toEqual([1.5, 2.5, null]);
    expect([...(out.getChild('s') ?? [])]).toEqual(['a', 'bé', null]);
    const micros = out.getChild('t')?.data[0]?.values as BigInt64Array;
    expect([micros[0], micros[2]]).toEqual([1_000_000n, 3_000_000n]);
    expect(out.getChild('t')?.get(1)).toBeNull();
    expect([...(out.getChild('gone') ?? [])]).toEqual([null, null, null]);
    expect([...(out.getChild('year') ?? [])]).toEqual([1994n, 1994n, 1994n]);
    expect([...(out.getChild('region') ?? [])]).toEqual(['EU', 'EU', 'EU']);
  });

  it('passes a batch already in the dataset schema through untouched', () => {
    const batch = batchOf({ id: vectorFromArray([1, 2], new Int32()) });
    expect(conformBatch(batch, batch.schema, new Map())).toBe(batch);
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
