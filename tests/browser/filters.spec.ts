/**
 * Filters end to end in Chromium on TPC-H lineitem SF1 (page index on): the bytes a selective
 * lookup fetches, TPC-H Q6's answer against DuckDB's, and no false pruning.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { startRangeServer } from '../server/range-server.mjs';
import { cacheDir, expect, test } from './fixtures.ts';

interface TpchReference {
  q6: { filter: string; revenue: string; rows: number };
  orderkey_range: { rows: number };
}

const reference = async () =>
  JSON.parse(await readFile(path.join(cacheDir, 'tpch-reference.json'), 'utf8')) as TpchReference;

test('a selective lookup projecting all 16 columns fetches under 1% of the file', async ({ harness }) => {
  const expected = await reference();
  const result = await harness.evaluate(async () => {
    const { skim } = window.harness;
    const reader = await skim.createReader({ workers: 2 });
    const file = await reader.open('/sample/lineitem-sf1.parquet');
    const scan = file.scan({ filter: 'l_orderkey BETWEEN 3000000 AND 3001000' });
    const table = await scan.toTable();
    const keys = Array.from(table.getChild('l_orderkey')?.toArray() ?? [], Number);
    const out = {
      fileLen: file.byteLength,
      columns: table.numCols,
      rows: table.numRows,
      inRange: keys.every((k) => k >= 3000000 && k <= 3001000),
      log: file.requestLog(),
      stats: { ...scan.stats },
    };
    reader.dispose();
    return out;
  });
  const total = result.log.reduce((sum, e) => sum + e.bytes, 0);
  console.log(`\nl_orderkey BETWEEN 3000000 AND 3001000, all columns: ${result.rows} rows`);
  for (const e of result.log)
    console.log(`  ${e.status} ${String(e.range).padEnd(30)} ${String(e.bytes).padStart(9)} B`);
  console.log(
    `  fetched ${total} B in ${result.log.length} requests = ${((100 * total) / result.fileLen).toFixed(3)}% of ${result.fileLen} B`,
  );
  console.log(`  stats: ${JSON.stringify(result.stats)}`);
  expect(result.columns).toBe(16);
  expect(result.rows).toBe(expected.orderkey_range.rows);
  expect(result.inRange).toBe(true);
  expect(result.stats.rowGroupsPrunedByStats).toBeGreaterThanOrEqual(4);
  expect(result.stats.pagesPruned).toBeGreaterThan(0);
  expect(total).toBeLessThan(0.01 * result.fileLen);
});

test("TPC-H Q6's revenue equals DuckDB's, with SQL text and with the builder", async ({ harness }) => {
  const expected = await reference();
  const result = await harness.evaluate(async (filter) => {
    const { skim } = window.harness;
    const { col } = skim;
    /** sum(l_extendedprice * l_discount), exactly, from the unscaled decimal128 words. */
    const revenue = (table: Awaited<ReturnType<ReturnType<typeof file.scan>['toTable']>>) => {
      const unscaled = (name: string) => {
        const out: bigint[] = [];
        for (const data of table.getChild(name)?.data ?? []) {
          const words = data.values as Uint32Array;
          for (let i = 0; i < data.length; i++) {
            const w = (k: number) => BigInt(words[(data.offset + i) * 4 + k] ?? 0);
            out.push(BigInt.asIntN(128, w(0) | (w(1) << 32n) | (w(2) << 64n) | (w(3) << 96n)));
          }
        }
        return out;
      };
      const prices = unscaled('l_extendedprice');
      const discounts = unscaled('l_discount');
      let sum = 0n;
      for (let i = 0; i < prices.length; i++) sum += (prices[i] ?? 0n) * (discounts[i] ?? 0n);
      const digits = sum.toString().padStart(5, '0');
      return `${digits.slice(0, -4)}.${digits.slice(-4)}`;
    };
    const reader = await skim.createReader({ workers: 2 });
    const file = await reader.open('/sample/lineitem-sf1.parquet');
    const columns = ['l_extendedprice', 'l_discount'];
    const sqlScan = file.scan({ columns, filter });
    const sqlTable = await sqlScan.toTable();
    const built = col('l_shipdate')
      .gte('1994-01-01')
      .and(col('l_shipdate').lt('1995-01-01'), col('l_discount').between(0.05, 0.07), col('l_quantity').lt(24));
    const builtTable = await file.scan({ columns, filter: built }).toTable();
    const out = {
      sql: { rows: sqlTable.numRows, revenue: revenue(sqlTable) },
      builder: { rows: builtTable.numRows, revenue: revenue(builtTable) },
      stats: { ...sqlScan.stats },
    };
    reader.dispose();
    return out;
  }, expected.q6.filter);
  console.log(
    `\nTPC-H Q6: parquet-skim ${result.sql.revenue} (${result.sql.rows} rows), DuckDB ${expected.q6.revenue} (${expected.q6.rows} rows)`,
  );
  console.log(`  stats: ${JSON.stringify(result.stats)}`);
  expect(result.sql).toEqual({ rows: expected.q6.rows, revenue: expected.q6.revenue });
  expect(result.builder).toEqual(result.sql);
});

