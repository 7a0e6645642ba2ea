import { copyFile, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';
import vm from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRangeServer } from '../../../tests/server/range-server.mjs';
import { count, expr, max, min, sum } from '../aggregate.js';
import { ParquetSkimError } from '../errors.js';
import { col } from '../filter.js';
import { createReader, type Reader } from '../reader.js';
import type { Dataset } from './dataset.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const dataDir = path.resolve(here, '../../../../shared/parquet-testing/data');
const blob = async (name: string) => new Blob([await readFile(path.join(dataDir, name))]);

let reader: Reader;
let dataset: Dataset;
/** Each file's ids, read one file at a time: what the dataset must return, in order. */
const ids: number[][] = [];
const FILES = [
  ['region=EU/day=2009-01-01/a.parquet', 'alltypes_plain.parquet'],
  ['region=US/day=2009-02-01/b.parquet', 'alltypes_plain.snappy.parquet'],
  ['region=EU/day=2009-03-01/c.parquet', 'alltypes_dictionary.parquet'],
  // tinyint_col is int8 here (int32 in the others), and it has year and month columns.
  ['region=__HIVE_DEFAULT_PARTITION__/day=2009-04-01/d.parquet', 'alltypes_tiny_pages.parquet'],
] as const;

beforeAll(async () => {
  reader = await createReader();
  const sources = await Promise.all(FILES.map(async ([p, name]) => ({ path: p, file: await blob(name) })));
  dataset = await reader.openDataset(sources, { schema: 'union' });
  for (const { file } of sources) {
    const table = await (await reader.open(file)).scan({ columns: ['id'] }).toTable();
    ids.push([...(table.getChild('id') ?? [])] as number[]);
  }
});

afterAll(() => reader.dispose());

const idsOf = async (scan: ReturnType<Dataset['scan']>) =>
  [...((await scan.toTable()).getChild('id') ?? [])] as number[];

