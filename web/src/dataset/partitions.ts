/**
 * Hive partitions: `key=value` path segments as typed columns, and a filter folded over them.
 *
 * A dataset written by Spark, DuckDB or pyarrow's `write_to_dataset` keeps one column out of its
 * files and in their paths (`year=1994/month=3/part-0.parquet`). Every file then holds one value
 * of that column, so a filter on it is decided per file, before any byte of the file is read:
 * {@link foldFilter} replaces each leaf on a column constant in the file — a partition column, or
 * a column the file lacks (nulls there) — by its truth value and simplifies. What is left is the
 * filter the file's own scan runs; `false` prunes the file.
 *
 * Folding follows SQL's three-valued logic. The filter is first put in negation normal form (every
 * `not` pushed down to a leaf), where `and` and `or` are monotone: a subexpression that is null can
 * never make the whole true, so for "does a row pass" null folds like false. A leaf whose value is
 * unknown (null) under a `not` stays null — `not (year = NULL)` passes no row either.
 *
 * Types are inferred over all files' values of a key: integers (int64) when every value is one,
 * dates when every value is `YYYY-MM-DD`, strings otherwise; `__HIVE_DEFAULT_PARTITION__` (and an
 * empty value) is null. An explicit `partitionSchema` overrides the inference.
 */

import { ParquetSkimError } from '../errors.js';
import type { FilterAst } from '../filter.js';
import type { JsonValue } from '../wasm/contract.js';

/** The type of a partition column. */
export type PartitionType = 'int64' | 'date' | 'string';

/** A partition value: `bigint` (int64), `'YYYY-MM-DD'` (date), a string, or null. */
export type PartitionValue = bigint | string | null;

/** A partition column, in path order. */
export interface PartitionColumn {
  name: string;
  type: PartitionType;
}

/** The value Hive, Spark and pyarrow write for a null partition. */
export const HIVE_NULL = '__HIVE_DEFAULT_PARTITION__';

const INTEGER = /^[+-]?\d+$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** The `key=value` segments of a path's directories (the file name itself is not one), decoded. */
export function hiveSegments(path: string): Array<[string, string]> {
  const segments = path.split(/[/\\]/).slice(0, -1);
  const pairs: Array<[string, string]> = [];
  for (const segment of segments) {
    const eq = segment.indexOf('=');
    if (eq <= 0) continue;
    pairs.push([decodePart(segment.slice(0, eq)), decodePart(segment.slice(eq + 1))]);
  }
  return pairs;
}

