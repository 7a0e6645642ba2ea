/**
 * Aggregates over partition columns, decided per file.
 *
 * In one file a partition column is a constant (`year=1994/…`), so an aggregate of it needs none
 * of the file's bytes beyond what counting the rows that pass needs:
 * - of the column itself (`max(year)`, `count(region)`, `sum(year)`): the file's rows that pass,
 *   `n`, and the constant give the file's partial — `count` n (0 where the value is null),
 *   `sum` n × the value, `min` / `max` the value where n > 0. The file's tasks count the rows (a
 *   `count()` folded beside the file's other aggregates, or the footer's row count when no filter
 *   is left for the file); the partial is made here, as the core would make it for a column of
 *   that type, and merges with the other files' exactly.
 * - of arithmetic mixing it with the files' columns (`sum(l_extendedprice * year)`): the constant
 *   goes into the expression as a literal, which the core's arithmetic types like the column
 *   beside it.
 * A null partition value (`__HIVE_DEFAULT_PARTITION__`) makes the expression null in every row of
 * the file, as a column the file lacks does: the aggregate takes nothing from it.
 *
 * Arithmetic of partition columns and constants alone (`sum(year * 2)`) is refused before any
 * file is read, as the core refuses an aggregate of a constant; so is `sum` of a date or string
 * partition column, which the core refuses for such columns too.
 */
import { type AggregateAst, type ValueAst, valueColumns } from '../aggregate.js';
import { ParquetSkimError } from '../errors.js';
import type { Partial } from '../wasm/contract.js';
import type { Constant, PartitionColumn, PartitionType } from './partitions.js';

/** What one of the dataset's aggregates is in one file. */
export type FileAggregate =
  /** Folded by the file's tasks: the aggregate, with partition values put in as literals. */
  | { kind: 'tasks'; spec: AggregateAst }
  /** Made from the count of the file's rows that pass (see the module doc). */
  | { kind: 'rows'; partial: (rows: number) => Partial }
  /** Null in every row of the file: nothing to take from it. */
  | { kind: 'none' };

/**
 * Refuses, before any file is read, an aggregate the files cannot answer: arithmetic on partition
 * columns alone, and `sum` of a date or string partition column.
 */
export function checkPartitionAggregate(spec: AggregateAst, partitions: readonly PartitionColumn[]): void {
  const expr = spec.expr;
  if (expr === undefined) return;
  const partitionOf = (name: string) => partitions.find((p) => p.name === name);
  const names = valueColumns(expr);
  if (names.length === 0 || !names.every((name) => partitionOf(name) !== undefined)) return;
  if (!('column' in expr)) {
    throw new ParquetSkimError(
      'UNSUPPORTED',
      `an aggregate of arithmetic on partition columns alone (${names.map((n) => `'${n}'`).join(', ')}) is not supported: ` +
        'aggregate the partition column itself, or an expression with a column of the files',
    );
  }
  const partition = partitionOf(expr.column) as PartitionColumn;
  if (spec.fn === 'sum' && partition.type !== 'int64') {
    throw new ParquetSkimError(
      'INVALID_ARGUMENT',
      `sum needs numbers, but the partition column '${partition.name}' holds ${partition.type === 'date' ? 'dates' : 'strings'}; ` +
        'use count, min or max',
    );
  }
}

/**
 * What `spec` is in a file whose constant columns (its partition values, and nulls for columns
 * it lacks) are `constants`. Call {@link checkPartitionAggregate} first.
 */
export function aggregateInFile(spec: AggregateAst, constants: ReadonlyMap<string, Constant>): FileAggregate {
  const expr = spec.expr;
  if (expr === undefined) return { kind: 'tasks', spec };
  const names = valueColumns(expr);
  const constant = names.flatMap((name) => {
    const c = constants.get(name);
    return c === undefined ? [] : [c];
  });
  if (constant.length === 0) return { kind: 'tasks', spec };
  if (constant.some((c) => c.value === null)) return { kind: 'none' };
  if ('column' in expr) {
    const c = constants.get(expr.column) as Constant;
    return { kind: 'rows', partial: (rows) => partialOf(spec.fn, c, rows) };
  }
  return { kind: 'tasks', spec: { ...spec, expr: withLiterals(expr, constants) } };
}

/** `expr` with each constant column replaced by its value as text (the core parses it). */
function withLiterals(expr: ValueAst, constants: ReadonlyMap<string, Constant>): ValueAst {
  if ('column' in expr) {
    const c = constants.get(expr.column);
    return c === undefined ? expr : { value: String(c.value) };
  }
  if ('value' in expr) return expr;
  return { ...expr, left: withLiterals(expr.left, constants), right: withLiterals(expr.right, constants) };
}

/** The partial the core would report for `fn` over `rows` rows of a column holding `c` (not null). */
function partialOf(fn: AggregateAst['fn'], c: Constant, rows: number): Partial {
  const type = c.type as PartitionType;
  const dataType = type === 'int64' ? 'Int64' : type === 'date' ? 'Date32' : 'Utf8';
  const base = { kind: type === 'string' ? 'string' : 'int', scale: 0, dataType, count: rows } as const;
  if (fn === 'count') return { ...base, kind: 'count', value: null };
  if (rows === 0) return { ...base, value: null };
  if (type === 'int64') {
    const value = c.value as bigint;
    return { ...base, value: (fn === 'sum' ? value * BigInt(rows) : value).toString() };
  }
  if (type === 'date') return { ...base, value: String(Date.parse(`${c.value}T00:00:00Z`) / 86_400_000) };
  return { ...base, value: String(c.value) };
}
