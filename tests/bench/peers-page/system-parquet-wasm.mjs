/**
 * parquet-wasm: `ParquetFile.fromUrl` (arrow-rs's async reader over HTTP ranges; it loads the page
 * index with the footer), then `file.stream({ columns, concurrency, batchSize })` or
 * `file.read({ rowGroups, offset, limit })`, each batch to Arrow JS through IPC (its documented
 * path). No filters and no statistics in its API, so filters run in JS over the streamed columns:
 * Q6 sums decimals as integers; `LIKE` becomes a regular expression on each decoded string; the
 * lookup reads the key column, finds the matching rows, then reads all columns of just those rows
 * (`rowGroups` + `offset`/`limit`).
 */
import { tableFromIPC } from 'apache-arrow';
import init, { ParquetFile } from 'parquet-wasm';
import { CONTAINS, LOOKUP_KEY, SCAN3 } from './queries.mjs';

/** Read-ahead of row groups, and rows per batch (arrow-rs' default is 1024). */
const STREAM = { concurrency: 4, batchSize: 8192 };

async function streamBatches(file, options) {
  const batches = [];
  const stream = await file.stream({ ...STREAM, ...options });
  // A reader loop, not `for await`: WebKit (2.50) has no async iterator on ReadableStream.
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return batches;
    batches.push(...tableFromIPC(value.intoIPCStream()).batches);
  }
}

/** Σ price × discount over the Q6 rows, in units of 1e-4 (decimals as unscaled integers). */
function q6Revenue(batches) {
  const lo = Date.UTC(1994, 0, 1) / 86_400_000;
  const hi = Date.UTC(1995, 0, 1) / 86_400_000;
  let total = 0; // cents × cents: exact below 2^53
  for (const batch of batches) {
    const [price, discount, shipdate, quantity] = ['l_extendedprice', 'l_discount', 'l_shipdate', 'l_quantity'].map(
      (name) => batch.getChild(name).data[0],
    );
    const pw = price.values;
    const dw = discount.values;
    const qw = quantity.values;
    const days = shipdate.values;
    for (let i = 0; i < batch.numRows; i++) {
      const d = days[shipdate.offset + i];
      if (d < lo || d >= hi) continue;
      const disc = dw[(discount.offset + i) * 4];
      if (disc < 5 || disc > 7) continue;
      if (qw[(quantity.offset + i) * 4] >= 2400) continue;
      total += (pw[(price.offset + i) * 4] + pw[(price.offset + i) * 4 + 1] * 4294967296) * disc;
    }
  }
  return BigInt(total);
}

/** Ship months 1995-03…05 (tests/bench/peers-page/queries.mjs `PART_WHERE`). */
const PART_DAYS = [Date.UTC(1995, 2, 1) / 86_400_000, Date.UTC(1995, 5, 1) / 86_400_000];
const PART_PATH = /\/year=1995\/month=[345]\//;

/**
 * A dataset: its files one after the other, as an app with no dataset API loops over them. The
 * partition-filtered query skips files by their path on the hive dataset (as such an app would),
 * and filters `l_shipdate` on the other.
 */
async function runDataset(urls, query, hive) {
  const open = (url) => ParquetFile.fromUrl(new URL(url, location.href).href);
  switch (query) {
    case 'count': {
      let count = 0;
      for (const url of urls) {
        for (const group of (await open(url)).metadata().rowGroups()) count += group.numRows();
      }
      return { count };
    }
    case 'q6': {
      let revenue = 0n;
      for (const url of urls) {
        const columns = ['l_extendedprice', 'l_discount', 'l_shipdate', 'l_quantity'];
        revenue += q6Revenue(await streamBatches(await open(url), { columns }));
      }
      return { revenue, scale: 4 };
    }
    case 'part': {
      let rows = 0;
      let cents = 0;
      for (const url of hive ? urls.filter((u) => PART_PATH.test(u)) : urls) {
        const columns = hive ? ['l_quantity'] : ['l_quantity', 'l_shipdate'];
        for (const batch of await streamBatches(await open(url), { columns })) {
          const quantity = batch.getChild('l_quantity').data[0];
          const shipdate = hive ? null : batch.getChild('l_shipdate').data[0];
          for (let i = 0; i < batch.numRows; i++) {
            if (shipdate !== null) {
              const d = shipdate.values[shipdate.offset + i];
              if (d < PART_DAYS[0] || d >= PART_DAYS[1]) continue;
            }
            rows += 1;
            cents += quantity.values[(quantity.offset + i) * 4];
          }
        }
      }
      return { rows, quantity: BigInt(cents), scale: 2 };
    }
    case 'first100': {
      const table = await (await open(urls[0])).read({ limit: 100 });
      return { batches: tableFromIPC(table.intoIPCStream()).batches };
    }
    default:
      throw new Error(`unknown dataset query ${query}`);
  }
}

export async function setup({ url, urls, hive, query, table }) {
  await init();
  if (urls !== undefined) return { run: () => runDataset(urls, query, hive === true), dispose: () => {} };
  const run = async () => {
    const file = await ParquetFile.fromUrl(new URL(url, location.href).href); // reqwest needs an absolute URL
    switch (query) {
      case 'q6': {
        const columns = ['l_extendedprice', 'l_discount', 'l_shipdate', 'l_quantity'];
        return { revenue: q6Revenue(await streamBatches(file, { columns })), scale: 4 };
      }
      case 'lookup': {
        // The key column first, then every column of the matching rows only.
        const keys = await streamBatches(file, { columns: ['l_orderkey'] });
        const matches = [];
        let row = 0;
        for (const batch of keys) {
          const data = batch.getChild('l_orderkey').data[0];
          for (let i = 0; i < batch.numRows; i++)
            if (data.values[data.offset + i] === LOOKUP_KEY) matches.push(row + i);
          row += batch.numRows;
        }
        if (matches.length === 0) return { batches: [] };
        const groups = file.metadata().rowGroups();
        let group = 0;
        let groupStart = 0;
        while (groupStart + groups[group].numRows() <= matches[0]) groupStart += groups[group++].numRows();
        const first = matches[0];
        const last = matches[matches.length - 1];
        const table = await file.read({ rowGroups: [group], offset: first - groupStart, limit: last - first + 1 });
        return { batches: tableFromIPC(table.intoIPCStream()).batches };
      }
      case 'contains': {
        const c = CONTAINS[table];
        const rows = [];
        for (const batch of await streamBatches(file, { columns: c.columns })) {
          const vectors = c.columns.map((name) => batch.getChild(name));
          const filtered = batch.getChild(c.column);
          for (let i = 0; i < batch.numRows; i++) {
            if (c.regex.test(filtered.get(i))) {
              rows.push(Object.fromEntries(c.columns.map((name, k) => [name, vectors[k].get(i)])));
            }
          }
        }
        return { rows };
      }
      case 'first100': {
        const table = await file.read({ limit: 100 });
        return { batches: tableFromIPC(table.intoIPCStream()).batches };
      }
      case 'scan3':
        return { batches: await streamBatches(file, { columns: SCAN3[table] }) };
      default:
        throw new Error(`unknown query ${query}`);
    }
  };
  return { run, dispose: () => {} };
}