test("TPC-H Q6 fused in the workers (decode + filter + sum in one pass) equals DuckDB's", async ({ harness }) => {
  const expected = await reference();
  const result = await harness.evaluate(async (filter) => {
    const { skim } = window.harness;
    const { col, count, expr, sum } = skim;
    const reader = await skim.createReader({ workers: 2 });
    const file = await reader.open('/sample/lineitem-sf1.parquet');
    const started = performance.now();
    const { values, stats } = await file.aggregate({
      filter,
      aggregates: { revenue: sum(expr(col('l_extendedprice')).mul(col('l_discount'))), rows: count() },
    });
    const ms = performance.now() - started;
    reader.dispose();
    return { revenue: values.revenue as string, rows: values.rows as number, ms, bytes: stats.bytesFetched };
  }, expected.q6.filter);
  console.log(
    `\nTPC-H Q6 fused: ${result.revenue} (${result.rows} rows) in ${result.ms.toFixed(0)} ms, ${result.bytes} B fetched`,
  );
  expect(result).toMatchObject({ revenue: expected.q6.revenue, rows: expected.q6.rows });
});

test('a filter that prunes nothing returns exactly the rows an unfiltered scan matches', async ({ harness }) => {
  const result = await harness.evaluate(async () => {
    const { skim } = window.harness;
    const reader = await skim.createReader({ workers: 2 });
    const file = await reader.open('/data/alltypes_tiny_pages.parquet');
    const all = await file.scan({ columns: ['id', 'string_col', 'bool_col'] }).toTable();
    const expected: number[] = [];
    for (let i = 0; i < all.numRows; i++) {
      const row = all.get(i);
      if (row?.bool_col === true && String(row?.string_col).endsWith('4')) expected.push(Number(row.id));
    }
    const scan = file.scan({ columns: ['id'], filter: "bool_col = true AND ends_with(string_col, '4')" });
    const filtered = await scan.toTable();
    const out = {
      expected,
      actual: Array.from(filtered.getChild('id')?.toArray() ?? [], Number),
      pruned: scan.stats.rowGroupsPrunedByStats + scan.stats.pagesPruned,
    };
    reader.dispose();
    return out;
  });
  expect(result.pruned).toBe(0);
  expect(result.actual.length).toBeGreaterThan(0);
  expect(result.actual).toEqual(result.expected);
});

