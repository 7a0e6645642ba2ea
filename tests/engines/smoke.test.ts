/**
 * The main paths in all three engines — Chromium, Firefox ESR and WebKit (Safari's engine), each
 * the Debian build driven as tests/support/engines.mjs says: open a URL, read its first rows, a
 * filtered scan, and an abort — a lookup reading several ranges in one request (its answer in
 * `multipart/byteranges` parts), a dataset of three files (a filtered scan, a count), and memory
 * running out (`OUT_OF_MEMORY`, not a bare trap) — through
 * the package as the test harness page bundles it (Web Workers, WebAssembly, range requests to the
 * real range server). Each engine's rows must equal the same reads done in Node.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createReader } from 'parquet-skim';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RangeServer, startRangeServer } from '../server/range-server.mjs';
import { ENGINES, launchEngine } from '../support/engines.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../..');
const FILE = 'alltypes_tiny_pages.parquet';
/** Three files of one schema (Impala's alltypes, plain, snappy and dictionary-encoded): a dataset. */
const DATASET = ['alltypes_plain.parquet', 'alltypes_plain.snappy.parquet', 'alltypes_dictionary.parquet'];
const DATASET_FILTER = 'id < 5 AND bool_col = true';
/**
 * A lookup whose row's pages lie in 11 columns ~74 KB apart, past a 64 KiB tail read: several
 * ranges in one request, answered with parts by the range server (as by nginx).
 */
const LOOKUP = { file: 'alltypes_tiny_pages_plain.parquet', filter: 'id = 3650', open: { footerReadBytes: 65536 } };

