/**
 * The workers' cross-scan cache of decoded filter columns, in Chromium against the range server:
 * an edited filter on the same column fetches and decodes none of it again, results equal a
 * reader without the cache, the budget holds, and a changed file (new ETag) never hits.
 */
import { copyFile, mkdtemp, rm, utimes } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { ColumnCacheStats } from 'parquet-skim';
import { startRangeServer } from '../server/range-server.mjs';
import { expect, parquetTestingDir, test } from './fixtures.ts';

test('re-filtering the same column takes it from the cache: no filter bytes fetched, same rows', async ({
  harness,
}) => {
  const result = await harness.evaluate(async () => {
    const { skim } = window.harness;
    const run = async (cacheBytes: number, workers: number, filters: string[]) => {
      const reader = await skim.createReader({ workers, cacheBytes });
      const file = await reader.open('/sample/lineitem-sf1.parquet');
      const out = [];
      for (const filter of filters) {
        const scan = file.scan({ columns: ['l_orderkey', 'l_comment'], filter });
        let rows = 0;
        let keySum = 0;
        let commentLength = 0;
        for await (const batch of scan) {
          rows += batch.numRows;
          const keys = batch.getChild('l_orderkey');
          const comments = batch.getChild('l_comment');
          for (let i = 0; i < batch.numRows; i++) {
            keySum += Number(keys?.get(i));
            commentLength += String(comments?.get(i)).length;
          }
        }
        out.push({ rows, keySum, commentLength, stats: JSON.parse(JSON.stringify(scan.stats)) });
      }
      reader.dispose();
      return out;
    };
    const filters = ["l_comment LIKE '%special%requests%'", "l_comment LIKE '%furiously%'"];
    return {
      off: await run(0, 1, filters),
      one: await run(512 * 2 ** 20, 1, filters),
      two: await run(512 * 2 ** 20, 2, filters),
      tight: await run(24 * 2 ** 20, 2, filters),
      partial: await run(92 * 2 ** 20, 2, filters),
    };
  });
  const answers = (runs: typeof result.off) =>
    runs.map(({ rows, keySum, commentLength }) => ({ rows, keySum, commentLength }));
  for (const [name, runs] of Object.entries(result)) {
    const c = runs.map((r) => r.stats.columnCache);
    console.log(
      `\n${name}: ${runs.map((r, i) => `scan ${i + 1}: ${r.rows} rows, ${r.stats.elapsedMs.toFixed(0)} ms, filter bytes ${r.stats.bytesFetchedFilter}, hits ${c[i].hits}/${c[i].hits + c[i].misses}, peak ${c[i].peakBytes} of ${c[i].budgetBytes}, rejected ${c[i].bytesRejected}`).join('; ')}`,
    );
  }
  // The cache changes nothing in the answers.
  expect(answers(result.one)).toEqual(answers(result.off));
  expect(answers(result.two)).toEqual(answers(result.off));
  expect(answers(result.tight)).toEqual(answers(result.off));
  expect(result.off[1]?.rows).toBeGreaterThan(0);
  // Off: nothing is cached.
  for (const r of result.off) expect(r.stats.columnCache).toMatchObject({ hits: 0, misses: 0, peakBytes: 0 });
  // One worker: the first scan misses everywhere and keeps l_comment; the edited filter hits
  // every task and fetches no filter byte.
  const [first, second] = result.one as [(typeof result.one)[0], (typeof result.one)[0]];
  const tasks = first.stats.tasksTotal;
  expect(first.stats.columnCache).toMatchObject({ hits: 0, misses: tasks });
  expect(first.stats.columnCache.bytesInserted).toBeGreaterThan(100 * 2 ** 20);
  expect(second.stats.columnCache).toMatchObject({ hits: tasks, misses: 0, bytesInserted: 0 });
  expect(second.stats.bytesFetchedFilter).toBe(0);
  expect(second.stats.bytesFetched).toBeLessThan(first.stats.bytesFetched / 4);
  // Two workers: affinity sends each task to the worker holding its columns.
  expect(result.two[1]?.stats.columnCache.hits).toBeGreaterThan(tasks / 2);
  // The budget holds in every scan; the series starts at the scan and has a point per task.
  for (const runs of Object.values(result)) {
    for (const r of runs) {
      const c = r.stats.columnCache;
      expect(c.peakBytes).toBeLessThanOrEqual(c.budgetBytes);
      expect(c.series.length).toBe(r.stats.tasksTotal + 1);
      for (const point of c.series) expect(point.bytes).toBeLessThanOrEqual(c.budgetBytes);
    }
  }
  // Tight: 10.5 MiB per worker (24 MiB, an eighth kept for the page) cannot hold a row group's
  // l_comment (its pages alone are larger): the tasks decode fused, as without the cache, and
  // nothing is collected to be rejected.
  for (const r of result.tight) expect(r.stats.columnCache).toMatchObject({ hits: 0, misses: 0, bytesRejected: 0 });
  // Partial: 40.25 MiB per worker (92 MiB, an eighth kept for the page) holds one row group's
  // l_comment each. The first scan keeps what fitted first instead of cycling it out
  // (scan-resistant LRU), so the re-filter hits those.
  expect(answers(result.partial)).toEqual(answers(result.off));
  expect(result.partial[0]?.stats.columnCache.bytesRejected).toBeGreaterThan(0);
  expect(result.partial[1]?.stats.columnCache.hits).toBeGreaterThanOrEqual(2);
});

