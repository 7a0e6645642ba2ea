/**
 * DuckDB-WASM 1.28.0 (the last release with Parquet built in; later ones fetch the extension at
 * run time): the bundle `selectBundle` picks, then one SQL query over `read_parquet('<url>')` — DuckDB's own
 * HTTP file system issues the range requests (a HEAD first) and prunes row groups by statistics.
 * The result arrives as an Arrow table (apache-arrow 13).
 */
import * as duckdb from 'duckdb-wasm-1-28';
import { canonArrow } from './canonical.mjs';
import { duckdbSql } from './queries.mjs';

/**
 * The bundles, served as published (tests/bench/peers.mjs mounts the package's dist/ at
 * /duckdb/). Not `coi` (pthreads): in 1.28 its pthread worker fails with "startWorker is not
 * defined" (duckdb-wasm#939), so DuckDB runs on one thread (`eh`, wasm exceptions).
 */
const dist = new URL('/duckdb/', location.href).href;
const BUNDLES = {
  mvp: { mainModule: `${dist}duckdb-mvp.wasm`, mainWorker: `${dist}duckdb-browser-mvp.worker.js` },
  eh: { mainModule: `${dist}duckdb-eh.wasm`, mainWorker: `${dist}duckdb-browser-eh.worker.js` },
};

export async function setup({ url, urls, hive, query, table }) {
  const bundle = await duckdb.selectBundle(BUNDLES);
  const worker = new Worker(bundle.mainWorker);
  const db = new duckdb.AsyncDuckDB(new duckdb.VoidLogger(), worker);
  await db.instantiate(bundle.mainModule, bundle.pthreadWorker);
  await db.open({});
  const conn = await db.connect();
  const absolute = (u) => `'${new URL(u, location.href).href}'`;
  // A dataset: its files as one list, with hive_partitioning where the paths carry partitions.
  const source =
    urls === undefined
      ? `read_parquet(${absolute(url)})`
      : `read_parquet([${urls.map(absolute).join(', ')}], hive_partitioning = ${hive === true})`;
  const sql = duckdbSql(query, table, source, hive === true);
  const run = async () => {
    const result = await conn.query(sql);
    if (query === 'q6') return { revenue: result.getChild('revenue').data[0] };
    if (query === 'count') return { count: result.getChild('n').get(0) };
    if (query === 'part') {
      // The decimal sum, as cents (canonArrow's form of a decimal).
      return {
        rows: result.getChild('n').get(0),
        quantity: BigInt(canonArrow(result.getChild('quantity').data[0], 0)),
        scale: 2,
      };
    }
    return { batches: result.batches };
  };
  const dispose = async () => {
    await conn.close();
    await db.terminate();
  };
  return { run, dispose, info: { bundle: bundle === BUNDLES.eh ? 'eh' : 'mvp' } };
}
