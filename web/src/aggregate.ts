/**
 * Aggregates computed inside the read tasks: `sum(col('l_extendedprice').mul(col('l_discount')))`.
 *
 * Each task decodes, filters and folds its rows into partial results in the worker (the rows
 * never leave it); {@link mergePartials} combines the partials exactly — integers and decimals
 * with `bigint` — and {@link finish} presents them: counts as numbers, integer sums/minima/maxima
 * as `bigint`, decimals as exact decimal text, floats as numbers, strings as strings.
 */
import { Column } from './filter.js';
import type { AggregateSpec, Partial, ValueExpr as ValueExprJson } from './wasm/contract.js';

/** The JSON form of a value expression (the core's `ValueExpr`). */
export type ValueAst = ValueExprJson;

/** An arithmetic expression of columns and constants. */
export class ValueExpr {
  /** @internal */
  constructor(readonly ast: ValueAst) {}
  /** `this + other` */
  add(other: Operand): ValueExpr {
    return arith('add', this, other);
  }
  /** `this - other` */
  sub(other: Operand): ValueExpr {
    return arith('sub', this, other);
  }
  /** `this * other` */
  mul(other: Operand): ValueExpr {
    return arith('mul', this, other);
  }
  /** `this / other` */
  div(other: Operand): ValueExpr {
    return arith('div', this, other);
  }
  toJSON(): ValueAst {
    return this.ast;
  }
}

/** What arithmetic accepts: a column, an expression, or a constant. */
export type Operand = Column | ValueExpr | number | string;

function operand(x: Operand): ValueAst {
  if (x instanceof Column) return { column: x.name };
  if (x instanceof ValueExpr) return x.ast;
  return { value: x };
}

function arith(op: 'add' | 'sub' | 'mul' | 'div', left: Operand, right: Operand): ValueExpr {
  return new ValueExpr({ op, left: operand(left), right: operand(right) });
}

/** Arithmetic on columns: `expr(col('a')).mul(col('b'))`, or `col('a').mul(...)` directly. */
export function expr(x: Operand): ValueExpr {
  return new ValueExpr(operand(x));
}

/** The column names a value expression reads (none for `undefined`, `count(*)`'s). */
export function valueColumns(ast: ValueAst | undefined): string[] {
  if (ast === undefined) return [];
  if ('column' in ast) return [ast.column];
  if ('value' in ast) return [];
  return [...valueColumns(ast.left), ...valueColumns(ast.right)];
}

/** An aggregate: what to compute over the filtered rows (the core's `AggregateSpec`). */
export type AggregateAst = AggregateSpec;

/** `count(*)`, or the non-null values of `x`. */
export function count(x?: Operand): AggregateAst {
  return x === undefined ? { fn: 'count' } : { fn: 'count', expr: operand(x) };
}
/** The sum of `x` (exact for integers and decimals). */
export function sum(x: Operand): AggregateAst {
  return { fn: 'sum', expr: operand(x) };
}
/** The smallest `x` (floats in IEEE total order: NaN is largest). */
export function min(x: Operand): AggregateAst {
  return { fn: 'min', expr: operand(x) };
}
/** The largest `x`. */
export function max(x: Operand): AggregateAst {
  return { fn: 'max', expr: operand(x) };
}

/** A partial result, as a task reports it (the core's `aggregate::Partial`). */
export type { Partial };

/** The value of an aggregate. */
export type AggregateValue = number | bigint | string | null;

/** Combines two partials of the same aggregate. */
export function mergePartials(fn: AggregateAst['fn'], a: Partial, b: Partial): Partial {
  // A partial with no value (a task whose rows were all filtered out) knows nothing about the
  // type: take kind, scale and type from the other one.
  if (a.value === null) return { ...b, count: a.count + b.count };
  if (b.value === null) return { ...a, count: a.count + b.count };
  const merged: Partial = { ...a, count: a.count + b.count };
  if (fn === 'count') return merged;
  const pick = (first: boolean) => (first ? a.value : b.value);
  if (a.kind === 'int') {
    const [x, y] = [BigInt(a.value), BigInt(b.value)];
    merged.value = fn === 'sum' ? (x + y).toString() : pick(fn === 'min' ? x <= y : x >= y);
  } else if (a.kind === 'float') {
    const [x, y] = [Number(a.value), Number(b.value)];
    merged.value = fn === 'sum' ? String(x + y) : pick(fn === 'min' ? totalLess(x, y) : !totalLess(x, y));
  } else {
    merged.value = pick(fn === 'min' ? a.value <= b.value : a.value >= b.value);
  }
  return merged;
}

/** IEEE total order for the values a partial can hold (NaN above everything). */
function totalLess(x: number, y: number): boolean {
  if (Number.isNaN(x)) return false;
  if (Number.isNaN(y)) return true;
  return x < y || (x === y && Object.is(x, -0) && Object.is(y, 0));
}

/** The presented value of a merged partial. */
export function finish(fn: AggregateAst['fn'], p: Partial): AggregateValue {
  if (fn === 'count') return p.count;
  if (p.value === null) return null;
  switch (p.kind) {
    case 'float':
      return Number(p.value);
    case 'string':
      return p.value;
    default: {
      if (p.scale > 0) return decimalText(BigInt(p.value), p.scale);
      if (p.dataType === 'Date32') return new Date(Number(p.value) * 86_400_000).toISOString().slice(0, 10);
      return BigInt(p.value);
    }
  }
}

function decimalText(unscaled: bigint, scale: number): string {
  const negative = unscaled < 0n;
  const digits = (negative ? -unscaled : unscaled).toString().padStart(scale + 1, '0');
  return `${negative ? '-' : ''}${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
}