test('a changed file (new ETag) never hits entries of its old version', async ({ harness }) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'skim-cache-'));
  const served = path.join(dir, 'f.parquet');
  await copyFile(path.join(parquetTestingDir, 'alltypes_tiny_pages.parquet'), served);
  const server = await startRangeServer({ mounts: { '/': dir } });
  try {
    const url = `${server.url}/f.parquet`;
    const scanOnce = (u: string) =>
      harness.evaluate(async (u) => {
        const { skim } = window.harness;
        const w = window as unknown as { cacheReader?: Awaited<ReturnType<typeof skim.createReader>> };
        w.cacheReader ??= await skim.createReader({ workers: 1 });
        const file = await w.cacheReader.open(u);
        const scan = file.scan({ columns: ['id'], filter: "string_col LIKE '%1%'" });
        const rows = (await scan.toTable()).numRows;
        return { rows, cache: scan.stats.columnCache, tasks: scan.stats.tasksTotal };
      }, u);
    const cold = await scanOnce(url);
    const reopened = await scanOnce(url);
    // Same bytes, new mtime: the ETag changes.
    const later = new Date(Date.now() + 60_000);
    await utimes(served, later, later);
    const changed = await scanOnce(url);
    console.log(
      `\nchanged file: ${JSON.stringify({ cold, reopened, changed }, (k, v) => (k === 'series' ? undefined : v))}`,
    );
    expect(cold.cache).toMatchObject({ hits: 0, misses: cold.tasks });
    // Reopening the same version reuses the cache…
    expect(reopened.cache).toMatchObject({ hits: cold.tasks, misses: 0 });
    // …a new version never does.
    expect(changed.cache).toMatchObject({ hits: 0, misses: cold.tasks });
    expect(new Set([cold.rows, reopened.rows, changed.rows]).size).toBe(1);
  } finally {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test("the page's own cache and the workers' together stay within cacheBytes", async ({ harness }) => {
  // The page decodes a first query's small tasks itself (and caches their filter column), then
  // the workers run bulk scans over other columns. Until 2026-11-29 every instance kept
  // cacheBytes / workers, the page as much as a worker: 188 MiB could be held against 128.
  const cacheBytes = 128 * 2 ** 20;
  const result = await harness.evaluate(async (cacheBytes) => {
    const { skim } = window.harness;
    const reader = await skim.createReader({ workers: 2, cacheBytes, inlineTaskBytes: 8 * 2 ** 20 });
    const file = await reader.open('/sample/lineitem-sf1.parquet');
    const scans: Array<{
      filter: string;
      rows: number;
      tasksTotal: number;
      onPage: number;
      columnCache: ColumnCacheStats;
    }> = [];
    const run = async (columns: string[], filter: string) => {
      const onPageBefore = reader.stats().workers.tasksOnPage;
      const scan = file.scan({ columns, filter });
      let rows = 0;
      for await (const batch of scan) rows += batch.numRows;
      const { columnCache, tasksTotal } = scan.stats;
      scans.push({ filter, rows, tasksTotal, onPage: reader.stats().workers.tasksOnPage - onPageBefore, columnCache });
    };
    // l_shipmode: ~0.4 MB a row group on disk (the page takes the tasks), 12 MiB decoded.
    await run(['l_shipmode'], "l_shipmode = 'AIR'");
    for (let i = 0; i < 400 && reader.stats().workers.ready < 2; i++) await new Promise((r) => setTimeout(r, 25));
    // Two integer columns each: ~15 MiB a row group decoded, on the workers.
    await run(['l_orderkey', 'l_partkey'], 'l_orderkey > 0 AND l_partkey > 0');
    await run(['l_suppkey', 'l_linenumber'], 'l_suppkey > 0 AND l_linenumber > 0');
    // Edited: the row group the page kept is a hit there.
    await run(['l_shipmode'], "l_shipmode = 'MAIL'");
    reader.dispose();
    return scans;
  }, cacheBytes);
  const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(1);
  console.log(
    `\n${result.map((s) => `${s.filter}: ${s.rows} rows, on page ${s.onPage}/${s.tasksTotal}, inserted ${mib(s.columnCache.bytesInserted)} MiB, hits ${s.columnCache.hits}, peak ${mib(s.columnCache.peakBytes)} of ${mib(s.columnCache.budgetBytes)}`).join('\n')}`,
  );
  const [first, , , edited] = result as [(typeof result)[0], unknown, unknown, (typeof result)[0]];
  // Both kinds of instance cached: the page its first task (at least; the pool starts after it)…
  expect(first.onPage).toBeGreaterThanOrEqual(1);
  expect(first.columnCache.bytesInserted).toBeGreaterThan(0);
  for (const s of result.slice(1, 3)) {
    expect(s.onPage).toBe(0);
    expect(s.columnCache.bytesInserted).toBeGreaterThan(0);
  }
  // …and served a hit from it.
  expect(edited.columnCache.hits).toBeGreaterThanOrEqual(1);
  // Together, never over the reader's budget.
  for (const s of result) {
    expect(s.columnCache.budgetBytes).toBeLessThanOrEqual(cacheBytes);
    expect(s.columnCache.peakBytes).toBeLessThanOrEqual(s.columnCache.budgetBytes);
    for (const point of s.columnCache.series) expect(point.bytes).toBeLessThanOrEqual(s.columnCache.budgetBytes);
  }
});
