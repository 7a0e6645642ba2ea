/**
 * hyparquet (+ hyparquet-compressors for zstd): `asyncBufferFromUrl` (a HEAD for the size, then
 * range GETs), the footer by `parquetMetadataAsync`, then:
 * - the lookup: `parquetReadObjects` with its `filter` (`$eq`), `usePageIndex` and
 *   `useOffsetIndex` — row groups skipped by statistics, pages by the column index;
 * - the first 100 rows: `parquetReadObjects` with `rowStart`/`rowEnd` and `useOffsetIndex`;
 * - Q6, `LIKE` and the 3-column scan: `parquetRead` with `columns` and `onChunk` (column arrays,
 *   no row objects), filtered in JS. Its filter has no `LIKE`, and on Q6 it would compare decimals
 *   as floats (`7 × 0.01 > 0.07`, so `$lte: 0.07` misses rows): decimals are compared in cents.
 * Dates are read as day numbers (`parsers.dateFromDays`) instead of `Date` objects.
 */
import { asyncBufferFromUrl, parquetMetadataAsync, parquetRead, parquetReadObjects } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { chunkCursor, chunkRows } from './answers.mjs';
import { CONTAINS, LOOKUP_KEY, SCAN3 } from './queries.mjs';

const parsers = { dateFromDays: (days) => days };

/** `columns` as hyparquet's column chunks: `{ column: [{ rowStart, columnData }] }`. */
async function readChunks(file, metadata, columns) {
  const chunks = Object.fromEntries(columns.map((name) => [name, []]));
  await parquetRead({
    file,
    metadata,
    columns,
    compressors,
    parsers,
    onChunk: ({ columnName, columnData, rowStart }) => chunks[columnName].push({ rowStart, columnData }),
  });
  return chunks;
}

/** Σ price × discount over the Q6 rows of one file (floats; decimals compared in cents). */
async function q6Revenue(file, metadata) {
  const lo = Date.UTC(1994, 0, 1) / 86_400_000;
  const hi = Date.UTC(1995, 0, 1) / 86_400_000;
  const columns = ['l_extendedprice', 'l_discount', 'l_shipdate', 'l_quantity'];
  const chunks = await readChunks(file, metadata, columns);
  const [price, discount, shipdate, quantity] = columns.map((name) => chunkCursor(chunks[name]));
  let revenue = 0;
  const rows = chunkRows(chunks.l_shipdate);
  for (let i = 0; i < rows; i++) {
    const d = shipdate(i);
    if (d < lo || d >= hi) continue;
    const disc = Math.round(discount(i) * 100);
    if (disc < 5 || disc > 7 || Math.round(quantity(i) * 100) >= 2400) continue;
    revenue += price(i) * discount(i);
  }
  return revenue;
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
  const open = async (url) => {
    const file = await asyncBufferFromUrl({ url });
    return { file, metadata: await parquetMetadataAsync(file) };
  };
  switch (query) {
    case 'count': {
      let count = 0;
      for (const url of urls) count += Number((await open(url)).metadata.num_rows);
      return { count };
    }
    case 'q6': {
      let revenue = 0;
      for (const url of urls) {
        const { file, metadata } = await open(url);
        revenue += await q6Revenue(file, metadata);
      }
      return { revenue };
    }
    case 'part': {
      let rows = 0;
      let cents = 0;
      for (const url of hive ? urls.filter((u) => PART_PATH.test(u)) : urls) {
        const { file, metadata } = await open(url);
        const columns = hive ? ['l_quantity'] : ['l_quantity', 'l_shipdate'];
        const chunks = await readChunks(file, metadata, columns);
        const quantity = chunkCursor(chunks.l_quantity);
        const shipdate = hive ? null : chunkCursor(chunks.l_shipdate);
        const total = chunkRows(chunks.l_quantity);
        for (let i = 0; i < total; i++) {
          if (shipdate !== null) {
            const d = shipdate(i);
            if (d < PART_DAYS[0] || d >= PART_DAYS[1]) continue;
          }
          rows += 1;
          cents += Math.round(quantity(i) * 100);
        }
      }
      return { rows, quantity: BigInt(cents), scale: 2 };
    }
    case 'first100': {
      const { file, metadata } = await open(urls[0]);
      const options = { file, metadata, compressors, parsers };
      return { rows: await parquetReadObjects({ ...options, rowStart: 0, rowEnd: 100, useOffsetIndex: true }) };
    }
    default:
      throw new Error(`unknown dataset query ${query}`);
  }
}

export async function setup({ url, urls, hive, query, table }) {
  if (urls !== undefined) return { run: () => runDataset(urls, query, hive === true), dispose: () => {} };
  const run = async () => {
    const file = await asyncBufferFromUrl({ url });
    const metadata = await parquetMetadataAsync(file);
    const options = { file, metadata, compressors, parsers };
    switch (query) {
      case 'q6':
        return { revenue: await q6Revenue(file, metadata) };
      case 'lookup':
        return {
          rows: await parquetReadObjects({
            ...options,
            filter: { l_orderkey: { $eq: LOOKUP_KEY } },
            usePageIndex: true,
            useOffsetIndex: true,
          }),
        };
      case 'contains': {
        const c = CONTAINS[table];
        const chunks = await readChunks(file, metadata, c.columns);
        const cursors = c.columns.map((name) => chunkCursor(chunks[name]));
        const filtered = cursors[c.columns.indexOf(c.column)];
        const rows = [];
        const total = chunkRows(chunks[c.column]);
        for (let i = 0; i < total; i++) {
          if (c.regex.test(filtered(i)))
            rows.push(Object.fromEntries(c.columns.map((name, k) => [name, cursors[k](i)])));
        }
        return { rows };
      }
      case 'first100':
        return { rows: await parquetReadObjects({ ...options, rowStart: 0, rowEnd: 100, useOffsetIndex: true }) };
      case 'scan3':
        return { chunks: await readChunks(file, metadata, SCAN3[table]) };
      default:
        throw new Error(`unknown query ${query}`);
    }
  };
  return { run, dispose: () => {} };
}
