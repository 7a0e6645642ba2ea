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

/**
 * The datasets' partition-filtered query: ship months March to May 1995 — on the hive dataset by
 * its partition columns, on the unpartitioned one by `l_shipdate` (its files' statistics).
 */
export const PART_WHERE = {
  hive: 'year = 1995 AND month BETWEEN 3 AND 5',
  flat: "l_shipdate >= DATE '1995-03-01' AND l_shipdate < DATE '1995-06-01'",
};

/** Query ids → what the tables and Markdown call them. */
export const QUERY_LABELS = {
  q6: 'TPC-H Q6',
  lookup: `l_orderkey = ${LOOKUP_KEY}, all columns`,
  contains: 'string contains, filter column projected',
  first100: 'first 100 rows, all columns',
  scan3: 'full scan of 3 columns',
  part: 'Σ l_quantity, count, ship months 1995-03…05 (datasets: partition columns where there are)',
  count: 'count(*) (datasets)',
};

/**
 * The SQL DuckDB runs for `query` on `table` read from `source` (a `read_parquet(…)` call); `hive`:
 * the source is a hive-partitioned dataset.
 */
export function duckdbSql(query, table, source, hive = false) {
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
    case 'part':
      return `SELECT sum(l_quantity) AS quantity, count(*) AS n FROM ${source} WHERE ${PART_WHERE[hive ? 'hive' : 'flat']}`;
    case 'count':
      return `SELECT count(*) AS n FROM ${source}`;
    default:
      throw new Error(`unknown query ${query}`);
  }
}
