/**
 * The typed filter builder: `col('l_quantity').lt(24).and(col('l_shipdate').gte('1994-01-01'))`.
 *
 * It produces the same JSON AST as the SQL front end (`filter: "l_quantity < 24 AND …"`, parsed
 * in Rust), so both are type-checked against the file's schema by the same code in the core.
 * Values are plain JSON: numbers, strings (dates, timestamps, decimals and 64-bit integers may be
 * written as strings, converted by the column's type), booleans; `bigint`s are sent as strings.
 */
import type { Expr, JsonValue } from './wasm/contract.js';

/** A literal in a filter. */
export type FilterValue = number | string | boolean | bigint | Date;

/** The JSON AST of a filter (what {@link FilterExpr.toJSON} returns): the core's `Expr`. */
export type FilterAst = Expr;

/** A boolean filter expression. */
export class FilterExpr {
  /** @internal */
  constructor(readonly ast: FilterAst) {}

  /** Both this and `other`. */
  and(...others: FilterExpr[]): FilterExpr {
    return and(this, ...others);
  }

  /** This or `other`. */
  or(...others: FilterExpr[]): FilterExpr {
    return or(this, ...others);
  }

  /** The negation of this. */
  not(): FilterExpr {
    return not(this);
  }

  /** The JSON AST, as sent to the core. */
  toJSON(): FilterAst {
    return this.ast;
  }
}

/** A column to compare; a dotted path reaches struct fields (`col('a.b')`). */
export class Column {
  /** @internal */
  constructor(readonly name: string) {}

  /** `column = value` */
  eq(value: FilterValue): FilterExpr {
    return this.cmp('eq', value);
  }
  /** `column != value` */
  ne(value: FilterValue): FilterExpr {
    return this.cmp('ne', value);
  }
  /** `column < value` */
  lt(value: FilterValue): FilterExpr {
    return this.cmp('lt', value);
  }
  /** `column <= value` */
  lte(value: FilterValue): FilterExpr {
    return this.cmp('lte', value);
  }
  /** `column > value` */
  gt(value: FilterValue): FilterExpr {
    return this.cmp('gt', value);
  }
  /** `column >= value` */
  gte(value: FilterValue): FilterExpr {
    return this.cmp('gte', value);
  }
  /** `column BETWEEN low AND high` (both ends included). */
  between(low: FilterValue, high: FilterValue): FilterExpr {
    return new FilterExpr({ op: 'between', column: this.name, low: json(low), high: json(high) });
  }
  /** `column IN (values…)` */
  in(values: readonly FilterValue[]): FilterExpr {
    return new FilterExpr({ op: 'in', column: this.name, values: values.map(json) });
  }
  /** `column IS NULL` */
  isNull(): FilterExpr {
    return new FilterExpr({ op: 'isNull', column: this.name });
  }
  /** `column IS NOT NULL` */
  isNotNull(): FilterExpr {
    return new FilterExpr({ op: 'isNotNull', column: this.name });
  }
  /** SQL `LIKE`: `%` matches any run of characters, `_` one character, `\` escapes. */
  like(pattern: string): FilterExpr {
    return new FilterExpr({ op: 'like', column: this.name, pattern });
  }
  /** The string starts with `prefix`. */
  startsWith(prefix: string): FilterExpr {
    return new FilterExpr({ op: 'startsWith', column: this.name, value: prefix });
  }
  /** The string ends with `suffix`. */
  endsWith(suffix: string): FilterExpr {
    return new FilterExpr({ op: 'endsWith', column: this.name, value: suffix });
  }
  /** The string contains `part`. */
  contains(part: string): FilterExpr {
    return new FilterExpr({ op: 'contains', column: this.name, value: part });
  }

  private cmp(op: 'eq' | 'ne' | 'lt' | 'lte' | 'gt' | 'gte', value: FilterValue): FilterExpr {
    return new FilterExpr({ op, column: this.name, value: json(value) });
  }
}

/** A column of the file, by name or dotted path. */
export function col(name: string): Column {
  return new Column(name);
}

/** All of `exprs`. */
export function and(...exprs: FilterExpr[]): FilterExpr {
  return new FilterExpr({ op: 'and', args: exprs.map((e) => e.ast) });
}

/** Any of `exprs`. */
export function or(...exprs: FilterExpr[]): FilterExpr {
  return new FilterExpr({ op: 'or', args: exprs.map((e) => e.ast) });
}

/** The negation of `expr`. */
export function not(expr: FilterExpr): FilterExpr {
  return new FilterExpr({ op: 'not', arg: expr.ast });
}

function json(value: FilterValue): JsonValue {
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof Date) return value.toISOString();
  return value;
}