test('a lookup the statistics narrowed is one round trip after the footer: its output pages come with its filter pages', async ({
  harness,
}) => {
  // 150 ms before each response: a second round shows as requests sent that much later.
  const slow = await startRangeServer({ mounts: { '/sample/': path.join(cacheDir, 'data') }, latencyMs: 150 });
  try {
    const result = await harness.evaluate(async (base) => {
      const { skim } = window.harness;
      const lookup = async (prefetchOutputBytes: number) => {
        const reader = await skim.createReader({ workers: 2, ioConcurrency: 64, prefetchOutputBytes, cacheBytes: 0 });
        try {
          const file = await reader.open(`${base}/sample/lineitem-sf1.parquet`);
          const opened = file.requestLog().length;
          const scan = file.scan({ filter: 'l_orderkey = 3000323' });
          const table = await scan.toTable();
          const sent = file
            .requestLog()
            .slice(opened)
            .map((e) => e.at);
          return {
            keys: Array.from(table.getChild('l_orderkey')?.toArray() ?? [], Number),
            columns: table.numCols,
            requests: sent.length,
            sentOverMs: Math.max(...sent) - Math.min(...sent),
            outputBytes: scan.stats.bytesFetchedOutput,
          };
        } finally {
          reader.dispose();
        }
      };
      // The output pages (727 KB) hold the 7 matches' rows whatever they are: waiting for the
      // filter could save none of them, so an allowance of 64 KiB (a scan's budget of 1 MiB)
      // reads them up front, though they are more.
      return { prefetched: await lookup(64 * 1024), waited: await lookup(0) };
    }, slow.url);
    console.log(
      `\nlookup at 150 ms per request: up front ${result.prefetched.requests} requests sent over ${result.prefetched.sentOverMs} ms; waiting for the filter ${result.waited.requests} over ${result.waited.sentOverMs} ms`,
    );
    for (const run of [result.prefetched, result.waited]) {
      expect(run.keys).toEqual(Array(7).fill(3000323));
      expect(run.columns).toBe(16);
      expect(run.outputBytes).toBeGreaterThan(0);
    }
    expect(result.prefetched.sentOverMs).toBeLessThan(100);
    expect(result.waited.sentOverMs).toBeGreaterThanOrEqual(140);
  } finally {
    await slow.close();
  }
});

test('a filtered scan with a limit that the first task satisfies reads only that task', async ({ harness }) => {
  const result = await harness.evaluate(async () => {
    const { skim } = window.harness;
    const reader = await skim.createReader({ workers: 2 });
    const file = await reader.open('/sample/lineitem-sf1.parquet');
    const scan = file.scan({ columns: ['l_orderkey'], filter: "l_comment LIKE '%furiously%'", limit: 100 });
    const rows = (await scan.toTable()).numRows;
    const stats = { ...scan.stats };
    const firstTaskBytes = file.metadata.rowGroups[0]?.columns.find((c) => c.path === 'l_comment')?.compressedSize;
    reader.dispose();
    return { rows, stats, firstTaskBytes };
  });
  console.log(
    `\nfiltered limit 100: ${result.stats.tasksDone} of ${result.stats.tasksTotal} tasks, ${result.stats.bytesFetched} B fetched`,
  );
  expect(result.rows).toBe(100);
  expect(result.stats.tasksDone).toBe(1);
  // One row group's l_comment (plus the first l_orderkey pages), not a read-ahead window's.
  expect(result.stats.bytesFetchedFilter).toBeLessThanOrEqual((result.firstTaskBytes ?? 0) * 1.01);
});

test("LIKE '%…%' keeps exactly the rows a regular expression keeps (the WebAssembly build's own substring search)", async ({
  harness,
}) => {
  const result = await harness.evaluate(async () => {
    const { skim } = window.harness;
    const reader = await skim.createReader({ workers: 2 });
    const file = await reader.open('/sample/lineitem-sf1.parquet');
    const range = 'l_orderkey <= 60000';
    const all = await file.scan({ columns: ['l_orderkey', 'l_comment'], filter: range }).toTable();
    const comments = Array.from(all.getChild('l_comment')?.toArray() ?? [], String);
    // One byte (no pair: memmem alone), two, rare and common bytes, several literals, none.
    const patterns = ['q', 'ly', 'furiously', 'special%requests', 'carefully final', 'xz', 'ironic%de%s', 'zzzz'];
    const out = [];
    for (const pattern of patterns) {
      const expression = new RegExp(pattern.split('%').join('.*'), 's');
      const expected = comments.filter((c) => expression.test(c));
      const table = await file
        .scan({ columns: ['l_comment'], filter: `${range} AND l_comment LIKE '%${pattern}%'` })
        .toTable();
      const got = Array.from(table.getChild('l_comment')?.toArray() ?? [], String);
      out.push({ pattern, expected: expected.length, got: got.length, same: got.join('\n') === expected.join('\n') });
    }
    reader.dispose();
    return { rows: comments.length, out };
  });
  expect(result.rows).toBeGreaterThan(50_000);
  for (const { pattern, expected, got, same } of result.out) {
    expect({ pattern, got, same }).toEqual({ pattern, got: expected, same: true });
  }
  // The patterns are not all trivial: some keep many rows, some few, one none.
  const kept = result.out.map((o) => o.expected);
  expect(Math.max(...kept)).toBeGreaterThan(10_000);
  expect(kept).toContain(0);
});
