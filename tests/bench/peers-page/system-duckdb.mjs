/**
 * DuckDB-WASM 1.28.0 (the last release with Parquet built in; later ones fetch the extension at
 * run time): the bundle `selectBundle` picks, then one SQL query over `read_parquet('<url>')` — DuckDB's own
 * HTTP file system issues the range requests (a HEAD first) and prunes row groups by statistics.
 * The result arrives as an Arrow table (apache-arrow 13).
 */
import * as duckdb from 'duckdb-wasm-1-28';
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

export async function setup({ url, query, table }) {
  const bundle = await duckdb.selectBundle(BUNDLES);
  const worker = new Worker(bundle.mainWorker);
  const db = new duckdb.AsyncDuckDB(new duckdb.VoidLogger(), worker);
  await db.instantiate(bundle.mainModule, bundle.pthreadWorker);
  await db.open({});
  const conn = await db.connect();
  const sql = duckdbSql(query, table, `read_parquet('${new URL(url, location.href).href}')`);
  const run = async () => {
    const result = await conn.query(sql);
    if (query === 'q6') return { revenue: result.getChild('revenue').data[0] };
    return { batches: result.batches };
  };
  const dispose = async () => {
    await conn.close();
    await db.terminate();
  };
  return { run, dispose, info: { bundle: bundle === BUNDLES.eh ? 'eh' : 'mvp' } };
}
