/**
 * parquet-skim: its public API as an app uses it — `createReader()` (defaults: a worker per core,
 * 64 MiB cache), `reader.open(url)`, then filter/limit pushdown in `file.scan`, and Q6 folded
 * inside the workers by `file.aggregate`.
 * - `inMemory`: open the whole file's bytes instead of the URL (fetched before the clock starts);
 * - `warm`: run the query before the timed run (on the page's instance while the workers start,
 *   then once more with the workers up), on another file identity (the bytes opened again, or
 *   the URL with a query string), so the cross-scan cache serves the timed run nothing.
 * With both, it is the counterpart of the native runs (crate/core/examples/peers_native.rs, also
 * timed after a warm-up run).
 */
import { col, count, createReader, expr, sum } from 'parquet-skim';
import { CONTAINS, LOOKUP_KEY, PART_WHERE, Q6_WHERE, SCAN3 } from './queries.mjs';

async function collect(scan) {
  const batches = [];
  for await (const batch of scan) batches.push(batch);
  return { batches, stats: scan.stats };
}

/**
 * Waits until every worker the warm-up started is ready (they start once the page has answered a
 * first query), so a warm run does not share the cores with workers still starting.
 */
async function workersStarted(reader, timeoutMs = 10_000) {
  const until = performance.now() + timeoutMs;
  for (;;) {
    const { alive, ready } = reader.stats().workers;
    if ((alive > 0 && ready === alive) || performance.now() > until) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * A dataset (`urls`, `hive`): `reader.openDataset(urls)` — the first file's footer at open, the
 * others as the scan reaches them; with `union`, every footer at open and the union of their
 * schemas — and the query over it as one scan.
 */
async function runDataset(reader, urls, query, hive, union) {
  const dataset = await reader.openDataset(urls, union ? { schema: 'union' } : {});
  switch (query) {
    case 'q6': {
      const { values, stats } = await dataset.aggregate({
        filter: Q6_WHERE,
        aggregates: { revenue: sum(expr(col('l_extendedprice')).mul(col('l_discount'))) },
      });
      return { revenue: values.revenue, stats };
    }
    case 'part': {
      const { values, stats } = await dataset.aggregate({
        filter: PART_WHERE[hive ? 'hive' : 'flat'],
        aggregates: { quantity: sum(col('l_quantity')), rows: count() },
      });
      return { quantity: values.quantity, rows: values.rows, stats };
    }
    case 'count':
      return { count: await dataset.count() };
    case 'first100':
      return collect(dataset.scan({ limit: 100 }));
    default:
      throw new Error(`unknown dataset query ${query}`);
  }
}

export async function setup({ url, urls, hive, union, query, table, inMemory, warm, readerOptions, openOptions }) {
  // `readerOptions`, `openOptions`: for probes of a setting (the bench itself runs the defaults).
  const reader = await createReader(readerOptions ?? {});
  if (urls !== undefined) {
    return { run: () => runDataset(reader, urls, query, hive, union === true), dispose: () => reader.dispose() };
  }
  const source = inMemory ? new Uint8Array(await (await fetch(url)).arrayBuffer()) : url;
  const runOn = async (from) => {
    const file = await reader.open(from, openOptions ?? {});
    switch (query) {
      case 'q6': {
        const { values, stats } = await file.aggregate({
          filter: Q6_WHERE,
          aggregates: { revenue: sum(expr(col('l_extendedprice')).mul(col('l_discount'))) },
        });
        return { revenue: values.revenue, stats };
      }
      case 'lookup':
        return collect(file.scan({ filter: `l_orderkey = ${LOOKUP_KEY}` }));
      case 'contains': {
        const c = CONTAINS[table];
        return collect(file.scan({ columns: c.columns, filter: `${c.column} LIKE '${c.like}'` }));
      }
      case 'first100':
        return collect(file.scan({ limit: 100 }));
      case 'scan3':
        return collect(file.scan({ columns: SCAN3[table] }));
      default:
        throw new Error(`unknown query ${query}`);
    }
  };
  if (!warm) return { run: () => runOn(source), dispose: () => reader.dispose() };
  // The warm-up opens the file under another identity (a query string; the bytes re-opened are one
  // too), so the timed run finds nothing of it in the cross-scan cache. A page's first query runs
  // on the page's own instance while the workers start, so it runs again once they are up: the
  // timed run is then not the workers' first (their heap not yet grown, the code just tiered up).
  // The warm-ups' filter columns stay in the cross-scan cache (a few MiB of `l_orderkey` for the
  // lookup); the timed run may evict some of them, a cost the native runs do not have.
  await runOn(inMemory ? source : `${url}?warm-up`);
  await workersStarted(reader);
  await runOn(inMemory ? source : `${url}?warm-up-2`);
  return { run: () => runOn(source), dispose: () => reader.dispose() };
}