/** What each engine reports; runs in the page (serialized: no closures). */
async function mainPaths({
  url,
  dataset: datasetUrls,
  datasetFilter,
  lookup,
}: {
  url: string;
  dataset: string[];
  datasetFilter: string;
  lookup: { url: string; filter: string; open: { footerReadBytes: number } };
}) {
  const { skim } = (window as unknown as { harness: { skim: typeof import('parquet-skim') } }).harness;
  // inlineScanBytes 0: the queries after the first go to the workers (queries this small would
  // otherwise stay on the page once the workers are ready), so each engine runs both paths.
  const reader = await skim.createReader({ workers: 2, inlineScanBytes: 0 });
  try {
    const file = await reader.open(url);
    // A small first query: decoded on the page; the workers start after it.
    const first = await file.scan({ columns: ['id', 'string_col'], limit: 10 }).toTable();
    for (let i = 0; i < 200 && reader.stats().workers.ready === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const filtered = await file.scan({ columns: ['id'], filter: 'id < 100 AND bool_col = true' }).toTable();
    const controller = new AbortController();
    const aborted = file.scan({ signal: controller.signal }).toTable();
    controller.abort();
    const abortError = await aborted.then(
      () => 'no error',
      (e: { name?: string }) => e.name ?? 'unknown',
    );
    const dataset = await reader.openDataset(datasetUrls);
    const datasetTable = await dataset.scan({ columns: ['id'], filter: datasetFilter }).toTable();
    // With a filter: the files' pages are decoded (without one, the footers answer).
    const datasetCount = await dataset.count({ filter: datasetFilter });
    // No room for any footer: each file is closed behind the scan (in the workers too) and
    // opened again by the count.
    const bounded = await reader.openDataset(datasetUrls, { footerMemoryBytes: 1 });
    const boundedTable = await bounded.scan({ columns: ['id'], filter: datasetFilter }).toTable();
    const boundedCount = await bounded.count({ filter: datasetFilter });
    const lookupFile = await reader.open(lookup.url, lookup.open);
    const lookupTable = await lookupFile.scan({ columns: ['id', 'string_col'], filter: lookup.filter }).toTable();
    const result = {
      rows: file.metadata.numRows,
      firstIds: Array.from(first.getChild('id')?.toArray() ?? [], Number),
      firstStrings: Array.from(first.getChild('string_col')?.toArray() ?? [], String),
      filteredIds: Array.from(filtered.getChild('id')?.toArray() ?? [], Number),
      abortError,
      datasetIds: Array.from(datasetTable.getChild('id')?.toArray() ?? [], Number),
      datasetCount,
      bounded: {
        ids: Array.from(boundedTable.getChild('id')?.toArray() ?? [], Number),
        count: boundedCount,
        memoryBytes: bounded.memoryBytes,
      },
      lookup: [
        ...Array.from(lookupTable.getChild('id')?.toArray() ?? [], Number),
        ...Array.from(lookupTable.getChild('string_col')?.toArray() ?? [], String),
      ],
      /** Its requests that asked for several ranges and got them as parts. */
      lookupParts: lookupFile.requestLog().filter((e) => (e.parts ?? 0) > 1 && e.note === undefined).length,
      workers: reader.stats().workers.ready,
      onPage: reader.stats().workers.tasksOnPage,
      // The build this engine gets (JavaScriptCore: without SIMD), and the one it fetched.
      wasmBuild: reader.stats().startup.wasmBuild,
      wasmFetched: performance
        .getEntriesByType('resource')
        .map((e) => new URL(e.name).pathname.split('/').pop() ?? '')
        .filter((name) => name.endsWith('.wasm')),
    };
    // Memory running out reads as such (the trap's cause taken from the core), in this engine
    // too: 100 names of the file, every footer held, where the page's core may have 32 MiB. Last,
    // as the limit stays on the page's instance.
    const limited = await skim.createReader({ workers: 0, memoryLimitBytes: 32 * 2 ** 20 });
    const copies = Array.from({ length: 100 }, (_, i) => `${url}?copy=${i}`);
    let outOfMemory = 'no error';
    try {
      const all = await limited.openDataset(copies, { footerMemoryBytes: 2 ** 40 });
      await all.count({ filter: datasetFilter });
    } catch (e) {
      outOfMemory = (e as { code?: string }).code ?? 'untyped';
    }
    limited.dispose();
    return { ...result, outOfMemory };
  } finally {
    reader.dispose();
  }
}

let server: RangeServer;
let expected: Omit<
  Awaited<ReturnType<typeof mainPaths>>,
  'workers' | 'onPage' | 'bounded' | 'outOfMemory' | 'wasmBuild' | 'wasmFetched' | 'lookupParts'
>;

beforeAll(async () => {
  server = await startRangeServer({
    mounts: {
      '/': path.join(repo, 'tests/.cache/harness'),
      '/data/': path.resolve(repo, '../shared/parquet-testing/data'),
    },
  });
  // The same reads in Node, from the same server.
  const reader = await createReader();
  const file = await reader.open(`${server.url}/data/${FILE}`);
  const first = await file.scan({ columns: ['id', 'string_col'], limit: 10 }).toTable();
  const filtered = await file.scan({ columns: ['id'], filter: 'id < 100 AND bool_col = true' }).toTable();
  const dataset = await reader.openDataset(DATASET.map((f) => `${server.url}/data/${f}`));
  const datasetTable = await dataset.scan({ columns: ['id'], filter: DATASET_FILTER }).toTable();
  const lookupFile = await reader.open(`${server.url}/data/${LOOKUP.file}`, LOOKUP.open);
  const lookupTable = await lookupFile.scan({ columns: ['id', 'string_col'], filter: LOOKUP.filter }).toTable();
  expected = {
    rows: file.metadata.numRows,
    firstIds: Array.from(first.getChild('id')?.toArray() ?? [], Number),
    firstStrings: Array.from(first.getChild('string_col')?.toArray() ?? [], String),
    filteredIds: Array.from(filtered.getChild('id')?.toArray() ?? [], Number),
    abortError: 'AbortError',
    datasetIds: Array.from(datasetTable.getChild('id')?.toArray() ?? [], Number),
    datasetCount: await dataset.count({ filter: DATASET_FILTER }),
    lookup: [
      ...Array.from(lookupTable.getChild('id')?.toArray() ?? [], Number),
      ...Array.from(lookupTable.getChild('string_col')?.toArray() ?? [], String),
    ],
  };
  reader.dispose();
});

afterAll(() => server.close());

describe('the main paths in every engine', () => {
  for (const name of ENGINES) {
    it(`${name}: open, first rows, a filter, an abort, a lookup in one request, a dataset, memory running out`, {
      timeout: 180_000,
    }, async () => {
      const engine = await launchEngine(name);
      try {
        const page = await engine.open(`${server.url}/`);
        try {
          await page.waitFor('body[data-ready=true]');
          const result = await page.evaluate(mainPaths, {
            url: `${server.url}/data/${FILE}`,
            dataset: DATASET.map((f) => `${server.url}/data/${f}`),
            datasetFilter: DATASET_FILTER,
            lookup: { url: `${server.url}/data/${LOOKUP.file}`, filter: LOOKUP.filter, open: LOOKUP.open },
          });
          console.log(`${engine.version}: ${JSON.stringify({ ...result, firstStrings: undefined })}`);
          // The first query on the page, the others in workers.
          expect(result.onPage).toBe(1);
          expect(result.workers).toBeGreaterThan(0);
          expect({
            ...result,
            workers: undefined,
            onPage: undefined,
            bounded: undefined,
            outOfMemory: undefined,
            wasmBuild: undefined,
            wasmFetched: undefined,
            lookupParts: undefined,
          }).toEqual({
            ...expected,
            workers: undefined,
            onPage: undefined,
            bounded: undefined,
            outOfMemory: undefined,
          });
          expect(result.outOfMemory).toBe('OUT_OF_MEMORY');
          // The lookup's pages came as parts of one request (several ranges asked at once).
          expect(result.lookupParts).toBeGreaterThan(0);
          expect(expected.lookup).toHaveLength(2);
          const build = name === 'webkit' ? 'no-simd' : 'simd';
          expect(result.wasmBuild).toBe(build);
          expect(result.wasmFetched).toHaveLength(1);
          expect(result.wasmFetched[0]).toMatch(
            build === 'simd' ? /^parquet_skim_wasm_simd_bg/ : /^parquet_skim_wasm_bg/,
          );
          // The same dataset within footerMemoryBytes: the same answers, no file left open.
          expect(result.bounded).toEqual({ ids: expected.datasetIds, count: expected.datasetCount, memoryBytes: 0 });
          expect(expected.filteredIds.length).toBeGreaterThan(0);
          expect(expected.datasetIds.length).toBeGreaterThan(0);
          expect(expected.datasetCount).toBe(expected.datasetIds.length);
        } finally {
          await page.close();
        }
      } finally {
        await engine.close();
      }
    });
  }
});