function decodePart(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * The partition columns of a dataset's paths and each file's values (by column). Every path must
 * name the same keys in the same order. `explicit` types the listed keys (the rest are inferred).
 */
export function inferPartitions(
  paths: readonly string[],
  explicit: Readonly<Record<string, PartitionType>> = {},
): { columns: PartitionColumn[]; values: PartitionValue[][] } {
  const segments = paths.map(hiveSegments);
  const keys = segments[0]?.map(([key]) => key) ?? [];
  segments.forEach((pairs, i) => {
    const these = pairs.map(([key]) => key);
    if (these.join('\u0000') !== keys.join('\u0000')) {
      throw new ParquetSkimError(
        'INVALID_ARGUMENT',
        `hive partitions differ between files: expected '${paths[0]}' and '${paths[i]}' to name the same ` +
          `keys (${keys.join(', ') || 'none'} against ${these.join(', ') || 'none'}); pass hivePartitioning: false ` +
          'to read the paths as they are',
      );
    }
  });
  for (const name of Object.keys(explicit)) {
    if (!keys.includes(name)) {
      throw new ParquetSkimError(
        'INVALID_ARGUMENT',
        `invalid option 'partitionSchema': '${name}' is not a partition key of the paths (they name ${keys.join(', ') || 'none'})`,
      );
    }
  }
  const raw = keys.map((_, k) => segments.map((pairs) => pairs[k]?.[1] ?? ''));
  const columns = keys.map((name, k): PartitionColumn => {
    const given = explicit[name];
    if (given !== undefined) {
      if (!['int64', 'date', 'string'].includes(given)) {
        throw new ParquetSkimError(
          'INVALID_ARGUMENT',
          `invalid option 'partitionSchema': '${name}' has type '${given}'; expected 'int64', 'date' or 'string'`,
        );
      }
      return { name, type: given };
    }
    return { name, type: inferType(raw[k] ?? []) };
  });
  const values = segments.map((_, file) =>
    columns.map((column, k) => parseValue(column, raw[k]?.[file] ?? '', paths[file] ?? '')),
  );
  return { columns, values };
}

function isNull(text: string): boolean {
  return text === '' || text === HIVE_NULL;
}

function inferType(texts: readonly string[]): PartitionType {
  const present = texts.filter((t) => !isNull(t));
  if (present.length === 0) return 'string';
  if (present.every((t) => INTEGER.test(t) && inInt64(BigInt(t)))) return 'int64';
  if (present.every((t) => validDate(t))) return 'date';
  return 'string';
}

function inInt64(value: bigint): boolean {
  return value >= INT64_MIN && value <= INT64_MAX;
}

function validDate(text: string): boolean {
  const m = DATE.exec(text);
  if (m === null) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(y, mo - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}

function parseValue(column: PartitionColumn, text: string, path: string): PartitionValue {
  if (isNull(text)) return null;
  const bad = (expected: string) =>
    new ParquetSkimError(
      'SCHEMA_MISMATCH',
      `partition '${column.name}' of '${path}' is '${text}': expected ${expected} (partitionSchema types it ${column.type})`,
    );
  switch (column.type) {
    case 'int64': {
      if (!INTEGER.test(text) || !inInt64(BigInt(text))) throw bad('a 64-bit integer');
      return BigInt(text);
    }
    case 'date':
      if (!validDate(text)) throw bad('a date, YYYY-MM-DD');
      return text;
    case 'string':
      return text;
  }
}

/** Days since 1970-01-01 of a `YYYY-MM-DD` date (as Arrow's `Date32` stores it). */
export function epochDays(date: string): number {
  const m = DATE.exec(date);
  if (m === null) return Number.NaN;
  return Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) / 86_400_000;
}

/**
 * A column that holds one value throughout a file: a partition column (`type` as inferred), or a
 * column the file lacks (`type: null`, value null).
 */
export interface Constant {
  type: PartitionType | null;
  value: PartitionValue;
}

/** What a filter comes to in one file. */
export type Folded = { kind: 'all' } | { kind: 'none' } | { kind: 'filter'; ast: FilterAst };

/** Three-valued truth; `undefined` for a leaf on a column that varies within the file. */
type Truth = boolean | null;

/**
 * Folds `ast` over the columns constant in one file: `all` (every row passes: no filter left),
 * `none` (no row can: skip the file) or the `filter` the file's scan still runs. A literal that
 * does not fit a partition column's type is a `TYPE_MISMATCH`.
 */
export function foldFilter(ast: FilterAst, constants: ReadonlyMap<string, Constant>): Folded {
  const folded = fold(negationNormalForm(ast, false), constants);
  if (folded === true) return { kind: 'all' };
  if (folded === false || folded === null) return { kind: 'none' };
  return { kind: 'filter', ast: folded };
}

/** Column names a filter reads. */
export function filterColumns(ast: FilterAst): string[] {
  const names = new Set<string>();
  const visit = (node: FilterAst): void => {
    if (node.op === 'and' || node.op === 'or') node.args.forEach(visit);
    else if (node.op === 'not') visit(node.arg);
    else names.add((node as Leaf).column);
  };
  visit(ast);
  return [...names];
}

/** Pushes every `not` down to a leaf (De Morgan); `negate` is whether the node sits under one. */
function negationNormalForm(ast: FilterAst, negate: boolean): FilterAst {
  switch (ast.op) {
    case 'and':
    case 'or': {
      const args = ast.args.map((arg) => negationNormalForm(arg, negate));
      const op = negate ? (ast.op === 'and' ? 'or' : 'and') : ast.op;
      return { op, args };
    }
    case 'not':
      return negationNormalForm(ast.arg, !negate);
    default:
      return negate ? { op: 'not', arg: ast } : ast;
  }
}

function fold(ast: FilterAst, constants: ReadonlyMap<string, Constant>): FilterAst | Truth {
  switch (ast.op) {
    case 'and':
    case 'or': {
      const isAnd = ast.op === 'and';
      const kept: FilterAst[] = [];
      for (const arg of ast.args) {
        const value = fold(arg, constants);
        // In negation normal form null decides like false (see the module doc).
        const truth = value === null ? false : value;
        if (truth === !isAnd) return truth;
        if (typeof truth !== 'boolean') kept.push(truth);
      }
      if (kept.length === 0) return isAnd;
      return kept.length === 1 ? (kept[0] as FilterAst) : { op: ast.op, args: kept };
    }
    case 'not': {
      const value = fold(ast.arg, constants);
      if (value === null) return null;
      return typeof value === 'boolean' ? !value : { op: 'not', arg: value };
    }
    default: {
      const leaf = ast as Leaf;
      const constant = constants.get(leaf.column);
      return constant === undefined ? leaf : leafTruth(leaf, constant);
    }
  }
}

type Leaf = Exclude<FilterAst, { op: 'and' | 'or' | 'not' }>;

/** The truth of a leaf over a column holding `constant` throughout the file. */
function leafTruth(leaf: Leaf, constant: Constant): Truth {
  if (leaf.op === 'isNull') return constant.value === null;
  if (leaf.op === 'isNotNull') return constant.value !== null;
  const { type, value } = constant;
  if (value === null || type === null) {
    // A column the file lacks, or a null partition: every comparison is unknown — but the
    // literals of a partition column are still checked against its type.
    if (type !== null) checkLiterals(leaf, type);
    return null;
  }
  const cmp = (literal: JsonValue) => compare(value, type, literal, leaf.column);
  switch (leaf.op) {
    case 'eq':
      return cmp(leaf.value) === 0;
    case 'ne':
      return cmp(leaf.value) !== 0;
    case 'lt':
      return cmp(leaf.value) < 0;
    case 'lte':
      return cmp(leaf.value) <= 0;
    case 'gt':
      return cmp(leaf.value) > 0;
    case 'gte':
      return cmp(leaf.value) >= 0;
    case 'between':
      return cmp(leaf.low) >= 0 && cmp(leaf.high) <= 0;
    case 'in':
      return leaf.values.map(cmp).some((c) => c === 0);
    case 'like':
    case 'startsWith':
    case 'endsWith':
    case 'contains':
      return stringMatch(leaf, textOf(value, type, leaf.column));
  }
}

function checkLiterals(leaf: Leaf, type: PartitionType): void {
  const literals: JsonValue[] =
    leaf.op === 'between'
      ? [leaf.low, leaf.high]
      : leaf.op === 'in'
        ? leaf.values
        : 'value' in leaf
          ? [leaf.value]
          : [];
  const probe: PartitionValue = type === 'int64' ? 0n : type === 'date' ? '1970-01-01' : '';
  if (leaf.op === 'like' || leaf.op === 'startsWith' || leaf.op === 'endsWith' || leaf.op === 'contains') {
    if (type !== 'string') textOf(probe, type, leaf.column);
    return;
  }
  for (const literal of literals) compare(probe, type, literal, leaf.column);
}

function mismatch(column: string, type: PartitionType, literal: unknown, expected: string): ParquetSkimError {
  return new ParquetSkimError(
    'TYPE_MISMATCH',
    `the filter compares partition column '${column}' (${type}) with ${JSON.stringify(literal)}: expected ${expected}`,
  );
}

/** Compares a partition value with a filter literal: negative, zero or positive. */
function compare(value: PartitionValue, type: PartitionType, literal: JsonValue, column: string): number {
  switch (type) {
    case 'int64': {
      const v = value as bigint;
      if (typeof literal === 'number' && Number.isFinite(literal)) {
        if (Number.isInteger(literal)) return sign(v - BigInt(literal));
        return sign(Number(v) - literal);
      }
      if (typeof literal === 'string' && INTEGER.test(literal.trim())) return sign(v - BigInt(literal.trim()));
      if (typeof literal === 'string' && literal.trim() !== '' && Number.isFinite(Number(literal))) {
        return sign(Number(v) - Number(literal));
      }
      throw mismatch(column, type, literal, 'a number');
    }
    case 'date': {
      if (typeof literal !== 'string' || !validDate(literal))
        throw mismatch(column, type, literal, "a date 'YYYY-MM-DD'");
      return codePointCompare(value as string, literal);
    }
    case 'string':
      if (typeof literal !== 'string') throw mismatch(column, type, literal, 'a string');
      return codePointCompare(value as string, literal);
  }
}

function sign(x: bigint | number): number {
  return x > 0 ? 1 : x < 0 ? -1 : 0;
}

/** Compares by code point: the byte order of UTF-8, as the core compares strings. */
function codePointCompare(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = (x[i]?.codePointAt(0) ?? 0) - (y[i]?.codePointAt(0) ?? 0);
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

function textOf(value: PartitionValue, type: PartitionType, column: string): string {
  if (type !== 'string') {
    throw new ParquetSkimError(
      'TYPE_MISMATCH',
      `the filter matches text in partition column '${column}', of type ${type}: expected a string column`,
    );
  }
  return value as string;
}

function stringMatch(leaf: Leaf, text: string): boolean {
  switch (leaf.op) {
    case 'startsWith':
      return text.startsWith(leaf.value);
    case 'endsWith':
      return text.endsWith(leaf.value);
    case 'contains':
      return text.includes(leaf.value);
    case 'like':
      return likeRegExp(leaf.pattern).test(text);
    default:
      return false;
  }
}

/** SQL `LIKE` as a regular expression: `%` any run, `_` one character, `\` escapes. */
export function likeRegExp(pattern: string): RegExp {
  let source = '';
  const chars = [...pattern];
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i] as string;
    if (c === '\\' && i + 1 < chars.length) {
      source += escapeRegExp(chars[++i] as string);
    } else if (c === '%') source += '.*';
    else if (c === '_') source += '.';
    else source += escapeRegExp(c);
  }
  return new RegExp(`^${source}$`, 'su');
}

function escapeRegExp(c: string): string {
  return c.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');
}