describe('a dataset of files read as one table', () => {
  it('refuses bad row options by the core rule, before any file is planned', async () => {
    for (const [options, option] of [
      [{ offset: -1 }, 'offset'],
      [{ limit: Number.NaN }, 'limit'],
      [{ limit: 2.5, filter: 'id > 1' }, 'limit'],
      [{ batchSize: 0 }, 'batchSize'],
    ] as const) {
      expect(() => dataset.scan(options)).toThrow(
        expect.objectContaining({ code: 'INVALID_ARGUMENT', message: expect.stringContaining(`'${option}'`) }),
      );
    }
    await expect(dataset.aggregate({ aggregates: {} })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringContaining("'aggregates'"),
    });
    await expect(dataset.aggregate({ aggregates: { n: count() }, batchSize: 1.5 })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringContaining("'batchSize'"),
    });
  });

  it('has one schema: widened, the union of columns, then the partitions', () => {
    const fields = Object.fromEntries(dataset.schema.fields.map((f) => [f.name, String(f.type)]));
    expect(fields.tinyint_col).toBe('Int32');
    expect(fields.year).toBe('Int32');
    expect(dataset.schema.fields.slice(-2).map((f) => `${f.name}:${f.type}`)).toEqual([
      'region:Utf8',
      'day:Date32<DAY>',
    ]);
    expect(dataset.files.map((f) => f.rows)).toEqual([8, 2, 2, 7300]);
    expect(dataset.files[3]?.partitions).toEqual({ region: null, day: '2009-04-01' });
    expect(dataset.stats).toMatchObject({ files: 4, filesOpened: 4, filesFailed: 0 });
  });

  it('reads every file in order, with partition values and nulls for missing columns', async () => {
    const table = await dataset.scan({ columns: ['id', 'tinyint_col', 'year', 'region', 'day'] }).toTable();
    expect(table.numRows).toBe(7312);
    expect([...(table.getChild('id') ?? [])]).toEqual(ids.flat());
    const region = [...(table.getChild('region') ?? [])];
    expect(region.slice(0, 12)).toEqual([...Array(8).fill('EU'), 'US', 'US', 'EU', 'EU']);
    expect(region[12]).toBeNull();
    expect(table.getChild('year')?.get(0)).toBeNull();
    expect(table.getChild('year')?.get(12)).toBe(2009);
    expect(table.getChild('day')?.get(8)).toBe(Date.UTC(2009, 1, 1));
    expect(typeof table.getChild('tinyint_col')?.get(12)).toBe('number');
  });

  it('places offset and limit across files by their row counts', async () => {
    expect(await idsOf(dataset.scan({ columns: ['id'], offset: 9, limit: 5 }))).toEqual(ids.flat().slice(9, 14));
    const scan = dataset.scan({ columns: ['id'], limit: 3 });
    expect(await idsOf(scan)).toEqual(ids.flat().slice(0, 3));
    expect(scan.stats.files.map((f) => f.fate)).toEqual(['read', 'unread', 'unread', 'unread']);
  });

  it('prunes files by partition values without reading them', async () => {
    const scan = dataset.scan({ columns: ['id', 'region'], filter: "region = 'US'" });
    expect(await idsOf(scan)).toEqual(ids[1]);
    const stats = scan.stats;
    expect(stats.filesPrunedByPartition).toBe(3);
    expect(stats.files.map((f) => f.fate)).toEqual(['partition', 'read', 'partition', 'partition']);
    expect(stats.files[0]?.scan).toBeNull();
  });

  it('folds a filter on a column some files lack, and keeps the rest for the others', async () => {
    const year = dataset.scan({ columns: ['id'], filter: col('year').eq(2010).and(col('id').lt(4000)) });
    const expected = await (await reader.open(await blob('alltypes_tiny_pages.parquet')))
      .scan({ columns: ['id'], filter: 'year = 2010 AND id < 4000' })
      .toTable();
    expect(await idsOf(year)).toEqual([...(expected.getChild('id') ?? [])]);
    expect(await dataset.count({ filter: 'year IS NULL' })).toBe(12);
    const mixed = await idsOf(dataset.scan({ columns: ['id'], filter: "region = 'EU' AND id >= 6" }));
    expect(mixed).toEqual([...(ids[0] ?? []), ...(ids[2] ?? [])].filter((id) => id >= 6));
  });

  it('applies offset and limit over a filter in file order', async () => {
    const all = await idsOf(dataset.scan({ columns: ['id'], filter: 'id >= 1' }));
    expect(all).toEqual(ids.flat().filter((id) => id >= 1));
    expect(await idsOf(dataset.scan({ columns: ['id'], filter: 'id >= 1', offset: 8, limit: 6 }))).toEqual(
      all.slice(8, 14),
    );
  });

  it('reads only partition columns by counting rows', async () => {
    const table = await dataset.scan({ columns: ['region'] }).toTable();
    expect(table.numRows).toBe(7312);
    expect(table.schema.fields.map((f) => f.name)).toEqual(['region']);
  });

  it('aggregates across files exactly; count() without a filter comes from the footers', async () => {
    const whole = await dataset.aggregate({ aggregates: { n: count(), total: sum(col('id')) } });
    expect(whole.values.n).toBe(7312);
    expect(whole.values.total).toBe(BigInt(ids.flat().reduce((a, b) => a + b, 0)));
    const rows = await dataset.aggregate({ aggregates: { n: count() } });
    expect(rows.values.n).toBe(7312);
    expect(rows.stats.requests).toBe(0);
    expect(await dataset.count({ filter: "region = 'EU'" })).toBe(10);
    const byYear = await dataset.aggregate({ aggregates: { n: count(col('year')) }, filter: 'id < 100' });
    expect(byYear.values.n).toBe(ids[3]?.filter((id) => id < 100).length);
  });

  it('leaves out a column whose types conflict, and names both files when it is asked for', () => {
    // Binary (no UTF8 annotation) in the older files, Utf8 in alltypes_tiny_pages.
    expect(dataset.schema.fields.map((f) => f.name)).not.toContain('date_string_col');
    let error: unknown;
    try {
      dataset.scan({ columns: ['id', 'date_string_col'] });
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ code: 'SCHEMA_MISMATCH' });
    expect((error as Error).message).toMatch(
      /'date_string_col' is Binary in 'region=EU.*a\.parquet' but Utf8 in '.*d\.parquet'/,
    );
    expect(() => dataset.scan({ filter: "date_string_col = '01/01/09'" })).toThrow(/SCHEMA|widens/);
  });

  it('names the column when it is unknown, and refuses what partition columns cannot answer', async () => {
    expect(() => dataset.scan({ columns: ['nope'] })).toThrow(/unknown column 'nope'/);
    await expect(dataset.aggregate({ aggregates: { s: sum(col('region')) } })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringContaining("the partition column 'region' holds strings"),
    });
    await expect(dataset.aggregate({ aggregates: { s: max(expr(col('day')).add(1)) } })).rejects.toMatchObject({
      code: 'UNSUPPORTED',
      message: expect.stringContaining("partition columns alone ('day')"),
    });
  });

  it('aggregates partition columns as the rows that pass and their files’ values, as a scan sees them', async () => {
    const filter = 'id < 100 OR int_col = 1';
    const table = await dataset.scan({ columns: ['id', 'region', 'day'], filter }).toTable();
    const idSum = ([...(table.getChild('id') ?? [])] as number[]).reduce((a, b) => a + BigInt(b), 0n);
    const regions = [...(table.getChild('region') ?? [])] as Array<string | null>;
    const days = [...(table.getChild('day') ?? [])].map((d) => new Date(d as number).toISOString().slice(0, 10));
    const present = regions.filter((r): r is string => r !== null).sort();
    const result = await dataset.aggregate({
      filter,
      aggregates: {
        rows: count(),
        regions: count(col('region')),
        firstRegion: min(col('region')),
        lastRegion: max(col('region')),
        firstDay: min(col('day')),
        lastDay: max(col('day')),
        ids: sum(col('id')),
      },
    });
    expect(table.numRows).toBeGreaterThan(0);
    expect(present.length).toBeLessThan(table.numRows);
    expect(result.values).toMatchObject({
      rows: table.numRows,
      regions: present.length,
      firstRegion: present[0],
      lastRegion: present[present.length - 1],
      firstDay: [...days].sort()[0],
      lastDay: [...days].sort()[days.length - 1],
      // Folded by the tasks beside the count the partition aggregates are made from.
      ids: idSum,
    });
    // Unfiltered, counts of partition columns come from the footers: nothing is fetched.
    const whole = await dataset.aggregate({ aggregates: { regions: count(col('region')), lastDay: max(col('day')) } });
    expect(whole.values).toEqual({ regions: 7312 - (ids[3]?.length ?? 0), lastDay: '2009-04-01' });
    expect(whole.stats.requests).toBe(0);
  });

  it('puts int64 partition values into arithmetic with the files’ columns, exactly', async () => {
    const byYear = await reader.openDataset(
      await Promise.all(
        [
          ['year=2008/a.parquet', 'alltypes_plain.parquet'],
          ['year=2009/b.parquet', 'alltypes_dictionary.parquet'],
          ['year=__HIVE_DEFAULT_PARTITION__/c.parquet', 'alltypes_plain.snappy.parquet'],
        ].map(async ([p, name]) => ({ path: p as string, file: await blob(name as string) })),
      ),
    );
    expect(byYear.schema.fields.find((f) => f.name === 'year')?.type.toString()).toBe('Int64');
    const filter = 'id > 0';
    const table = await byYear.scan({ columns: ['id', 'year'], filter }).toTable();
    const idsOut = [...(table.getChild('id') ?? [])] as number[];
    const years = [...(table.getChild('year') ?? [])] as Array<bigint | null>;
    let weighted = 0n;
    let yearSum = 0n;
    idsOut.forEach((id, i) => {
      const year = years[i];
      if (year === null || year === undefined) return;
      weighted += BigInt(id) * year;
      yearSum += year;
    });
    const { values } = await byYear.aggregate({
      filter,
      aggregates: {
        weighted: sum(expr(col('id')).mul(col('year'))),
        years: sum(col('year')),
        n: count(col('year')),
        top: max(col('year')),
      },
    });
    expect(years.some((y) => y === null)).toBe(true);
    expect(values).toEqual({
      weighted,
      years: yearSum,
      n: years.filter((y) => y !== null).length,
      top: 2009n,
    });
    byYear.close();
  });

  it('fails on a file that is not Parquet, naming it; or skips it and lists it', async () => {
    const good = { path: 'a.parquet', file: await blob('alltypes_plain.parquet') };
    const bad = { path: 'broken/b.parquet', file: new Blob(['<html>not parquet</html>']) };
    const error = await reader.openDataset([good, bad], { schema: 'union' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ParquetSkimError);
    expect((error as ParquetSkimError).code).toBe('INVALID_FILE');
    expect((error as ParquetSkimError).file).toBe('broken/b.parquet');
    expect((error as ParquetSkimError).message).toContain("'broken/b.parquet'");
    // By default only the first footer is read at open: the bad file fails the scan that reaches it.
    const lazy = await reader.openDataset([good, bad]);
    expect(await idsOf(lazy.scan({ columns: ['id'], limit: 3 }))).toEqual(ids[0]?.slice(0, 3));
    await expect(lazy.scan({ columns: ['id'] }).toTable()).rejects.toMatchObject({
      code: 'INVALID_FILE',
      file: 'broken/b.parquet',
    });
    const skipping = await reader.openDataset([good, bad], { onFileError: 'skip', schema: 'union' });
    expect(skipping.files[1]?.error?.code).toBe('INVALID_FILE');
    const scan = skipping.scan({ columns: ['id'] });
    expect(await idsOf(scan)).toEqual(ids[0]);
    expect(scan.stats.filesSkipped).toBe(1);
  });
});

