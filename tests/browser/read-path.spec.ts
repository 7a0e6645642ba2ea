/**
 * The read path end to end in Chromium: page → Rust core in WebAssembly → Web Workers → Arrow in
 * the page, against a real range server. Asserts the I/O of each query, not just its answer.
 */

import { readFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { cacheDir, expect, parquetTestingDir, test } from './fixtures.ts';

test('a 3-column limit-100 scan of a >100 MB file: one metadata read, then first pages concurrently', async ({
  harness,
  server,
}) => {
  const sampleSize = (await stat(path.join(cacheDir, 'data/lineitem-sf1.parquet'))).size;
  expect(sampleSize).toBeGreaterThan(100 * 1024 * 1024);
  server.resetLog();
  const result = await harness.evaluate(async () => {
    const { skim } = window.harness;
    // In workers (not on the page, as a small first query would be), like the rest of the file.
    const reader = await skim.createReader({ workers: 2, inlineTaskBytes: 0 });
    const file = await reader.open('/sample/lineitem-sf1.parquet');
    const afterOpen = file.requestLog().length;
    const scan = file.scan({ columns: ['l_orderkey', 'l_quantity', 'l_shipdate'], limit: 100 });
    const table = await scan.toTable();
    const out = {
      fileLen: file.byteLength,
      afterOpen,
      log: file.requestLog(),
      rows: table.numRows,
      names: table.schema.fields.map((f) => f.name),
      orderkeys: Array.from(table.getChild('l_orderkey')?.toArray() ?? [], Number),
      stats: { ...scan.stats },
      workers: reader.workerCount,
    };
    reader.dispose();
    return out;
  });
  console.log(`\nrequest log for a limit-100 scan of ${(result.fileLen / 2 ** 20).toFixed(1)} MiB:`);
  for (const e of result.log) {
    console.log(`  ${e.status}  ${String(e.range).padEnd(26)} ${String(e.bytes).padStart(8)} B  ${e.ms.toFixed(1)} ms`);
  }
  const total = result.log.reduce((sum, e) => sum + e.bytes, 0);
  console.log(`  total ${total} B = ${((100 * total) / result.fileLen).toFixed(3)}% of the file`);

  expect(result.fileLen).toBe(sampleSize);
  expect(result.rows).toBe(100);
  expect(result.names).toEqual(['l_orderkey', 'l_quantity', 'l_shipdate']);
  expect(result.orderkeys[0]).toBe(1);
  expect(result.orderkeys).toEqual([...result.orderkeys].sort((a, b) => a - b));
  expect(result.workers).toBe(2);
  // Round trip 1: the metadata, with one suffix read (footer + page index fit in 512 KiB).
  expect(result.afterOpen).toBe(1);
  const [meta, ...data] = result.log;
  expect(meta?.range).toBe('bytes=-524288');
  expect(meta?.status).toBe(206);
  // Round trip 2: only first pages of the projected columns, all in flight together — here one
  // request for the three (several ranges: the range server answers with parts, as nginx does).
  expect(data.length).toBe(1);
  expect(data[0]?.parts).toBe(3);
  const metaDone = (meta?.at ?? 0) + (meta?.ms ?? 0);
  const firstDataDone = Math.min(...data.map((e) => e.at + e.ms));
  for (const e of data) {
    expect(e.status).toBe(206);
    expect(e.range).toMatch(/^bytes=\d+-\d+(,\d+-\d+)*$/);
    expect(e.at).toBeGreaterThanOrEqual(metaDone - 1);
    expect(e.at).toBeLessThanOrEqual(firstDataDone);
  }
  expect(total).toBeLessThan(0.02 * result.fileLen);
  // The server saw exactly these requests: no HEAD, no preflight, nothing else.
  const fileRequests = server.log.filter((e) => e.path.startsWith('/sample/'));
  expect(fileRequests.map((e) => `${e.method} ${e.range}`).sort()).toEqual(
    result.log.map((e) => `GET ${e.range}`).sort(),
  );
});

test('URL, File (file chooser), Blob and ArrayBuffer sources return identical tables', async ({ harness }) => {
  await harness.setInputFiles('#file-input', path.join(parquetTestingDir, 'alltypes_tiny_pages.parquet'));
  const result = await harness.evaluate(async () => {
    const { skim, canonicalTable } = window.harness;
    const reader = await skim.createReader({ workers: 2 });
    const url = '/data/alltypes_tiny_pages.parquet';
    const bytes = await (await fetch(url)).arrayBuffer();
    const sources = {
      url,
      file: window.harness.chosenFile(),
      blob: new Blob([bytes]),
      arrayBuffer: bytes,
      uint8Array: new Uint8Array(bytes),
    };
    const tables: Record<string, string> = {};
    for (const [name, source] of Object.entries(sources)) {
      const file = await reader.open(source);
      tables[name] = JSON.stringify(canonicalTable(await file.scan().toTable()));
    }
    reader.dispose();
    return tables;
  });
  expect(result.url.length).toBeGreaterThan(1000);
  for (const name of ['file', 'blob', 'arrayBuffer', 'uint8Array']) expect(result[name]).toBe(result.url);
});

test('the page decodes its own tasks in slices, yielding to the event loop between them', async ({ harness }) => {
  const result = await harness.evaluate(async () => {
    const { skim } = window.harness;
    const reader = await skim.createReader({ workers: 0 });
    const file = await reader.open('/data/alltypes_tiny_pages.parquet');
    const whole = await file.scan({ columns: ['id', 'string_col'] }).toTable();
    const before = reader.stats().workers.pageSlices;
    // 7,300 batches of one row: far past one 8 ms slice.
    const sliced = await file.scan({ columns: ['id', 'string_col'], batchSize: 1 }).toTable();
    const slices = reader.stats().workers.pageSlices - before;
    const same = JSON.stringify(sliced.getChild('id')?.toArray()) === JSON.stringify(whole.getChild('id')?.toArray());
    reader.dispose();
    return { slices, rows: sliced.numRows, same };
  });
  expect(result.slices).toBeGreaterThan(0);
  expect(result.rows).toBe(7300);
  expect(result.same).toBe(true);
});

test('range requests work from a Worker scope too', async ({ harness }) => {
  const result = await harness.evaluate(() =>
    window.harness.openInWorker('/data/alltypes_tiny_pages.parquet', ['id', 'string_col']),
  );
  expect(result.rows).toBe(7300);
  expect(result.requests).toBeGreaterThanOrEqual(2);
});

test('nested column paths project nested fields', async ({ harness }) => {
  const result = await harness.evaluate(async () => {
    const { skim } = window.harness;
    const reader = await skim.createReader({ workers: 1 });
    const file = await reader.open('/data/nested_structs.rust.parquet');
    const root = file.schema.fields.find((f) => f.type.children?.length > 0);
    if (root === undefined) throw new Error('no struct column');
    const child = root.type.children[0].name as string;
    const table = await file.scan({ columns: [`${root.name}.${child}`] }).toTable();
    const field = table.schema.fields[0];
    reader.dispose();
    return {
      root: root.name,
      child,
      names: table.schema.fields.map((f) => f.name),
      children: field?.type.children.map((c: { name: string }) => c.name),
      rows: table.numRows,
      fileRows: file.metadata.numRows,
    };
  });
  expect(result.names).toEqual([result.root]);
  expect(result.children).toEqual([result.child]);
  expect(result.rows).toBe(result.fileRows);
});

test('errors from Rust reach the page as typed errors, from the main thread and from workers', async ({ harness }) => {
  const result = await harness.evaluate(async () => {
    const { skim, describeError } = window.harness;
    const reader = await skim.createReader({ workers: 2, inlineTaskBytes: 0 });
    const outcomes: Record<string, ReturnType<typeof describeError>> = {};
    const capture = async (name: string, work: () => Promise<unknown>) => {
      try {
        await work();
        outcomes[name] = { name: 'none', code: null, message: 'no error', file: null, isSkimError: false };
      } catch (error) {
        outcomes[name] = describeError(error);
      }
    };
    await capture('notParquet', () => reader.open('/data/README.md'));
    await capture('missing', () => reader.open('/data/no-such-file.parquet'));
    const good = await reader.open('/data/alltypes_tiny_pages.parquet');
    await capture('unknownColumn', async () => good.scan({ columns: ['strng_col'] }));
    // Corrupt the data pages but keep the footer: opening works, decoding (in a worker) fails.
    const bytes = new Uint8Array(await (await fetch('/data/alltypes_tiny_pages.parquet')).arrayBuffer());
    const firstChunk = good.metadata.rowGroups[0]?.columns[0];
    if (firstChunk === undefined) throw new Error('no column chunk');
    bytes.fill(0xff, firstChunk.start, firstChunk.end);
    const corrupt = await reader.open(bytes);
    await capture('corruptPages', () => corrupt.scan().toTable());
    // The pool survives and the next scan works.
    const after = await good.scan({ columns: ['id'] }).toTable();
    const out = { outcomes, workersAfter: reader.workerCount, rowsAfter: after.numRows };
    reader.dispose();
    return out;
  });
  const { outcomes } = result;
  console.log('\ntyped errors:');
  for (const [name, e] of Object.entries(outcomes))
    console.log(`  ${name.padEnd(14)} ${e.name} ${e.code}: ${e.message}`);
  expect(outcomes.notParquet).toMatchObject({ name: 'ParquetSkimError', code: 'INVALID_FILE', isSkimError: true });
  expect(outcomes.missing).toMatchObject({ name: 'ParquetSkimError', code: 'HTTP_STATUS', isSkimError: true });
  expect(outcomes.missing?.message).toContain('404');
  expect(outcomes.unknownColumn).toMatchObject({ code: 'UNKNOWN_COLUMN', isSkimError: true });
  expect(outcomes.unknownColumn?.message).toContain("did you mean 'string_col'");
  expect(outcomes.corruptPages).toMatchObject({ name: 'ParquetSkimError', code: 'INVALID_FILE', isSkimError: true });
  expect(result.workersAfter).toBe(2);
  expect(result.rowsAfter).toBe(7300);
});

test('warmUp: each worker and the page run the core over its embedded file first; answers unchanged', async ({
  harness,
}) => {
  const result = await harness.evaluate(async () => {
    const { skim } = window.harness;
    const read = async (warmUp: boolean) => {
      const reader = await skim.createReader({ workers: 2, warmUp });
      await reader.ready;
      // Both passes run as soon as their thread is idle.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const file = await reader.open('/sample/lineitem-sf1.parquet');
      const table = await file.scan({ columns: ['l_orderkey', 'l_comment'], limit: 50 }).toTable();
      const stats = reader.stats();
      reader.dispose();
      return {
        rows: table.numRows,
        keys: Array.from(table.getChild('l_orderkey')?.toArray() ?? [], Number),
        workersWarmed: stats.workers.warmedAt.length,
        pageWarmed: stats.startup.warmedAt !== null,
      };
    };
    return { warm: await read(true), cold: await read(false) };
  });
  expect(result.warm.workersWarmed).toBe(2);
  expect(result.warm.pageWarmed).toBe(true);
  expect(result.cold.workersWarmed).toBe(0);
  expect(result.cold.pageWarmed).toBe(false);
  expect(result.warm.rows).toBe(50);
  expect(result.warm.keys).toEqual(result.cold.keys);
});

test('a small first query is decoded on the page while no worker is ready; the workers start after it; later small queries stay on the page unless inlineScanBytes is 0', async ({
  harness,
}) => {
  const results = await harness.evaluate(async () => {
    const { skim } = window.harness;
    const run = async (options: { inlineScanBytes?: number }) => {
      const reader = await skim.createReader({ workers: 2, ...options });
      const file = await reader.open('/sample/lineitem-sf1.parquet');
      const before = reader.stats().workers;
      const first = await file.scan({ columns: ['l_orderkey', 'l_comment'], limit: 100 }).toTable();
      const onPage = reader.stats().workers.tasksOnPage;
      // Started after the first answer, in the time the user looks at it.
      for (let i = 0; i < 100 && reader.stats().workers.ready < 2; i++) await new Promise((r) => setTimeout(r, 50));
      const second = await file.scan({ columns: ['l_orderkey', 'l_comment'], offset: 100, limit: 100 }).toTable();
      const after = reader.stats().workers;
      reader.dispose();
      return {
        startedBefore: before.started,
        onPage,
        ready: after.ready,
        onPageAfter: after.tasksOnPage,
        keys: [
          ...Array.from(first.getChild('l_orderkey')?.toArray() ?? [], Number),
          ...Array.from(second.getChild('l_orderkey')?.toArray() ?? [], Number),
        ],
      };
    };
    return { small: await run({}), off: await run({ inlineScanBytes: 0 }) };
  });
  // With inlineScanBytes 0 every scan counts as bulk and starts the workers when it is planned, so
  // its first task may find one ready already: on the page or not, it is answered the same.
  expect(results.small.onPage).toBe(1);
  expect(results.off.onPage).toBeLessThanOrEqual(1);
  for (const result of [results.small, results.off]) {
    expect(result.startedBefore).toBe(0);
    expect(result.ready).toBe(2);
    expect(result.keys).toHaveLength(200);
    expect(result.keys).toEqual([...result.keys].sort((a, b) => a - b));
  }
  // Workers ready: the second small query stays on the page by default, and goes to a worker with
  // inlineScanBytes 0.
  expect(results.small.onPageAfter).toBe(2);
  expect(results.off.onPageAfter).toBe(results.off.onPage);
});

test('a bulk scan of small tasks from bytes in memory goes to the workers once they are ready', async ({ harness }) => {
  // SF1 in memory, two columns: 6 tasks of ~2.4 MB, each small enough for the page, the scan
  // too big (it starts the workers). The page decodes tasks while the workers start; it used to
  // go on doing so for good: from bytes in memory nothing but its own decoding ran on the page's
  // thread (promises, `scheduler.yield()`), so the workers' `ready` was never handled. The
  // scans follow each other with no timer between them, as an app's loop would.
  const result = await harness.evaluate(async () => {
    const { skim } = window.harness;
    const bytes = new Uint8Array(await (await fetch('/sample/lineitem-sf1.parquet')).arrayBuffer());
    const reader = await skim.createReader({ workers: 2 });
    const file = await reader.open(bytes);
    const scans: { tasks: number; onPage: number; rows: number; firsts: string }[] = [];
    for (let i = 0; i < 40; i++) {
      const before = reader.stats().workers.tasksOnPage;
      const scan = file.scan({ columns: ['l_orderkey', 'l_quantity'] });
      let rows = 0;
      // Each batch's first key, in the order the batches came.
      const firsts: string[] = [];
      for await (const batch of scan) {
        rows += batch.numRows;
        firsts.push(String(batch.getChild('l_orderkey')?.get(0)));
      }
      const onPage = reader.stats().workers.tasksOnPage - before;
      scans.push({ tasks: scan.stats.tasksTotal, onPage, rows, firsts: firsts.join(',') });
      if (scans.at(-1)?.onPage === 0) break;
    }
    const ready = reader.stats().workers.ready;
    reader.dispose();
    return { scans, ready };
  });
  const [first] = result.scans;
  expect(first?.tasks).toBeGreaterThanOrEqual(6);
  expect(first?.rows).toBe(6_001_215);
  for (const scan of result.scans) expect(scan).toMatchObject({ rows: first?.rows, firsts: first?.firsts });
  // The workers got ready and took over the scan's tasks.
  expect(result.ready).toBeGreaterThanOrEqual(1);
  expect(result.scans.at(-1)?.onPage).toBe(0);
});

test('a one-row-group file with no offset index, split across the workers, reads each column chunk once', async ({
  harness,
}) => {
  // pyarrow's write_table defaults (tests/dataset/write_datasets.py): the row group's tasks
  // cannot read less than whole chunks, and used to fetch them each (4 tasks: 4 times).
  const reference = JSON.parse(readFileSync(path.join(cacheDir, 'data/datasets/single/reference.json'), 'utf8')) as {
    rows: number;
    sumId: number;
    cheap: { rows: number; sumId: number };
  };
  const result = await harness.evaluate(async () => {
    const { skim } = window.harness;
    // The gap pinned: on a link measured fast the `value` chunk between `id` and `name` could be
    // read through (coalesce.ts), and this test counts each chunk's bytes.
    const reader = await skim.createReader({
      workers: 2,
      inlineTaskBytes: 0,
      inlineScanBytes: 0,
      coalesceGapBytes: 64 * 1024,
    });
    const file = await reader.open('/sample/datasets/single/one-row-group.parquet');
    const chunk = (name: string) =>
      file.metadata.rowGroups[0]?.columns.find((c) => c.path === name)?.compressedSize ?? -1;
    const sum = (table: { getChild(name: string): Iterable<unknown> | null }) => {
      let total = 0;
      for (const id of table.getChild('id') ?? []) total += Number(id);
      return total;
    };
    const whole = file.scan({ columns: ['id', 'name'] });
    const wholeTable = await whole.toTable();
    const cheap = file.scan({ columns: ['id'], filter: 'value < 0.25' });
    const cheapTable = await cheap.toTable();
    // The gap left to the link: the chunk between may be read through, and the stats say so.
    const measured = await skim.createReader({ workers: 2, inlineTaskBytes: 0, inlineScanBytes: 0 });
    const measuredFile = await measured.open('/sample/datasets/single/one-row-group.parquet');
    const linked = measuredFile.scan({ columns: ['id', 'name'] });
    const linkedRows = (await linked.toTable()).numRows;
    const { bytesFetched, bytesReadThrough, gapBytes, linkBytesPerMs } = linked.stats;
    measured.dispose();
    const out = {
      linked: { rows: linkedRows, bytesFetched, bytesReadThrough, gapBytes, linkBytesPerMs },
      pageIndex: file.metadata.hasPageIndex,
      rowGroups: file.metadata.rowGroups.length,
      chunks: { id: chunk('id'), value: chunk('value'), name: chunk('name') },
      whole: { rows: wholeTable.numRows, sumId: sum(wholeTable), ...pick(whole.stats) },
      cheap: { rows: cheapTable.numRows, sumId: sum(cheapTable), ...pick(cheap.stats) },
    };
    reader.dispose();
    return out;
    function pick(s: {
      tasksTotal: number;
      bytesFetched: number;
      bytesFetchedFilter: number;
      bytesPlanned: number;
      bytesReadThrough: number;
    }) {
      return {
        readThrough: s.bytesReadThrough,
        tasks: s.tasksTotal,
        fetched: s.bytesFetched,
        fetchedFilter: s.bytesFetchedFilter,
        planned: s.bytesPlanned,
      };
    }
  });
  expect(result.pageIndex).toBe(false);
  expect(result.rowGroups).toBe(1);
  const { id, value, name } = result.chunks;
  // Unfiltered: every task lists both whole chunks; they are fetched once.
  expect(result.whole.tasks).toBeGreaterThanOrEqual(2);
  expect(result.whole).toMatchObject({ rows: reference.rows, sumId: reference.sumId });
  expect(result.whole.fetched).toBe(id + name);
  expect(result.whole.planned).toBe(id + name);
  // Filtered: the filter chunk once (phase 1), the output chunk once (phase 2, asked by each task).
  expect(result.cheap.tasks).toBeGreaterThanOrEqual(2);
  expect(result.cheap).toMatchObject({ rows: reference.cheap.rows, sumId: reference.cheap.sumId });
  expect(result.cheap.fetchedFilter).toBe(value);
  expect(result.cheap.fetched).toBe(value + id);
  // Pinned, nothing was read through; with the gap measured, only the `value` chunk could be.
  expect(result.whole.readThrough).toBe(0);
  const { linked } = result;
  expect(linked.rows).toBe(reference.rows);
  expect(linked.bytesFetched - linked.bytesReadThrough).toBe(id + name);
  expect([0, value]).toContain(linked.bytesReadThrough);
  expect(linked.gapBytes).toBeGreaterThanOrEqual(64 * 1024);
  if (linked.bytesReadThrough > 0) expect(linked.gapBytes).toBeGreaterThanOrEqual(value);
  // The other reader's footer read and scans came from this origin first: the link was measured.
  expect(linked.linkBytesPerMs).toBeGreaterThan(0);
});
