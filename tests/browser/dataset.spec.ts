/**
 * Datasets in Chromium: a hive-partitioned folder written by pyarrow (tests/dataset/
 * write_datasets.py), read over HTTP from the range server and as a chosen folder of `File`s, with
 * the answers pyarrow computed; files that fail under both policies; cancellation across files.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { cacheDir, expect, test } from './fixtures.js';

interface Reference {
  hive: {
    files: string[];
    rows: number;
    firstIds: number[];
    year2021: number;
    regionNull: number;
    euCheap: { rows: number; sumId: number };
    lateSumValue: number;
    cheapPartitions: { sumYear: number; sumIdTimesYear: number; regions: number; minRegion: string; maxYear: number };
    rowsPerFile: Record<string, number>;
  };
  mixed: { files: string[]; types: Record<string, string>; columns: Record<string, unknown[]> };
  broken: { files: string[]; goodRows: number };
}

const datasets = path.join(cacheDir, 'data/datasets');
const reference = JSON.parse(readFileSync(path.join(datasets, 'reference.json'), 'utf8')) as Reference;

test('a hive-partitioned folder over HTTP: one table, partition pruning with no request to pruned files', async ({
  harness,
  server,
}) => {
  const urls = reference.hive.files.map((f) => `${server.url}/sample/datasets/hive/${f}`);
  server.resetLog();
  const result = await harness.evaluate(async (urls) => {
    const { skim } = window.harness;
    // Every task on the workers (these files are small enough for the page to decode them itself).
    const reader = await skim.createReader({ inlineTaskBytes: 0, inlineScanBytes: 0 });
    const dataset = await reader.openDataset(urls, { schema: 'union' });
    const opened = { ...dataset.stats };
    const schema = dataset.schema.fields.map((f) => `${f.name}:${f.type}`);
    const count = await dataset.count();
    const first = await dataset.scan({ columns: ['id'], limit: 20 }).toTable();
    const euScan = dataset.scan({ columns: ['id', 'region'], filter: "region = 'EU' AND value < 0.25" });
    const eu = await euScan.toTable();
    let sumId = 0;
    for (const id of eu.getChild('id') ?? []) sumId += Number(id);
    const nulls = await dataset.count({ filter: 'region IS NULL' });
    const yearScan = dataset.scan({ columns: ['id', 'year'], filter: 'year = 2021' });
    const year = await yearScan.toTable();
    const years = new Set([...(year.getChild('year') ?? [])].map(String));
    const late = await dataset.aggregate({
      aggregates: { total: skim.sum(skim.col('value')) },
      filter: 'year >= 2022',
    });
    // Aggregates of the partition columns: from the rows that pass and each file's values.
    const { col } = skim;
    const partitions = await dataset.aggregate({
      filter: 'value < 0.25',
      aggregates: {
        sumYear: skim.sum(col('year')),
        sumIdTimesYear: skim.sum(skim.expr(col('id')).mul(col('year'))),
        regions: skim.count(col('region')),
        minRegion: skim.min(col('region')),
        maxYear: skim.max(col('year')),
      },
    });
    const workers = { alive: reader.workerCount, onPage: reader.stats().workers.tasksOnPage };
    reader.dispose();
    return {
      opened,
      schema,
      count,
      firstIds: [...(first.getChild('id') ?? [])].map(Number),
      eu: { rows: eu.numRows, sumId, regions: [...new Set(eu.getChild('region') ?? [])] },
      euFates: euScan.stats.files.map((f) => f.fate),
      nulls,
      year: { rows: year.numRows, years: [...years], fates: yearScan.stats.files.map((f) => f.fate) },
      late: late.values.total,
      partitions: Object.fromEntries(Object.entries(partitions.values).map(([k, v]) => [k, String(v)])),
      workers,
    };
  }, urls);
  expect(result.opened).toMatchObject({ files: 12, filesOpened: 12, filesFailed: 0, requests: 12 });
  expect(result.schema).toEqual(['id:Int64', 'value:Float64', 'name:Utf8', 'year:Int64', 'region:Utf8']);
  expect(result.count).toBe(reference.hive.rows);
  expect(result.firstIds).toEqual(reference.hive.firstIds);
  expect(result.eu).toEqual({
    rows: reference.hive.euCheap.rows,
    sumId: reference.hive.euCheap.sumId,
    regions: ['EU'],
  });
  expect(result.euFates.filter((f) => f === 'partition')).toHaveLength(8);
  expect(result.nulls).toBe(reference.hive.regionNull);
  expect(result.year.rows).toBe(reference.hive.year2021);
  expect(result.year.years).toEqual(['2021']);
  expect(result.year.fates.filter((f) => f === 'read')).toHaveLength(3);
  expect(result.late).toBeCloseTo(reference.hive.lateSumValue, 6);
  expect(result.partitions).toEqual(
    Object.fromEntries(Object.entries(reference.hive.cheapPartitions).map(([k, v]) => [k, String(v)])),
  );
  expect(result.workers.alive).toBeGreaterThan(0);
  expect(result.workers.onPage).toBe(0);
});

test("schema 'first': a scan filtered on partitions never touches the pruned files, not even their footers", async ({
  harness,
  server,
}) => {
  const urls = reference.hive.files.map((f) => `${server.url}/sample/datasets/hive/${f}`);
  server.resetLog();
  const result = await harness.evaluate(async (urls) => {
    const reader = await window.harness.skim.createReader();
    const dataset = await reader.openDataset(urls, { schema: 'first' });
    const rows = (await dataset.scan({ columns: ['id'], filter: "year = 2023 AND region = 'US'" }).toTable()).numRows;
    reader.dispose();
    return rows;
  }, urls);
  expect(result).toBe(reference.hive.rowsPerFile['year=2023/region=US/part-0.parquet']);
  const touched = new Set(server.log.filter((e) => e.path.includes('/datasets/hive/')).map((e) => e.path));
  expect([...touched].sort()).toEqual([
    '/sample/datasets/hive/year=2020/region=EU/part-0.parquet',
    '/sample/datasets/hive/year=2023/region=US/part-0.parquet',
  ]);
});

test('footerMemoryBytes: files closed behind the scans, in the page and the workers, and opened again; the same answers', async ({
  harness,
  server,
}) => {
  const urls = reference.hive.files.map((f) => `${server.url}/sample/datasets/hive/${f}`);
  const result = await harness.evaluate(async (urls) => {
    const { skim } = window.harness;
    // Every task on the workers: they hold the files' footers too, and are told to drop them.
    const reader = await skim.createReader({ inlineTaskBytes: 0, inlineScanBytes: 0 });
    const passes = [];
    for (const schema of ['union', 'first'] as const) {
      // Room for about one file's footer.
      const dataset = await reader.openDataset(urls, { schema, footerMemoryBytes: 1 });
      const count = await dataset.count({ filter: 'id >= 0' });
      const first = await dataset.scan({ columns: ['id'], limit: 20 }).toTable();
      const euScan = dataset.scan({ columns: ['id', 'region'], filter: "region = 'EU' AND value < 0.25" });
      const eu = await euScan.toTable();
      let sumId = 0;
      for (const id of eu.getChild('id') ?? []) sumId += Number(id);
      const late = await dataset.aggregate({
        aggregates: { total: skim.sum(skim.col('value')) },
        filter: 'year >= 2022',
      });
      passes.push({
        count,
        firstIds: [...(first.getChild('id') ?? [])].map(Number),
        eu: { rows: eu.numRows, sumId },
        late: late.values.total,
        closed: euScan.stats.filesClosed,
        open: dataset.files.filter((f) => f.file !== null).length,
      });
      dataset.close();
    }
    const alive = reader.workerCount;
    reader.dispose();
    return { passes, alive };
  }, urls);
  expect(result.alive).toBeGreaterThan(0);
  for (const pass of result.passes) {
    expect(pass.count).toBe(reference.hive.rows);
    expect(pass.firstIds).toEqual(reference.hive.firstIds);
    expect(pass.eu).toEqual({ rows: reference.hive.euCheap.rows, sumId: reference.hive.euCheap.sumId });
    expect(pass.late).toBeCloseTo(reference.hive.lateSumValue, 6);
    // The four EU files read, each closed once the scan was past it but the last one.
    expect(pass.closed).toBeGreaterThanOrEqual(3);
    expect(pass.open).toBeLessThanOrEqual(1);
  }
});

test('a chosen folder of Files: partitions from their relative paths, the same answers', async ({ harness }) => {
  await harness.setInputFiles('#folder-input', path.join(datasets, 'hive'));
  const result = await harness.evaluate(async () => {
    const { skim, chosenFolder } = window.harness;
    const files = chosenFolder().sort((a, b) => (a.webkitRelativePath < b.webkitRelativePath ? -1 : 1));
    const reader = await skim.createReader();
    const dataset = await reader.openDataset(files);
    const out = {
      paths: dataset.files.map((f) => f.path),
      partitions: dataset.partitions.map((p) => `${p.name}:${p.type}`),
      nulls: await dataset.count({ filter: 'region IS NULL' }),
      firstIds: [...((await dataset.scan({ columns: ['id'], limit: 20 }).toTable()).getChild('id') ?? [])].map(Number),
    };
    reader.dispose();
    return out;
  });
  expect(result.paths).toEqual(reference.hive.files.map((f) => `hive/${f}`));
  expect(result.partitions).toEqual(['year:int64', 'region:string']);
  expect(result.nulls).toBe(reference.hive.regionNull);
  expect(result.firstIds).toEqual(reference.hive.firstIds);
});

test('files whose types differ are widened as pyarrow unifies them, missing columns read as nulls', async ({
  harness,
  server,
}) => {
  const urls = reference.mixed.files.map((f) => `${server.url}/sample/datasets/mixed/${f}`);
  const result = await harness.evaluate(async (urls) => {
    const reader = await window.harness.skim.createReader();
    const dataset = await reader.openDataset(urls, { schema: 'union' });
    const table = await dataset.scan().toTable();
    const columns = Object.fromEntries(
      table.schema.fields.map((f) => [
        f.name,
        [...(table.getChild(f.name) ?? [])].map((v) => (typeof v === 'bigint' ? Number(v) : v)),
      ]),
    );
    reader.dispose();
    return { types: table.schema.fields.map((f) => `${f.name}:${f.type}`), columns };
  }, urls);
  expect(result.types).toEqual(['id:Int64', 'value:Float64', 'name:LargeUtf8', 'extra:Int32']);
  expect(reference.mixed.types).toEqual({ id: 'int64', value: 'double', name: 'large_string', extra: 'int32' });
  expect(result.columns).toEqual(reference.mixed.columns);
});

test('a file that fails: the open or the scan fails naming it, or it is skipped and listed', async ({
  harness,
  server,
}) => {
  const broken = reference.broken.files.map((f) => `${server.url}/sample/datasets/broken/${f}`);
  // A file whose footer reads but whose data requests fail (HTTP 500 after the first GET).
  const hive = reference.hive.files
    .slice(0, 3)
    .map((f, i) =>
      i === 1
        ? `${server.url}/hostile/after-1+status-500/sample/datasets/hive/${f}?run=${Date.now()}`
        : `${server.url}/sample/datasets/hive/${f}`,
    );
  const result = await harness.evaluate(
    async ({ broken, hive }) => {
      const { skim, describeError } = window.harness;
      const reader = await skim.createReader();
      const openFail = await reader.openDataset(broken, { schema: 'union' }).then(() => null, describeError);
      const skipping = await reader.openDataset(broken, { onFileError: 'skip', schema: 'union' });
      const skippedRows = (await skipping.scan({ columns: ['id'] }).toTable()).numRows;
      // A small tail read, so that the footer is all the open reads (the files are 150 KB).
      const midScan = await reader.openDataset(hive, { footerReadBytes: 8192 });
      const scanFail = await midScan
        .scan({ columns: ['id', 'name'] })
        .toTable()
        .then(() => null, describeError);
      const midSkip = await reader.openDataset(hive, { onFileError: 'skip', footerReadBytes: 8192 });
      const scan = midSkip.scan({ columns: ['id', 'name'] });
      const rows = (await scan.toTable()).numRows;
      reader.dispose();
      return {
        openFail,
        failedAtOpen: skipping.files.map((f) => f.error?.code ?? null),
        skippedRows,
        scanFail,
        rows,
        fates: scan.stats.files.map((f) => f.fate),
        skipped: scan.stats.filesSkipped,
      };
    },
    { broken, hive },
  );
  expect(result.openFail).toMatchObject({ code: 'INVALID_FILE', file: '/sample/datasets/broken/bad.parquet' });
  expect(result.openFail?.message).toContain('bad.parquet');
  expect(result.failedAtOpen).toEqual([null, 'INVALID_FILE', null]);
  expect(result.skippedRows).toBe(reference.broken.goodRows);
  expect(result.scanFail?.code).toBe('HTTP_STATUS');
  expect(result.scanFail?.file).toContain('/hostile/after-1+status-500/');
  const rows = reference.hive.files.slice(0, 3).map((f) => reference.hive.rowsPerFile[f] ?? 0);
  expect(result.rows).toBe((rows[0] ?? 0) + (rows[2] ?? 0));
  expect(result.fates).toEqual(['read', 'failed', 'read']);
  expect(result.skipped).toBe(1);
});

test('cancelling a dataset scan leaves no request open, across files', async ({ harness, server }) => {
  const urls = reference.hive.files.map((f) => `${server.url}/sample/datasets/hive/${f}`);
  const outcome = await harness.evaluate(async (urls) => {
    const { skim, describeError } = window.harness;
    const reader = await skim.createReader({ ioConcurrency: 2 });
    const dataset = await reader.openDataset(urls);
    const controller = new AbortController();
    let batches = 0;
    const error = await (async () => {
      for await (const _ of dataset.scan({ columns: ['id', 'name'], signal: controller.signal, batchSize: 1000 })) {
        batches += 1;
        if (batches === 2) controller.abort();
      }
    })().then(() => null, describeError);
    reader.dispose();
    return { error, batches };
  }, urls);
  expect(outcome.error?.name).toBe('AbortError');
  await expect.poll(() => server.openRequests, { timeout: 5000 }).toBe(0);
});

test('a dataset of small files weighs as small: with the workers ready, the page decodes its scan itself', async ({
  harness,
  server,
}) => {
  // The test hive dataset: 12 files of ~10,000 rows. Its scan of `id` plans well under the page's
  // 2 MiB (inlineScanBytes) in all: each file's share, times the files, is what it weighs.
  const urls = reference.hive.files.map((f) => `${server.url}/sample/datasets/hive/${f}`);
  const result = await harness.evaluate(async (urls) => {
    const { skim } = window.harness;
    const reader = await skim.createReader({ workers: 2 });
    const dataset = await reader.openDataset(urls);
    await dataset.scan({ columns: ['id'], limit: 10 }).toTable();
    for (let i = 0; i < 200 && reader.stats().workers.ready < 2; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const ready = reader.stats().workers.ready;
    const before = reader.stats().workers.tasksOnPage;
    const scan = dataset.scan({ columns: ['id'] });
    const table = await scan.toTable();
    let sum = 0;
    for (const id of table.getChild('id') ?? []) sum += Number(id);
    const out = {
      ready,
      rows: table.numRows,
      sum,
      tasks: scan.stats.tasksTotal,
      onPage: reader.stats().workers.tasksOnPage - before,
      plannedBytes: scan.stats.bytesPlanned,
    };
    reader.dispose();
    return out;
  }, urls);
  expect(result.ready).toBe(2);
  expect(result.rows).toBe(reference.hive.rows);
  expect(result.sum).toBe((reference.hive.rows * (reference.hive.rows - 1)) / 2);
  expect(result.plannedBytes).toBeLessThan(2 * 1024 * 1024);
  expect(result.tasks).toBeGreaterThan(1);
  expect(result.onPage).toBe(result.tasks);
});

test('a dataset whose footers outgrow the page’s memory fails with OUT_OF_MEMORY, and within footerMemoryBytes the same reader counts it', async ({
  harness,
}) => {
  const result = await harness.evaluate(async () => {
    const { skim, describeError } = window.harness;
    // 100 names of the sample file: 100 footers of ~0.4 MB each in the core (page index bytes
    // and offset indexes; the column indexes decode only for the filter's column), where a page
    // (and each worker) may have 32 MiB. Before, memory running out read as `INTERNAL: unreachable`.
    const reader = await skim.createReader({ memoryLimitBytes: 32 * 2 ** 20 });
    const urls = Array.from({ length: 100 }, (_, i) => `/sample/lineitem-sf1.parquet?copy=${i}`);
    const filter = 'l_quantity < 2';
    const one = await reader.openDataset(urls.slice(0, 1));
    const perFile = await one.count({ filter });
    one.close();
    let error: ReturnType<typeof describeError> | null = null;
    const unbounded = await reader.openDataset(urls, { footerMemoryBytes: 2 ** 40 });
    try {
      await unbounded.count({ filter });
    } catch (e) {
      error = describeError(e);
    }
    // Closing after the failure frees what the dataset held (and does not fail itself).
    unbounded.close();
    const bounded = await reader.openDataset(urls, { footerMemoryBytes: 4 * 2 ** 20 });
    const rows = await bounded.count({ filter });
    const held = bounded.memoryBytes;
    bounded.close();
    // With no footerMemoryBytes given, a reader with a memory limit bounds the footers to a quarter of it.
    const byDefault = await reader.openDataset(urls);
    const rowsByDefault = await byDefault.count({ filter });
    const heldByDefault = byDefault.memoryBytes;
    byDefault.close();
    reader.dispose();
    return { error, perFile, rows, held, rowsByDefault, heldByDefault };
  });
  expect(result.error).toMatchObject({ name: 'ParquetSkimError', code: 'OUT_OF_MEMORY', isSkimError: true });
  expect(result.error?.message).toMatch(
    /the page's WebAssembly core could not allocate [\d.]+ (bytes|KiB|MiB): it has [\d.]+ MiB, and its limit is memoryLimitBytes, 32 MiB.*footerMemoryBytes/,
  );
  expect(result.perFile).toBeGreaterThan(0);
  expect(result.rows).toBe(100 * result.perFile);
  expect(result.held).toBeLessThanOrEqual(4 * 2 ** 20);
  expect(result.rowsByDefault).toBe(result.rows);
  expect(result.heldByDefault).toBeLessThanOrEqual(8 * 2 ** 20);
});