describe('a dataset over HTTP whose footers are read as scans need them', () => {
  let server: Awaited<ReturnType<typeof startRangeServer>>;
  let dir: string;
  const urls: string[] = [];

  beforeAll(async () => {
    // The parquet-testing files under hive directories (a temporary copy: the folder layout is the test).
    dir = await mkdtemp(path.join(os.tmpdir(), 'skim-dataset-'));
    for (const [p, name] of FILES) {
      await mkdir(path.dirname(path.join(dir, p)), { recursive: true });
      await copyFile(path.join(dataDir, name), path.join(dir, p));
    }
    server = await startRangeServer({ mounts: { '/ds/': dir } });
    for (const [p] of FILES) urls.push(`${server.url}/ds/${p}`);
  });

  afterAll(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  const requestsTo = (name: string) => server.log.filter((e) => e.path.endsWith(name)).length;

  it("with schema: 'first', reads one footer at open, and never touches files a partition filter prunes", async () => {
    server.resetLog();
    const lazy = await reader.openDataset(urls, { schema: 'first' });
    expect(server.log.map((e) => e.path)).toEqual(['/ds/region=EU/day=2009-01-01/a.parquet']);
    expect(lazy.files.map((f) => f.rows)).toEqual([8, null, null, null]);
    server.resetLog();
    const scan = lazy.scan({ columns: ['id', 'region'], filter: "region = 'US'" });
    expect(await idsOf(scan)).toEqual(ids[1]);
    expect(requestsTo('a.parquet')).toBe(0);
    expect(requestsTo('c.parquet')).toBe(0);
    expect(requestsTo('d.parquet')).toBe(0);
    expect(requestsTo('b.parquet')).toBeGreaterThan(0);
    // Its tail read fitted to the first file's footer, not the 512 KiB a lone file gets.
    const tail = server.log.find((e) => e.path.endsWith('b.parquet'))?.range;
    expect(tail).toBe('bytes=-16384');
    expect(lazy.files.map((f) => f.rows)).toEqual([8, 2, null, null]);
    // A first-rows scan opens only the files it reads.
    const fresh = await reader.openDataset(urls, { schema: 'first' });
    server.resetLog();
    expect(await idsOf(fresh.scan({ columns: ['id'], limit: 10 }))).toEqual(ids.flat().slice(0, 10));
    // a.parquet (8 rows) came whole with its open's tail read; b.parquet is opened and read; c and d are not touched.
    expect(new Set(server.log.map((e) => e.path.split('/').pop()))).toEqual(new Set(['b.parquet']));
    // A scan of everything opens the rest; its columns keep the first file's types.
    expect(await idsOf(lazy.scan({ columns: ['id', 'tinyint_col'] }))).toEqual(ids.flat());
    expect(String(lazy.schema.fields.find((f) => f.name === 'tinyint_col')?.type)).toBe('Int32');
    expect(lazy.schema.fields.map((f) => f.name)).not.toContain('year');
    expect(() => lazy.scan({ columns: ['year'] })).toThrow(/schema: 'union'/);
  });

  it("with schema: 'first', a later file's column that does not fit fails the scans that read it, naming the file", async () => {
    const lazy = await reader.openDataset(urls, { schema: 'first' });
    const error = await lazy
      .scan({ columns: ['id', 'date_string_col'] })
      .toTable()
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'SCHEMA_MISMATCH' });
    expect((error as ParquetSkimError).message).toMatch(/'date_string_col' is Binary .* but Utf8 in '.*d\.parquet'/);
    expect(await idsOf(lazy.scan({ columns: ['id'] }))).toEqual(ids.flat());
  });

  it('keeps the files it holds open within footerMemoryBytes, and opens a closed one again when a scan reaches it', async () => {
    for (const schema of ['first', 'union'] as const) {
      const unbounded = await reader.openDataset(urls, { schema });
      await unbounded.count({ filter: 'id >= 0' });
      const everyFile = unbounded.files.map((f) => f.file?.memoryBytes ?? 0);
      expect(unbounded.memoryBytes).toBe(everyFile.reduce((a, b) => a + b, 0));
      expect(unbounded.files.every((f) => f.file !== null)).toBe(true);
      const largest = Math.max(...everyFile);
      // Room for about one file: each is closed once no scan reads it.
      const budget = largest + 1;
      const bounded = await reader.openDataset(urls, { schema, footerMemoryBytes: budget });
      expect(bounded.schema.fields.map(String)).toEqual(unbounded.schema.fields.map(String));
      expect(bounded.memoryBytes).toBeLessThanOrEqual(budget);
      for (let pass = 0; pass < 2; pass++) {
        server.resetLog();
        const scan = bounded.scan({ columns: ['id', 'region'] });
        expect(await idsOf(scan)).toEqual(ids.flat());
        expect(scan.stats.filesClosed).toBeGreaterThanOrEqual(2);
        expect(bounded.memoryBytes).toBeLessThanOrEqual(budget);
      }
      expect(await bounded.count({ filter: "region = 'EU'" })).toBe(await unbounded.count({ filter: "region = 'EU'" }));
      expect(bounded.memoryBytes).toBeLessThanOrEqual(budget);
      expect(bounded.files.filter((f) => f.file === null).length).toBeGreaterThanOrEqual(2);
      expect(bounded.files.map((f) => f.rows)).toEqual([8, 2, 2, 7300]);
      bounded.close();
      unbounded.close();
    }
    await expect(reader.openDataset(urls, { footerMemoryBytes: -1 })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringContaining("'footerMemoryBytes'"),
    });
  });

  it('lets go of every file a scan held, however the scan ends; a closed dataset opens nothing again', async () => {
    for (const schema of ['first', 'union'] as const) {
      // No room at all: every file no scan holds is closed at once.
      const ds = await reader.openDataset(urls, { schema, footerMemoryBytes: 1 });
      expect(ds.memoryBytes).toBe(0);
      // To the end.
      expect(await idsOf(ds.scan({ columns: ['id'] }))).toEqual(ids.flat());
      expect(ds.memoryBytes).toBe(0);
      // Ended by a limit over a filter (the run returns early).
      expect(await idsOf(ds.scan({ columns: ['id'], filter: 'id >= 0', limit: 9 }))).toEqual(ids.flat().slice(0, 9));
      expect(ds.memoryBytes).toBe(0);
      // Left by its consumer after the first batch.
      for await (const batch of ds.scan({ columns: ['id'], batchSize: 2 })) {
        expect(batch.numRows).toBe(2);
        break;
      }
      expect(ds.memoryBytes).toBe(0);
      // Cancelled.
      const controller = new AbortController();
      const cancelled = ds.scan({ columns: ['id'], signal: controller.signal });
      const ended = (async () => {
        for await (const _ of cancelled) controller.abort();
      })();
      await expect(ended).rejects.toBeDefined();
      expect(ds.memoryBytes).toBe(0);
      // An aggregate, and a failing one.
      expect(await ds.count({ filter: 'id >= 0' })).toBe(ids.flat().length);
      expect(ds.memoryBytes).toBe(0);
      ds.close();
      await expect(ds.scan({ columns: ['id'] }).toTable()).rejects.toMatchObject({ code: 'DISPOSED' });
      expect(ds.memoryBytes).toBe(0);
    }
    // Room for the largest file: a scan opens the small ones ahead of it. Left after its first
    // batch, it must let go of the files it opened ahead and never reached, or they stay open
    // past the bound through every later scan.
    const sizes = await (async () => {
      const all = await reader.openDataset(urls, { schema: 'union' });
      const bytes = all.files.map((f) => f.file?.memoryBytes ?? 0);
      all.close();
      return bytes;
    })();
    const budget = Math.max(...sizes) + 1;
    const ds = await reader.openDataset(urls, { footerMemoryBytes: budget });
    for await (const _ of ds.scan({ columns: ['id'], batchSize: 2 })) break;
    expect(await idsOf(ds.scan({ columns: ['id'] }))).toEqual(ids.flat());
    expect(ds.memoryBytes).toBeLessThanOrEqual(budget);
  });

  it('lets go of the files a scan held when its iterator is dropped unfinished, at the next garbage collection', async () => {
    // The engine's collector, on demand (V8's flag, set at run time; its `gc` from a new context).
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    const ds = await reader.openDataset(urls, { footerMemoryBytes: 1 });
    // A first batch, and the iterator dropped: no `break`, no return().
    await (async () => {
      const iterator = ds.scan({ columns: ['id'], batchSize: 2 })[Symbol.asyncIterator]();
      expect((await iterator.next()).value?.numRows).toBe(2);
    })();
    // Its scan still holds the file it was reading.
    expect(ds.memoryBytes).toBeGreaterThan(0);
    for (let i = 0; i < 50 && ds.memoryBytes > 0; i++) {
      gc();
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(ds.memoryBytes).toBe(0);
    // And the dataset reads on, whole.
    expect(await idsOf(ds.scan({ columns: ['id'] }))).toEqual(ids.flat());
    ds.close();
  });

  it('reads a manifest of paths and sizes, relative to its URL', async () => {
    server.resetLog();
    const manifest = `data:application/json,${encodeURIComponent(
      JSON.stringify(FILES.map(([p]) => ({ path: `${server.url}/ds/${p}` }))),
    )}`;
    const fromManifest = await reader.openDataset({ manifest });
    expect(fromManifest.files.map((f) => f.path)).toEqual(urls);
    expect(await fromManifest.count()).toBe(7312);
  });

  it('fails the open on a missing file with its URL, or skips it', async () => {
    const missing = `${server.url}/ds/region=EU/day=2009-05-01/missing.parquet`;
    const error = await reader.openDataset([urls[0] as string, missing], { schema: 'union' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'HTTP_STATUS', file: '/ds/region=EU/day=2009-05-01/missing.parquet' });
    const skipping = await reader.openDataset([urls[0] as string, missing], { onFileError: 'skip', schema: 'union' });
    expect(skipping.stats).toMatchObject({ files: 2, filesOpened: 1, filesFailed: 1 });
    expect(await idsOf(skipping.scan({ columns: ['id'] }))).toEqual(ids[0]);
  });
});
