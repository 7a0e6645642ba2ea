/**
 * The benchmark's queries, shared by the page (tests/bench/peers-page) and the driver
 * (tests/bench/peers.mjs): what each asks, as SQL for parquet-skim and DuckDB, and the pieces the
 * JS-side systems need (columns, the key, a regular expression for `LIKE`).
 */

/** Lookup key: `l_orderkey` of row 3,000,000 of TPC-H SF1, in the middle of the file. */
export const LOOKUP_KEY = 3000323n;

export const Q6_WHERE =
  "l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01' AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24";

/** String-contains filters: the filtered column is also returned. */
export const CONTAINS = {
  lineitem: {
    columns: ['l_orderkey', 'l_comment'],
    column: 'l_comment',
    like: '%special%requests%',
    regex: /special.*requests/,
  },
  hits: { columns: ['URL', 'Title'], column: 'URL', like: '%google%', regex: /google/ },
};

/** Full scans of three columns. */
export const SCAN3 = { lineitem: ['l_quantity', 'l_shipdate', 'l_returnflag'] };

/** Query ids → what the tables and Markdown call them. */
export const QUERY_LABELS = {
  q6: 'TPC-H Q6',
  lookup: `l_orderkey = ${LOOKUP_KEY}, all columns`,
  contains: 'string contains, filter column projected',
  first100: 'first 100 rows, all columns',
  scan3: 'full scan of 3 columns',
};

/** The SQL DuckDB runs for `query` on `table` read from `source` (a `read_parquet(…)` call). */
export function duckdbSql(query, table, source) {
  switch (query) {
    case 'q6':
      return `SELECT sum(l_extendedprice * l_discount) AS revenue FROM ${source} WHERE ${Q6_WHERE}`;
    case 'lookup':
      return `SELECT * FROM ${source} WHERE l_orderkey = ${LOOKUP_KEY}`;
    case 'contains': {
      const c = CONTAINS[table];
      return `SELECT ${c.columns.join(', ')} FROM ${source} WHERE ${c.column} LIKE '${c.like}'`;
    }
    case 'first100':
      return `SELECT * FROM ${source} LIMIT 100`;
    case 'scan3':
      return `SELECT ${SCAN3[table].join(', ')} FROM ${source}`;
    default:
      throw new Error(`unknown query ${query}`);
  }
}
